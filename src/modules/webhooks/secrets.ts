import type { Db, Deps, Tx } from '../../database.ts'
import { assert } from '../../platform/assert.ts'
import { decryptWithAny, encrypt } from '../../platform/crypto.ts'
import {
  keyRing,
  reencryptSealedRows,
  ringKeys,
  type ReencryptionReport,
  type SealedRow,
} from '../../platform/key-rotation.ts'
import { newWebhookSecret } from './signing.ts'
import * as repo from './webhooks.repository.ts'
import type { EndpointRow } from './webhooks.table.ts'

// Signing secrets at rest: encrypted under the master key (signing needs the secret itself,
// so it cannot be hashed), decrypted only to sign a delivery. Readers try the current master
// key, then KURUS_MASTER_KEY_PREVIOUS (a rotation in progress).

function open(deps: Pick<Deps, 'config'>, envelope: string, aad: string): string {
  return decryptWithAny(ringKeys(keyRing(deps.config)), envelope, aad).toString('utf8')
}

/** The ciphertext's additional data binds a secret to its endpoint row. */
export function endpointSecretAad(endpointId: string): string {
  return `webhook-endpoint:${endpointId}`
}

function storeSecretAad(storeId: string): string {
  return `webhook-callback:${storeId}`
}

/** The secrets that sign a delivery to this endpoint now: current, plus the rotated-out one. */
export function endpointSigningSecrets(deps: Deps, row: EndpointRow, now: Date): string[] {
  const aad = endpointSecretAad(row.id)
  const secrets = [open(deps, row.secret_enc, aad)]
  if (
    row.previous_secret_enc !== null &&
    row.previous_secret_expires_at !== null &&
    row.previous_secret_expires_at > now
  ) {
    secrets.push(open(deps, row.previous_secret_enc, aad))
  }
  return secrets
}

/**
 * The store's secret for deliveries to a session's callbackUrl (there is no endpoint to
 * own one), created on first use.
 */
export async function storeCallbackSecret(
  deps: Deps,
  runner: Tx | Db,
  merchantId: string,
  storeId: string,
): Promise<string> {
  let row = await repo.findStoreSecret(runner, storeId)
  if (!row) {
    await repo.insertStoreSecretIfAbsent(runner, {
      store_id: storeId,
      merchant_id: merchantId,
      secret_enc: encrypt(deps.config.masterKey, newWebhookSecret(), storeSecretAad(storeId)),
      created_at: deps.clock.now(),
    })
    row = await repo.findStoreSecret(runner, storeId)
  }
  assert(row && row.merchant_id === merchantId, 'callback secret belongs to the store merchant')
  return open(deps, row.secret_enc, storeSecretAad(storeId))
}

function endpointSecretsRow(row: repo.EndpointSecrets): SealedRow {
  const aad = endpointSecretAad(row.id)
  return {
    key: row.id,
    fields: [
      { envelope: row.secret_enc, aad },
      { envelope: row.previous_secret_enc, aad },
    ],
  }
}

function storeSecretRow(row: { store_id: string; secret_enc: string }): SealedRow {
  return {
    key: row.store_id,
    fields: [{ envelope: row.secret_enc, aad: storeSecretAad(row.store_id) }],
  }
}

/**
 * Master-key rotation: re-encrypts every endpoint's signing secrets (current and rotated-out,
 * deleted endpoints too) and every store's callback secret still sealed under a previous
 * master key under the current one. Idempotent, restartable, safe while serving: signers read
 * through the key ring, and a row is written only if its secrets are still the ones read (a
 * concurrent secret rotation is never lost; the row is read again).
 */
export async function reencryptWebhookSecrets(
  deps: Pick<Deps, 'db' | 'config'>,
  batchSize = 500,
): Promise<ReencryptionReport> {
  const ring = keyRing(deps.config)
  const endpoints = await reencryptSealedRows(
    ring,
    {
      page: async (after, limit) =>
        (await repo.findEndpointSecretsAfter(deps.db, after, limit)).map(endpointSecretsRow),
      reload: async (id) => {
        const row = await repo.findEndpointSecrets(deps.db, id)
        return row && endpointSecretsRow(row)
      },
      update: async (row, [secret, previous]) => {
        const [from, fromPrevious] = row.fields
        if (typeof from?.envelope !== 'string' || typeof secret !== 'string') return false
        return repo.updateEndpointSecretsIfUnchanged(
          deps.db,
          {
            id: row.key,
            secret_enc: from.envelope,
            previous_secret_enc: fromPrevious?.envelope ?? null,
          },
          { secret_enc: secret, previous_secret_enc: previous ?? null },
        )
      },
    },
    batchSize,
  )
  const stores = await reencryptSealedRows(
    ring,
    {
      page: async (after, limit) =>
        (await repo.findStoreSecretsAfter(deps.db, after, limit)).map(storeSecretRow),
      reload: async (storeId) => {
        const row = await repo.findStoreSecret(deps.db, storeId)
        return row && storeSecretRow(row)
      },
      update: async (row, [to]) => {
        const from = row.fields[0]?.envelope
        if (typeof from !== 'string' || typeof to !== 'string') return false
        return repo.updateStoreSecretIfUnchanged(deps.db, row.key, from, to)
      },
    },
    batchSize,
  )
  return {
    scanned: endpoints.scanned + stores.scanned,
    reencrypted: endpoints.reencrypted + stores.reencrypted,
    unreadable: endpoints.unreadable + stores.unreadable,
  }
}
