import type { Db, Deps, Tx } from '../../database.ts'
import { assert } from '../../platform/assert.ts'
import { decrypt, encrypt } from '../../platform/crypto.ts'
import { newWebhookSecret } from './signing.ts'
import * as repo from './webhooks.repository.ts'
import type { EndpointRow } from './webhooks.table.ts'

// Signing secrets at rest: encrypted under the master key (signing needs the secret itself,
// so it cannot be hashed), decrypted only to sign a delivery.

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
  const secrets = [decrypt(deps.config.masterKey, row.secret_enc, aad).toString('utf8')]
  if (
    row.previous_secret_enc !== null &&
    row.previous_secret_expires_at !== null &&
    row.previous_secret_expires_at > now
  ) {
    secrets.push(decrypt(deps.config.masterKey, row.previous_secret_enc, aad).toString('utf8'))
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
  return decrypt(deps.config.masterKey, row.secret_enc, storeSecretAad(storeId)).toString('utf8')
}
