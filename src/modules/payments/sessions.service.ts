import type { Db, Deps, Tx } from '../../database.ts'
import { sha256Hex } from '../../platform/crypto.ts'
import { isUniqueViolation, transact } from '../../platform/db/transaction.ts'
import type { RecordAnswer } from '../../platform/http/idempotent-answer.ts'
import { validationError } from '../../platform/errors.ts'
import { newUuid } from '../../platform/ids.ts'
import { stableStringify } from '../../platform/json.ts'
import { assertCustomerExists } from '../customers/index.ts'
import { findSubmerchantIds } from '../merchants/index.ts'
import { paymentsError } from './payments.errors.ts'
import * as repo from './payments.repository.ts'
import * as sessionsRepo from './sessions.repository.ts'
import type { SessionMode, SessionRow, SessionStatus, SplitRow } from './payments.table.ts'

export const SESSION_LIFETIME_MS = 30 * 60 * 1000
export const AMOUNT_MIN_MINOR = 100
export const AMOUNT_MAX_MINOR = 10_000_000_000

export interface CreateSessionInput {
  transactionId: string
  amount?: number
  currency: 'TRY'
  description?: string
  returnUrl: string
  callbackUrl?: string
  installmentEnabled?: boolean
  customerId?: string
  mode?: SessionMode
  splits?: SplitRow[]
  metadata?: Record<string, string>
}

export interface Session {
  id: string
  merchantId: string
  storeId: string
  transactionId: string
  mode: SessionMode
  amount: number | null
  currency: 'TRY'
  description: string | null
  returnUrl: string
  callbackUrl: string | null
  installmentEnabled: boolean
  customerId: string | null
  splits: SplitRow[]
  metadata: Record<string, string>
  paymentLinkId: string | null
  status: SessionStatus
  failedAttempts: number
  expiresAt: Date
  createdAt: Date
  completedAt: Date | null
}

export function sessionRowToSession(row: SessionRow, now: Date): Session {
  // An active session past its expiry is expired whether or not the sweeper has run yet.
  const expired = row.status === 'active' && row.expires_at.getTime() <= now.getTime()
  return {
    id: row.id,
    merchantId: row.merchant_id,
    storeId: row.store_id,
    transactionId: row.transaction_id,
    mode: row.mode,
    amount: row.amount,
    currency: row.currency,
    description: row.description,
    returnUrl: row.return_url,
    callbackUrl: row.callback_url,
    installmentEnabled: row.installment_enabled,
    customerId: row.customer_id,
    splits: row.splits,
    metadata: row.metadata,
    paymentLinkId: row.payment_link_id,
    status: expired ? 'expired' : row.status,
    failedAttempts: row.failed_attempts,
    expiresAt: row.expires_at,
    createdAt: row.created_at,
    completedAt: row.completed_at,
  }
}

async function validateSessionInput(
  deps: Deps,
  merchantId: string,
  input: CreateSessionInput,
): Promise<void> {
  const mode = input.mode ?? 'payment'
  if (mode === 'card_update_only') {
    if (input.amount !== undefined) {
      throw validationError('amount', 'must be omitted for mode card_update_only')
    }
    if (!input.customerId) throw validationError('customerId', 'is required for card_update_only')
  } else {
    if (input.amount === undefined) throw validationError('amount', `is required for mode ${mode}`)
    if (input.amount < AMOUNT_MIN_MINOR || input.amount > AMOUNT_MAX_MINOR) {
      throw validationError(
        'amount',
        `must be between ${AMOUNT_MIN_MINOR} and ${AMOUNT_MAX_MINOR} kuruş`,
      )
    }
  }
  if (input.customerId !== undefined) {
    try {
      await assertCustomerExists(deps, merchantId, input.customerId)
    } catch {
      throw validationError('customerId', 'is not a customer of this merchant')
    }
  }
  const splits = input.splits ?? []
  if (splits.length === 0) return
  if (mode !== 'payment') throw validationError('splits', 'are allowed in mode payment only')
  const seen = new Set<string>()
  let sum = 0
  for (const [i, split] of splits.entries()) {
    if (seen.has(split.submerchantId)) {
      throw validationError(`splits[${i}].submerchantId`, 'appears twice')
    }
    seen.add(split.submerchantId)
    sum += split.amountMinor
  }
  if (sum > (input.amount ?? 0)) throw validationError('splits', 'must not exceed the amount')
  const known = await findSubmerchantIds(deps, merchantId, [...seen])
  for (const [i, split] of splits.entries()) {
    if (!known.has(split.submerchantId)) {
      throw validationError(`splits[${i}].submerchantId`, 'is not a submerchant of this merchant')
    }
  }
}

/**
 * Creates a hosted-checkout session. The transactionId is a fence: repeating the same body
 * returns the existing session (created: false), another body is 409 SVC-RES-3302.
 */
export async function createSession(
  deps: Deps,
  caller: { merchantId: string; storeId: string },
  input: CreateSessionInput,
  record?: RecordAnswer<Tx, Session>,
): Promise<{ session: Session; created: boolean }> {
  const fingerprint = sha256Hex(stableStringify(input))
  const now = deps.clock.now()
  const existing = await sessionsRepo.findSessionByTransactionId(
    deps.db,
    caller.merchantId,
    input.transactionId,
  )
  if (existing) return replaySession(existing, fingerprint, now)
  await validateSessionInput(deps, caller.merchantId, input)
  const id = newUuid()
  let session: Session
  try {
    // The session and the signed call's recorded answer commit together (decision 0035).
    session = await transact(deps.db, async (tx) => {
      await sessionsRepo.insertSession(tx, {
        id,
        merchant_id: caller.merchantId,
        store_id: caller.storeId,
        transaction_id: input.transactionId,
        mode: input.mode ?? 'payment',
        amount: input.amount ?? null,
        currency: input.currency,
        description: input.description ?? null,
        return_url: input.returnUrl,
        callback_url: input.callbackUrl ?? null,
        installment_enabled: input.installmentEnabled ?? false,
        customer_id: input.customerId ?? null,
        splits: JSON.stringify(input.splits ?? []),
        metadata: JSON.stringify(input.metadata ?? {}),
        status: 'active',
        fingerprint,
        expires_at: new Date(now.getTime() + SESSION_LIFETIME_MS),
        created_at: now,
        completed_at: null,
      })
      const row = await sessionsRepo.findSessionById(tx, id)
      if (!row) throw paymentsError('session_not_found')
      const made = sessionRowToSession(row, now)
      await record?.(tx, made)
      return made
    })
  } catch (error) {
    if (!isUniqueViolation(error)) throw error
    // A concurrent create with the same transactionId won; answer as a repeat would.
    const winner = await sessionsRepo.findSessionByTransactionId(
      deps.db,
      caller.merchantId,
      input.transactionId,
    )
    if (!winner) throw error
    return replaySession(winner, fingerprint, now)
  }
  return { session, created: true }
}

function replaySession(row: SessionRow, fingerprint: string, now: Date) {
  if (row.fingerprint !== fingerprint) throw paymentsError('session_conflict')
  return { session: sessionRowToSession(row, now), created: false }
}

export async function getSessionByTransactionId(
  deps: Deps,
  merchantId: string,
  transactionId: string,
): Promise<Session | undefined> {
  const row = await sessionsRepo.findSessionByTransactionId(deps.db, merchantId, transactionId)
  return row ? sessionRowToSession(row, deps.clock.now()) : undefined
}

/** For the hosted pages: the session id itself is the bearer. */
export async function getSessionById(deps: Deps, sessionId: string): Promise<Session | undefined> {
  const row = await sessionsRepo.findSessionById(deps.db, sessionId)
  return row ? sessionRowToSession(row, deps.clock.now()) : undefined
}

/** The sweeper's job: mark active sessions past their 30 minutes as expired. */
export async function expireSessions(deps: Deps): Promise<number> {
  return sessionsRepo.expireSessions(deps.db, deps.clock.now(), 1000)
}

export interface LinkSessionInput {
  merchantId: string
  storeId: string
  paymentLinkId: string
  /** `<linkId>:<n>`, n allocated under the link's row lock. */
  transactionId: string
  amount: number
  description: string
  returnUrl: string
  installmentEnabled: boolean
  metadata: Record<string, string>
}

/**
 * A payment link's checkout session, made inside the link module's transaction (the one
 * that holds the link's row lock and counted its open sessions), so two buyers pressing Pay
 * at once can never both get a session beyond the link's maxPayments. The link was
 * validated when it was created; its transactionId is new by construction.
 */
export async function createLinkSession(
  tx: Tx,
  deps: Deps,
  input: LinkSessionInput,
): Promise<Session> {
  const now = deps.clock.now()
  const id = newUuid()
  const { merchantId, storeId, paymentLinkId, ...fenced } = input
  await sessionsRepo.insertSession(tx, {
    id,
    merchant_id: merchantId,
    store_id: storeId,
    transaction_id: input.transactionId,
    mode: 'payment',
    amount: input.amount,
    currency: 'TRY',
    description: input.description,
    return_url: input.returnUrl,
    callback_url: null,
    installment_enabled: input.installmentEnabled,
    customer_id: null,
    splits: JSON.stringify([]),
    metadata: JSON.stringify(input.metadata),
    payment_link_id: paymentLinkId,
    status: 'active',
    fingerprint: sha256Hex(stableStringify({ ...fenced, currency: 'TRY' })),
    expires_at: new Date(now.getTime() + SESSION_LIFETIME_MS),
    created_at: now,
    completed_at: null,
  })
  const row = await sessionsRepo.findSessionById(tx, id)
  if (!row) throw paymentsError('session_not_found')
  return sessionRowToSession(row, now)
}

/** An active session counts as open this long past its expiry (a charge may be mid-write). */
export const LINK_SESSION_GRACE_MS = 2 * 60_000

export interface LinkUsage {
  /** Payments made through the link that captured money (refunded since included). */
  captured: number
  /** Of its maxPayments, how many are spent or held: captured, in flight, or open sessions. */
  taken: number
}

/**
 * What each payment link has used of its maxPayments. `db` may be the link module's
 * transaction (the count that decides whether one more session may be made).
 */
export async function paymentLinkUsage(
  db: Db,
  now: Date,
  merchantId: string,
  linkIds: readonly string[],
): Promise<Map<string, LinkUsage>> {
  const openSince = new Date(now.getTime() - LINK_SESSION_GRACE_MS)
  const rows = await repo.findLinkUsage(db, merchantId, linkIds, openSince)
  return new Map(rows.map((r) => [r.payment_link_id, { captured: r.captured, taken: r.taken }]))
}
