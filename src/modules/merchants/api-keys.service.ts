import type { Deps, Tx } from '../../database.ts'
import { decryptWithAny, encrypt, randomToken } from '../../platform/crypto.ts'
import { transact } from '../../platform/db/transaction.ts'
import {
  keyRing,
  reencryptSealedRows,
  ringKeys,
  type ReencryptionReport,
  type SealedRow,
} from '../../platform/key-rotation.ts'
import { newId } from '../../platform/ids.ts'
import { merchantsError } from './merchants.errors.ts'
import * as repo from './merchants.repository.ts'
import { announceMerchantChange, cached, forgetMerchant } from './merchants.cache.ts'
import type { KycStatus, SubjectScope } from './merchants.table.ts'

// API keys: issuing, rolling and revoking key pairs, the short-lived cache of usable keys on the
// signed path, and the re-encryption of their sealed secrets during a master-key rotation.

/** Secret keys are sealed under the master key; during a rotation, also under a previous one. */
export function masterKeys(deps: Pick<Deps, 'config'>): readonly Buffer[] {
  return ringKeys(keyRing(deps.config))
}

function apiKeySecretRow(row: { id: string; secret_enc: string }): SealedRow {
  return { key: row.id, fields: [{ envelope: row.secret_enc, aad: row.id }] }
}

/**
 * Master-key rotation: re-encrypts every API key's secret (revoked and rolled keys too) still
 * sealed under a previous master key under the current one. Idempotent, restartable, safe
 * while serving (readers try every key of the ring; updates are conditional).
 */
export async function reencryptApiKeySecrets(
  deps: Pick<Deps, 'db' | 'config'>,
  batchSize = 500,
): Promise<ReencryptionReport> {
  return reencryptSealedRows(
    keyRing(deps.config),
    {
      page: async (after, limit) =>
        (await repo.findApiKeySecretsAfter(deps.db, after, limit)).map(apiKeySecretRow),
      reload: async (id) => {
        const row = await repo.findApiKeySecret(deps.db, id)
        return row && apiKeySecretRow(row)
      },
      update: async (row, [to]) => {
        const from = row.fields[0]?.envelope
        if (typeof from !== 'string' || typeof to !== 'string') return false
        return repo.updateApiKeySecretIfUnchanged(deps.db, row.key, from, to)
      },
    },
    batchSize,
  )
}

export interface IssuedKey {
  apiKeyId: string
  publicKey: string
  secretKey: string
}

export async function issueKey(
  deps: Deps,
  tx: Tx,
  subject: {
    merchantId: string
    storeId: string | null
    submerchantId: string | null
    scope: SubjectScope
  },
): Promise<IssuedKey> {
  const id = newId('key')
  const env = deps.config.env
  const publicKey = `pk_${env}_${randomToken(18)}`
  const secretKey = `sk_${env}_${randomToken(32)}`
  await repo.insertApiKey(tx, {
    id,
    merchant_id: subject.merchantId,
    store_id: subject.storeId,
    submerchant_id: subject.submerchantId,
    subject_scope: subject.scope,
    env,
    public_key: publicKey,
    // HMAC verification needs the secret itself, so it is encrypted, not hashed; the AAD
    // binds the ciphertext to this key id.
    secret_enc: encrypt(deps.config.masterKey, secretKey, id),
    status: 'active',
    expires_at: null,
    rolled_to: null,
    created_at: deps.clock.now(),
    revoked_at: null,
  })
  return { apiKeyId: id, publicKey, secretKey }
}

export interface AuthKey {
  apiKeyId: string
  merchantId: string
  storeId: string | null
  submerchantId: string | null
  scope: SubjectScope
  env: 'demo' | 'live'
  secretKey: string
  kycStatus: KycStatus
}

/**
 * The key the gateway authenticates with, or undefined when it is unknown, revoked, or
 * rolled and past its grace period. The secret is decrypted here for the HMAC check; key and
 * secret are cached in process (merchants.cache.ts says how changes reach every process).
 * Unknown keys are not cached: random garbage must not fill the cache.
 */
export async function findUsableKey(deps: Deps, publicKey: string): Promise<AuthKey | undefined> {
  const key = await cached(deps, 'keys', publicKey, async () => {
    const row = await repo.findApiKeyByPublicKey(deps.db, publicKey)
    if (row?.status !== 'active') return undefined
    const value = {
      apiKeyId: row.id,
      merchantId: row.merchant_id,
      storeId: row.store_id,
      submerchantId: row.submerchant_id,
      scope: row.subject_scope,
      env: row.env,
      secretKey: decryptWithAny(masterKeys(deps), row.secret_enc, row.id).toString('utf8'),
      kycStatus: row.kyc_status,
      expiresAt: row.expires_at,
    }
    return { value, merchantId: row.merchant_id }
  })
  if (!key) return undefined
  if (key.expiresAt && key.expiresAt.getTime() <= deps.clock.now().getTime()) return undefined
  const { expiresAt, ...auth } = key
  return auth
}

/** Issues a replacement key; the old one keeps working for the configured grace period. */
export async function rollApiKey(
  deps: Deps,
  merchantId: string,
  keyId: string,
): Promise<IssuedKey & { previousExpiresAt: Date }> {
  const rolled = await transact(deps.db, async (tx) => {
    const old = await repo.lockApiKeyById(tx, merchantId, keyId)
    if (!old) throw merchantsError('api_key_not_found')
    if (old.status !== 'active' || old.rolled_to) throw merchantsError('api_key_revoked')
    const fresh = await issueKey(deps, tx, {
      merchantId,
      storeId: old.store_id,
      submerchantId: old.submerchant_id,
      scope: old.subject_scope,
    })
    const expiresAt = new Date(deps.clock.now().getTime() + deps.config.keyRollGraceSeconds * 1000)
    await repo.updateApiKeyRolled(tx, keyId, expiresAt, fresh.apiKeyId)
    await announceMerchantChange(tx, merchantId)
    return { ...fresh, previousExpiresAt: expiresAt }
  })
  forgetMerchant(deps, merchantId)
  return rolled
}

export async function revokeApiKey(deps: Deps, merchantId: string, keyId: string): Promise<void> {
  await transact(deps.db, async (tx) => {
    const old = await repo.lockApiKeyById(tx, merchantId, keyId)
    if (!old) throw merchantsError('api_key_not_found')
    await repo.updateApiKeyRevoked(tx, keyId, deps.clock.now())
    await announceMerchantChange(tx, merchantId)
  })
  forgetMerchant(deps, merchantId)
}

export interface ApiKeySummary {
  apiKeyId: string
  publicKey: string
  storeId: string | null
  submerchantId: string | null
  subjectScope: SubjectScope
  status: 'active' | 'revoked' | 'expired'
  expiresAt: Date | null
  createdAt: Date
}

export async function listApiKeys(deps: Deps, merchantId: string): Promise<ApiKeySummary[]> {
  const rows = await repo.findApiKeysByMerchant(deps.db, merchantId)
  const now = deps.clock.now().getTime()
  return rows.map((r) => ({
    apiKeyId: r.id,
    publicKey: r.public_key,
    storeId: r.store_id,
    submerchantId: r.submerchant_id,
    subjectScope: r.subject_scope,
    status:
      r.status === 'revoked'
        ? 'revoked'
        : r.expires_at && r.expires_at.getTime() <= now
          ? 'expired'
          : 'active',
    expiresAt: r.expires_at,
    createdAt: r.created_at,
  }))
}

/** Decrypts a key's secret for the operator's demo printout; never exposed over HTTP. */
export async function revealDemoCredentials(
  deps: Deps,
): Promise<
  { merchantId: string; storeId: string; publicKey: string; secretKey: string } | undefined
> {
  const merchant = await repo.findOldestMerchant(deps.db)
  if (!merchant) return undefined
  const keys = await repo.findApiKeysByMerchant(deps.db, merchant.id)
  const key = keys.find((k) => k.status === 'active' && !k.rolled_to && k.store_id)
  if (!key?.store_id) return undefined
  return {
    merchantId: merchant.id,
    storeId: key.store_id,
    publicKey: key.public_key,
    secretKey: decryptWithAny(masterKeys(deps), key.secret_enc, key.id).toString('utf8'),
  }
}

/** Issues another key pair for one of the merchant's stores (the dashboard's "new key"). */
export async function createStoreKey(
  deps: Deps,
  merchantId: string,
  storeId: string,
): Promise<IssuedKey> {
  const store = await repo.findStoreById(deps.db, merchantId, storeId)
  if (!store) throw merchantsError('store_not_found')
  return transact(deps.db, (tx) =>
    issueKey(deps, tx, { merchantId, storeId, submerchantId: null, scope: 'merchant' }),
  )
}
