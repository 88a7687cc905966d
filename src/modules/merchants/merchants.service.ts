import { hkdfSync } from 'node:crypto'
import { isValidIBAN, electronicFormatIBAN } from 'ibantools'
import type { Deps, Tx } from '../../database.ts'
import {
  decryptWithAny,
  encrypt,
  hashPassword,
  passwordHashCost,
  hmacSha256Hex,
  randomToken,
  verifyPassword,
} from '../../platform/crypto.ts'
import { transact } from '../../platform/db/transaction.ts'
import {
  keyRing,
  reencryptSealedRows,
  ringKeys,
  type ReencryptionReport,
  type SealedRow,
} from '../../platform/key-rotation.ts'
import { newId, newUuid } from '../../platform/ids.ts'
import { merchantsError } from './merchants.errors.ts'
import * as repo from './merchants.repository.ts'
import type { KycStatus, MerchantRow, Pricing, SubjectScope } from './merchants.table.ts'

/** Secret keys are sealed under the master key; during a rotation, also under a previous one. */
function masterKeys(deps: Pick<Deps, 'config'>): readonly Buffer[] {
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

export interface CommissionInput {
  rateBps?: number
  fixedMinor?: number
  perExtraInstallmentBps?: number
}

export function pricingFrom(input: CommissionInput | undefined): Pricing {
  const base = input?.rateBps ?? 249
  const step = input?.perExtraInstallmentBps ?? 100
  return {
    rateBpsByInstallment: Array.from({ length: 12 }, (_, i) => base + step * i),
    fixedMinor: input?.fixedMinor ?? 25,
  }
}

export interface IssuedKey {
  apiKeyId: string
  publicKey: string
  secretKey: string
}

async function issueKey(
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

export interface CreatedMerchant {
  merchantId: string
  storeId: string
  key: IssuedKey
  dashboard: { email: string; password: string }
}

export async function createMerchant(
  deps: Deps,
  input: { name: string; kycStatus?: KycStatus; commission?: CommissionInput },
): Promise<CreatedMerchant> {
  const merchantId = newId('mrc')
  const storeId = newId('sto')
  const now = deps.clock.now()
  const kycStatus = input.kycStatus ?? 'none'
  const password = randomToken(12)
  const passwordHash = await hashPassword(password, deps.config.passwordHashCost)
  const email = `${merchantId}@merchants.kurus.local`
  const key = await transact(deps.db, async (tx) => {
    await repo.insertMerchant(tx, {
      id: merchantId,
      name: input.name,
      kyc_status: kycStatus,
      kyc_decided_at: kycStatus === 'none' || kycStatus === 'pending' ? null : now,
      kyc_subject_id: newId('sbj'),
      kyc_session_id: newUuid(),
      pricing: JSON.stringify(pricingFrom(input.commission)),
      settlement_delay_seconds: deps.config.env === 'live' ? 86_400 : 0,
      created_at: now,
    })
    await repo.insertStore(tx, {
      id: storeId,
      merchant_id: merchantId,
      name: `${input.name} store`,
      webhook_url: null,
      created_at: now,
    })
    await repo.insertDashboardUser(tx, {
      id: newId('usr'),
      merchant_id: merchantId,
      email,
      password_hash: passwordHash,
      created_at: now,
    })
    return issueKey(deps, tx, { merchantId, storeId, submerchantId: null, scope: 'merchant' })
  })
  return { merchantId, storeId, key, dashboard: { email, password } }
}

export async function createStore(
  deps: Deps,
  merchantId: string,
  input: { name?: string },
): Promise<{ storeId: string; key: IssuedKey }> {
  const merchant = await repo.findMerchantById(deps.db, merchantId)
  if (!merchant) throw merchantsError('merchant_not_found')
  const storeId = newId('sto')
  const key = await transact(deps.db, async (tx) => {
    await repo.insertStore(tx, {
      id: storeId,
      merchant_id: merchantId,
      name: input.name ?? `${merchant.name} store`,
      webhook_url: null,
      created_at: deps.clock.now(),
    })
    return issueKey(deps, tx, { merchantId, storeId, submerchantId: null, scope: 'merchant' })
  })
  return { storeId, key }
}

export interface PayoutLimits {
  minMinor: number
  maxMinor: number
  dailyMaxMinor: number
}

export const DEFAULT_PAYOUT_LIMITS: PayoutLimits = {
  minMinor: 100,
  maxMinor: 50_000_000,
  dailyMaxMinor: 200_000_000,
}

export function normalizeIban(raw: string): string | undefined {
  const iban = electronicFormatIBAN(raw) ?? ''
  return iban.startsWith('TR') && iban.length === 26 && isValidIBAN(iban) ? iban : undefined
}

export async function createSubmerchant(
  deps: Deps,
  merchantId: string,
  input: { name: string; iban: string; holderName: string; payoutLimits?: Partial<PayoutLimits> },
): Promise<{ submerchantId: string; key: IssuedKey }> {
  const merchant = await repo.findMerchantById(deps.db, merchantId)
  if (!merchant) throw merchantsError('merchant_not_found')
  const iban = normalizeIban(input.iban)
  if (!iban) throw merchantsError('invalid_iban')
  const limits = { ...DEFAULT_PAYOUT_LIMITS, ...input.payoutLimits }
  const submerchantId = newId('sub')
  const key = await transact(deps.db, async (tx) => {
    await repo.insertSubmerchant(tx, {
      id: submerchantId,
      merchant_id: merchantId,
      name: input.name,
      iban,
      holder_name: input.holderName,
      payout_min_minor: limits.minMinor,
      payout_max_minor: limits.maxMinor,
      payout_daily_max_minor: limits.dailyMaxMinor,
      settlement_delay_seconds: merchant.settlement_delay_seconds,
      created_at: deps.clock.now(),
    })
    return issueKey(deps, tx, { merchantId, storeId: null, submerchantId, scope: 'submerchant' })
  })
  return { submerchantId, key }
}

export interface Merchant {
  id: string
  name: string
  kycStatus: KycStatus
  kycDecidedAt: Date | null
  kycSubjectId: string
  kycSessionId: string | null
  pricing: Pricing
  settlementDelaySeconds: number
  createdAt: Date
}

function merchantRowToMerchant(row: MerchantRow): Merchant {
  return {
    id: row.id,
    name: row.name,
    kycStatus: row.kyc_status,
    kycDecidedAt: row.kyc_decided_at,
    kycSubjectId: row.kyc_subject_id,
    kycSessionId: row.kyc_session_id,
    pricing: row.pricing,
    settlementDelaySeconds: row.settlement_delay_seconds,
    createdAt: row.created_at,
  }
}

export async function getMerchant(deps: Deps, merchantId: string): Promise<Merchant> {
  const row = await repo.findMerchantById(deps.db, merchantId)
  if (!row) throw merchantsError('merchant_not_found')
  return merchantRowToMerchant(row)
}

export async function setKycStatus(
  deps: Deps,
  merchantId: string,
  status: KycStatus,
): Promise<Merchant> {
  const merchant = await transact(deps.db, async (tx) => {
    const row = await repo.lockMerchantById(tx, merchantId)
    if (!row) throw merchantsError('merchant_not_found')
    // A decision is a move into a settled status; pending and none have no decision time.
    const decidedAt = status === 'none' || status === 'pending' ? null : deps.clock.now()
    await repo.updateMerchantKyc(tx, merchantId, status, decidedAt)
    return merchantRowToMerchant({ ...row, kyc_status: status, kyc_decided_at: decidedAt })
  })
  forgetCachedKeys(deps, merchantId)
  return merchant
}

/** Throws 403 SVC-KYC-3101 unless the merchant may take money in. */
export async function assertKycApproved(deps: Deps, merchantId: string): Promise<void> {
  const row = await repo.findMerchantById(deps.db, merchantId)
  if (!row) throw merchantsError('merchant_not_found')
  if (row.kyc_status !== 'approved') throw merchantsError('kyc_not_approved')
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

// Every signed request needs its key; reading it (and decrypting the secret) once per few
// seconds instead of per request takes a database round trip off the hot path. A revoke,
// roll or KYC change in this process clears the entry once it has committed; other processes
// see it within KEY_CACHE_TTL_MS.
const KEY_CACHE_TTL_MS = 5_000
const KEY_CACHE_SIZE_MAX = 10_000
interface CachedKey {
  key: (AuthKey & { expiresAt: Date | null }) | undefined
  fetchedAtMs: number
}
interface KeyCache {
  entries: Map<string, CachedKey>
  /** Bumped by every forget: a read that began before one must not refill the cache. */
  generation: number
}
const keyCaches = new WeakMap<object, KeyCache>()

function keyCache(deps: Deps): KeyCache {
  let cache = keyCaches.get(deps.db)
  if (!cache) {
    cache = { entries: new Map(), generation: 0 }
    keyCaches.set(deps.db, cache)
  }
  return cache
}

/**
 * Forgets cached keys of a merchant (all of them when merchantId is undefined). Call it after
 * the change has committed: called inside the transaction, a request reading between the
 * forget and the commit would cache the old row again.
 */
export function forgetCachedKeys(deps: Deps, merchantId?: string): void {
  const cache = keyCache(deps)
  cache.generation += 1
  if (merchantId === undefined) cache.entries.clear()
  for (const [publicKey, entry] of cache.entries) {
    if (!entry.key || entry.key.merchantId === merchantId) cache.entries.delete(publicKey)
  }
}

/**
 * The key the gateway authenticates with, or undefined when it is unknown, revoked, or
 * rolled and past its grace period. The secret is decrypted here for the HMAC check.
 */
export async function findUsableKey(deps: Deps, publicKey: string): Promise<AuthKey | undefined> {
  const cache = keyCache(deps)
  let entry = cache.entries.get(publicKey)
  if (!entry || Date.now() - entry.fetchedAtMs > KEY_CACHE_TTL_MS) {
    const generation = cache.generation
    const row = await repo.findApiKeyByPublicKey(deps.db, publicKey)
    entry = {
      fetchedAtMs: Date.now(),
      key:
        row?.status === 'active'
          ? {
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
          : undefined,
    }
    if (cache.entries.size >= KEY_CACHE_SIZE_MAX) cache.entries.clear()
    // Unknown keys are not cached: random garbage must not fill the cache. Nor is a row read
    // while a revoke, roll or KYC change was committing (the generation moved meanwhile).
    if (entry.key && cache.generation === generation) cache.entries.set(publicKey, entry)
  }
  const key = entry.key
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
    return { ...fresh, previousExpiresAt: expiresAt }
  })
  forgetCachedKeys(deps, merchantId)
  return rolled
}

export async function revokeApiKey(deps: Deps, merchantId: string, keyId: string): Promise<void> {
  await transact(deps.db, async (tx) => {
    const old = await repo.lockApiKeyById(tx, merchantId, keyId)
    if (!old) throw merchantsError('api_key_not_found')
    await repo.updateApiKeyRevoked(tx, keyId, deps.clock.now())
  })
  forgetCachedKeys(deps, merchantId)
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

export async function countMerchants(deps: Deps): Promise<number> {
  return (await repo.countMerchants(deps.db)).n
}

export async function getStore(deps: Deps, merchantId: string, storeId: string) {
  const row = await repo.findStoreById(deps.db, merchantId, storeId)
  if (!row) throw merchantsError('store_not_found')
  return { id: row.id, merchantId: row.merchant_id, name: row.name, webhookUrl: row.webhook_url }
}

export async function getSubmerchant(deps: Deps, merchantId: string, submerchantId: string) {
  const row = await repo.findSubmerchantById(deps.db, merchantId, submerchantId)
  if (!row) throw merchantsError('submerchant_not_found')
  return {
    id: row.id,
    merchantId: row.merchant_id,
    name: row.name,
    iban: row.iban,
    holderName: row.holder_name,
    payoutLimits: {
      minMinor: row.payout_min_minor,
      maxMinor: row.payout_max_minor,
      dailyMaxMinor: row.payout_daily_max_minor,
    },
    settlementDelaySeconds: row.settlement_delay_seconds,
  }
}

export async function findSubmerchantIds(
  deps: Deps,
  merchantId: string,
  ids: readonly string[],
): Promise<Set<string>> {
  const rows = await repo.findSubmerchantsByIds(deps.db, merchantId, ids)
  return new Set(rows.map((r) => r.id))
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

// A hash of a random password: an unknown email still costs one scrypt, so the response
// time does not tell which emails have an account. One per cost (processes run one cost;
// tests build apps with several).
const dummyHashes = new Map<number, Promise<string>>()

function dummyHash(cost: number): Promise<string> {
  let hash = dummyHashes.get(cost)
  if (!hash) dummyHashes.set(cost, (hash = hashPassword(randomToken(12), cost)))
  return hash
}

export interface DashboardUser {
  userId: string
  merchantId: string
  email: string
}

// Sign-in lockout (PCI DSS 8.3.4): 5 failed passwords for one email within 15 minutes lock
// that email for 15 minutes, from every client address and in every process (the state is in
// the database). While locked, no password is checked at all, so the right one is refused
// with the same answer as a wrong one. An unknown email is counted and locked exactly like a
// known one, so the lockout tells nothing about which emails have an account.
export const SIGN_IN_FAILURES_MAX = 5
export const SIGN_IN_WINDOW_MS = 15 * 60_000
export const SIGN_IN_LOCK_MS = 15 * 60_000
// Each sign-in deletes at most this many rows whose window and lock are over.
const SIGN_IN_CLEANUP_BATCH = 100

/** The lockout row's key: a keyed hash of the email as it is looked up (lowercased). */
function signInThrottleKey(deps: Pick<Deps, 'config'>, email: string): string {
  const key = Buffer.from(
    hkdfSync('sha256', deps.config.masterKey, Buffer.alloc(0), 'kurus/dashboard/sign-in', 32),
  )
  return hmacSha256Hex(key, email.toLowerCase())
}

/**
 * Counts this attempt as a failure before the password is checked (undone on success), so
 * parallel guesses cannot all pass the check while the first ones are still hashing: at most
 * SIGN_IN_FAILURES_MAX passwords are ever checked per window. False: the email is locked.
 */
async function reserveSignInAttempt(deps: Deps, emailKey: string): Promise<boolean> {
  const now = deps.clock.now()
  const nowMs = now.getTime()
  return transact(deps.db, async (tx) => {
    const row = await repo.lockLoginThrottle(tx, emailKey, now)
    if (row.locked_until && row.locked_until.getTime() > nowMs) return false
    const failures = row.failures.filter((at) => at > nowMs - SIGN_IN_WINDOW_MS)
    // Only attempts still running can fill the window without a lock: wait for them.
    if (failures.length >= SIGN_IN_FAILURES_MAX) return false
    failures.push(nowMs)
    const locks = failures.length >= SIGN_IN_FAILURES_MAX
    const lockedUntil = locks ? new Date(nowMs + SIGN_IN_LOCK_MS) : null
    await repo.updateLoginThrottle(tx, emailKey, {
      // A lock starts a fresh count: when it ends, the email has five attempts again.
      failures: locks ? [] : failures,
      lockedUntil,
      expiresAt: lockedUntil ?? new Date(nowMs + SIGN_IN_WINDOW_MS),
    })
    if (locks) deps.log.warn({ emailKey: emailKey.slice(0, 16) }, 'dashboard sign-in locked')
    return true
  })
}

/**
 * The dashboard user for these credentials, or undefined: one answer for an unknown email, a
 * wrong password and a locked email. Every way into the dashboard (the API's login, a sign-in
 * page) goes through here, so the lockout holds for all of them.
 */
export async function verifyDashboardLogin(
  deps: Deps,
  email: string,
  password: string,
): Promise<DashboardUser | undefined> {
  await repo.deleteExpiredLoginThrottles(deps.db, deps.clock.now(), SIGN_IN_CLEANUP_BATCH)
  const emailKey = signInThrottleKey(deps, email)
  if (!(await reserveSignInAttempt(deps, emailKey))) return undefined
  const row = await repo.findDashboardUserByEmail(deps.db, email)
  const cost = deps.config.passwordHashCost
  const ok = await verifyPassword(password, row?.password_hash ?? (await dummyHash(cost)))
  if (!row || !ok) return undefined
  // A hash made with a lower cost than the configured one is upgraded while the password
  // is at hand (the only moment it is).
  if ((passwordHashCost(row.password_hash) ?? cost) < cost) {
    await repo.upgradePasswordHash(
      deps.db,
      row.id,
      row.password_hash,
      await hashPassword(password, cost),
    )
  }
  // The right password clears the count (and a lock this very attempt had set).
  await repo.deleteLoginThrottle(deps.db, emailKey)
  return { userId: row.id, merchantId: row.merchant_id, email: row.email }
}

/** Where the merchant's notices go (e.g. a disabled webhook endpoint). */
export async function listDashboardEmails(deps: Deps, merchantId: string): Promise<string[]> {
  const rows = await repo.findDashboardUsersByMerchant(deps.db, merchantId)
  return rows.map((r) => r.email)
}
