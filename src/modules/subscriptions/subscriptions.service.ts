import { randomBytes } from 'node:crypto'
import type { Deps, Tx } from '../../database.ts'
import { assert } from '../../platform/assert.ts'
import { sha256Hex } from '../../platform/crypto.ts'
import { byCreatedAt, keysetCursor, signedCursor } from '../../platform/cursor.ts'
import { transact } from '../../platform/db/transaction.ts'
import { validationError } from '../../platform/errors.ts'
import { checkMetadata } from '../../platform/metadata.ts'
import { newId } from '../../platform/ids.ts'
import { getCustomer, getDefaultCard } from '../customers/index.ts'
import { getStore } from '../merchants/index.ts'
import { nowOnClock, testClockTime } from '../test-clocks/index.ts'
import { getCardToken } from '../vault/index.ts'
import { INTERVAL_COUNT_MAX } from './calendar.ts'
import { syncSubscriptionCard } from './card-sync.service.ts'
import { subscriptionsError } from './subscriptions.errors.ts'
import * as repo from './subscriptions.repository.ts'
import {
  SUBSCRIPTIONS,
  type ChargeableStatus,
  type IntervalUnit,
  type SubscriptionRow,
  type SubscriptionStatus,
} from './subscriptions.table.ts'
import {
  CHARGE_NOW_JOB,
  chargeRowToCharge,
  emitSubscriptionEvent,
  subscriptionRowToSubscription,
  type Subscription,
  type SubscriptionCharge,
} from './subscription-view.ts'

// The list's cursor: signed with a key of its own, names its merchant.
const SUBSCRIPTIONS_CURSOR = keysetCursor('subscriptions', 'kurus/subscriptions/list')

// The merchant's use cases. State changes lock the row, re-check its status, write the new
// state and its outbox event in one transaction. The renewal engine (renewals.service.ts)
// owns every move out of `charging`.

export const AMOUNT_MIN_MINOR = 100
export const AMOUNT_MAX_MINOR = 10_000_000_000
/** A trial may run up to two years. */
const TRIAL_MS_MAX = 730 * 24 * 60 * 60 * 1000
/** How soon a queued charge-now is expected to run (the worker polls every few seconds). */
const CHARGE_NOW_EXPECTED_MS = 5_000
export const SUBSCRIPTIONS_LIMIT_MAX = 100
export const CHARGES_LIMIT_MAX = 100

const CHARGEABLE: ReadonlySet<SubscriptionStatus> = new Set(SUBSCRIPTIONS.sourcesOf('charging'))

export function isChargeable(status: SubscriptionStatus): status is ChargeableStatus {
  return CHARGEABLE.has(status)
}

/** The portal bearer is stored only as this digest. */
export function publicHashDigest(publicHash: string): string {
  return sha256Hex(publicHash)
}

export interface CreateSubscriptionInput {
  storeId: string
  customerId: string
  amountMinor: number
  currency: 'TRY'
  intervalCount: number
  intervalUnit: IntervalUnit
  cardToken?: string | undefined
  trialEndAt?: Date | undefined
  generateInvoices?: boolean | undefined
  description?: string | undefined
  metadata?: Record<string, string> | undefined
  /** Sandbox: the test clock whose time the subscription lives on (decision 0031). */
  testClockId?: string | undefined
}

interface CardChoice {
  cardToken: string
  last4: string
  brand: string
}

/**
 * The card to charge: the given token, which must be one of this customer's cards (bound to
 * the customer in the vault, as attaching it does), or else the customer's default card.
 */
async function chooseCard(
  deps: Deps,
  merchantId: string,
  customerId: string,
  cardToken: string | undefined,
): Promise<CardChoice> {
  if (cardToken === undefined) {
    const card = await getDefaultCard(deps, merchantId, customerId)
    if (!card) {
      throw validationError('cardToken', 'is required: the customer has no default card')
    }
    return { cardToken: card.cardToken, last4: card.last4, brand: card.brand }
  }
  const token = await getCardToken(deps, merchantId, cardToken)
  if (token.customerId !== customerId) {
    throw validationError('cardToken', 'is not a card of this customer (attach it first)')
  }
  if (token.status !== 'active') throw subscriptionsError('card_token_revoked')
  return { cardToken: token.cardToken, last4: token.last4, brand: token.brand }
}

function checkCreateInput(input: CreateSubscriptionInput, now: Date): void {
  if (input.amountMinor < AMOUNT_MIN_MINOR || input.amountMinor > AMOUNT_MAX_MINOR) {
    throw validationError(
      'amountMinor',
      `must be between ${AMOUNT_MIN_MINOR} and ${AMOUNT_MAX_MINOR} kuruş`,
    )
  }
  const max = INTERVAL_COUNT_MAX[input.intervalUnit]
  if (input.intervalCount < 1 || input.intervalCount > max) {
    throw validationError('intervalCount', `must be 1..${max} for ${input.intervalUnit}`)
  }
  const trial = input.trialEndAt
  if (trial !== undefined) {
    if (trial.getTime() <= now.getTime())
      throw validationError('trialEndAt', 'must be in the future')
    if (trial.getTime() - now.getTime() > TRIAL_MS_MAX) {
      throw validationError('trialEndAt', 'must be within two years')
    }
  }
}

/** Now, for a new subscription: its test clock's time when it is created on one. */
async function creationTime(
  deps: Deps,
  merchantId: string,
  testClockId: string | undefined,
): Promise<Date> {
  if (testClockId === undefined) return deps.clock.now()
  return testClockTime(deps, merchantId, testClockId)
}

/**
 * Creates a subscription: `trialing` until trialEndAt when given, else `active` with its
 * first cycle due at once (charged at the renewal engine's next tick). cycleNumber starts
 * at 0. The returned publicHash is the buyer portal's bearer: 128 random bits, returned
 * here only and stored as its SHA-256.
 */
export async function createSubscription(
  deps: Deps,
  merchantId: string,
  input: CreateSubscriptionInput,
): Promise<{ subscription: Subscription; publicHash: string }> {
  const now = await creationTime(deps, merchantId, input.testClockId)
  checkCreateInput(input, now)
  checkMetadata(input.metadata ?? {})
  await getStore(deps, merchantId, input.storeId)
  await getCustomer(deps, merchantId, input.customerId)
  const card = await chooseCard(deps, merchantId, input.customerId, input.cardToken)
  const publicHash = randomBytes(16).toString('base64url')
  const id = newId('sub')
  const firstDue = input.trialEndAt ?? now
  const row = await transact(deps.db, async (tx) => {
    await repo.insertSubscription(tx, {
      id,
      merchant_id: merchantId,
      store_id: input.storeId,
      customer_id: input.customerId,
      public_hash_sha256: publicHashDigest(publicHash),
      status: input.trialEndAt ? 'trialing' : 'active',
      amount_minor: input.amountMinor,
      currency: 'TRY',
      interval_count: input.intervalCount,
      interval_unit: input.intervalUnit,
      cycle_number: 0,
      next_charge_at: firstDue,
      anchor_at: firstDue,
      anchor_cycle: 1,
      failed_attempts: 0,
      charge_from: null,
      charge_kind: null,
      claim_id: null,
      charging_since: null,
      charge_started_at: null,
      awaiting_payment_id: null,
      cancel_at_period_end: false,
      cancel_reason: null,
      cancelled_by: null,
      card_token: card.cardToken,
      card_last4: card.last4,
      card_brand: card.brand,
      card_session_seq: 0,
      card_synced_seq: 0,
      trial_end_at: input.trialEndAt ?? null,
      generate_invoices: input.generateInvoices ?? false,
      description: input.description ?? null,
      metadata: JSON.stringify(input.metadata ?? {}),
      created_at: now,
      updated_at: now,
      cancelled_at: null,
      ended_at: null,
      test_clock_id: input.testClockId ?? null,
    })
    const inserted = await repo.lockSubscription(tx, merchantId, id)
    assert(inserted !== undefined, 'inserted subscription is readable')
    await emitSubscriptionEvent(tx, inserted, 'subscription.created', now)
    return inserted
  })
  return { subscription: subscriptionRowToSubscription(row), publicHash }
}

async function loadRow(deps: Deps, merchantId: string, id: string): Promise<SubscriptionRow> {
  const row = await repo.findSubscriptionById(deps.db, merchantId, id)
  if (!row) throw subscriptionsError('subscription_not_found')
  return row
}

/** The subscription, with a finished update-card session taken in first. */
export async function getSubscription(
  deps: Deps,
  merchantId: string,
  id: string,
): Promise<Subscription> {
  const row = await syncSubscriptionCard(deps, await loadRow(deps, merchantId, id))
  return subscriptionRowToSubscription(row)
}

/** One locked state change: 404 when missing, then `change` decides under the lock. */
async function changeLocked<T>(
  deps: Deps,
  merchantId: string,
  id: string,
  change: (tx: Tx, row: SubscriptionRow, now: Date) => Promise<T>,
): Promise<T> {
  return transact(deps.db, async (tx) => {
    const row = await repo.lockSubscription(tx, merchantId, id)
    if (!row) throw subscriptionsError('subscription_not_found')
    // A subscription on a sandbox test clock changes at the clock's time.
    return change(tx, row, await nowOnClock(tx, row.test_clock_id, deps.clock.now()))
  })
}

export interface CancelInput {
  atPeriodEnd: boolean
  reason?: string | undefined
  by: 'merchant' | 'buyer'
}

/** A charge a worker has started (or whose payment the acquirer has not answered yet). */
function chargeInFlight(row: SubscriptionRow): boolean {
  return row.status === 'charging' && (row.claim_id !== null || row.awaiting_payment_id !== null)
}

/**
 * Cancel, under the row lock. Now → `cancelled` at once (a charge-now still waiting for its
 * job is dropped with it; one already talking to the acquirer is 409, retry in seconds).
 * At period end → the status stays, cancelAtPeriodEnd becomes true, and the renewal engine
 * cancels it at nextChargeAt instead of charging. Cancelling a cancelled subscription again
 * answers its state; an expired one is 409.
 */
export async function cancelRow(
  tx: Tx,
  row: SubscriptionRow,
  input: CancelInput,
  now: Date,
): Promise<SubscriptionRow> {
  if (row.status === 'cancelled') return row
  if (row.status === 'expired') throw subscriptionsError('not_cancellable')
  const reason = input.reason ?? null
  if (input.atPeriodEnd) {
    if (row.cancel_at_period_end) return row
    const updated = await repo.updateSubscription(tx, row.id, row.status, {
      cancel_at_period_end: true,
      cancel_reason: reason,
      cancelled_by: input.by,
      updated_at: now,
    })
    await emitSubscriptionEvent(tx, updated, 'subscription.cancel_scheduled', now, {
      cancelledBy: input.by,
      reason,
    })
    return updated
  }
  if (chargeInFlight(row)) throw subscriptionsError('charge_in_progress')
  const updated = await repo.updateSubscription(
    tx,
    row.id,
    row.status,
    repo.leaveCharging('cancelled', {
      next_charge_at: null,
      cancel_at_period_end: false,
      cancel_reason: reason,
      cancelled_by: input.by,
      cancelled_at: now,
      ended_at: now,
      updated_at: now,
    }),
  )
  await emitSubscriptionEvent(tx, updated, 'subscription.cancelled', now, {
    cancelledBy: input.by,
    reason,
    atPeriodEnd: false,
  })
  return updated
}

export async function cancelSubscription(
  deps: Deps,
  merchantId: string,
  id: string,
  input: { atPeriodEnd: boolean; reason?: string | undefined },
): Promise<Subscription> {
  const row = await changeLocked(deps, merchantId, id, (tx, current, now) =>
    cancelRow(tx, current, { ...input, by: 'merchant' }, now),
  )
  return subscriptionRowToSubscription(row)
}

/** active or trialing → paused; the renewal engine skips paused rows. Pausing twice is a no-op. */
export async function pauseSubscription(
  deps: Deps,
  merchantId: string,
  id: string,
): Promise<Subscription> {
  const row = await changeLocked(deps, merchantId, id, async (tx, current, now) => {
    if (current.status === 'paused') return current
    if (current.status === 'charging') throw subscriptionsError('charge_in_progress')
    if (!SUBSCRIPTIONS.can(current.status, 'paused')) {
      throw subscriptionsError('not_pausable')
    }
    const updated = await repo.updateSubscription(tx, current.id, current.status, {
      status: 'paused',
      next_charge_at: null,
      updated_at: now,
    })
    await emitSubscriptionEvent(tx, updated, 'subscription.paused', now, { from: current.status })
    return updated
  })
  return subscriptionRowToSubscription(row)
}

/**
 * paused → active, and the next tick charges at once: the cycle paid then starts a fresh
 * schedule (the anchor moves to now), so the buyer is not billed for the paused time.
 */
export async function resumeSubscription(
  deps: Deps,
  merchantId: string,
  id: string,
): Promise<Subscription> {
  const row = await changeLocked(deps, merchantId, id, async (tx, current, now) => {
    if (current.status !== 'paused') throw subscriptionsError('not_resumable')
    const updated = await repo.updateSubscription(tx, current.id, current.status, {
      status: 'active',
      next_charge_at: now,
      anchor_at: now,
      anchor_cycle: current.cycle_number + 1,
      updated_at: now,
    })
    await emitSubscriptionEvent(tx, updated, 'subscription.resumed', now)
    return updated
  })
  return subscriptionRowToSubscription(row)
}

/**
 * past_due stays past_due with nextChargeAt = now: the engine retries at its next tick. The
 * attempt counts as one of the dunning attempts (a failure moves the schedule on as any
 * failed retry does).
 */
export async function retrySubscription(
  deps: Deps,
  merchantId: string,
  id: string,
): Promise<Subscription> {
  const row = await changeLocked(deps, merchantId, id, async (tx, current, now) => {
    if (current.status === 'charging') throw subscriptionsError('charge_in_progress')
    if (current.status !== 'past_due') throw subscriptionsError('not_retryable')
    return repo.updateSubscription(tx, current.id, current.status, {
      next_charge_at: now,
      updated_at: now,
    })
  })
  return subscriptionRowToSubscription(row)
}

export interface ChargeNowReceipt {
  subscriptionId: string
  expectedAt: Date
}

/**
 * Queues an immediate charge of the next cycle: the row goes to `charging` and the
 * `subscriptions.charge_now` job is enqueued in the same transaction (it exists iff the
 * status change commits). The job's worker leaves `charging` for active (cycle + 1) or
 * past_due. Allowed from trialing, active and past_due; anything else is 409.
 */
export async function chargeSubscriptionNow(
  deps: Deps,
  merchantId: string,
  id: string,
): Promise<ChargeNowReceipt> {
  return changeLocked(deps, merchantId, id, async (tx, current, now) => {
    if (current.status === 'charging') throw subscriptionsError('charge_in_progress')
    if (!isChargeable(current.status)) throw subscriptionsError('not_chargeable')
    await repo.updateSubscription(tx, current.id, current.status, {
      status: 'charging',
      charge_from: current.status,
      charge_kind: 'charge_now',
      claim_id: null,
      charging_since: now,
      charge_started_at: null,
      awaiting_payment_id: null,
      updated_at: now,
    })
    await deps.jobs.enqueue(tx, CHARGE_NOW_JOB, { subscriptionId: current.id })
    return {
      subscriptionId: current.id,
      expectedAt: new Date(now.getTime() + CHARGE_NOW_EXPECTED_MS),
    }
  })
}

export interface SubscriptionListQuery {
  storeId?: string | undefined
  customerId?: string | undefined
  status?: SubscriptionStatus | undefined
  from?: Date | undefined
  to?: Date | undefined
  limit: number
  cursor?: string | undefined
}

/** The merchant's subscriptions, newest first, in pages of `limit` (keyset, signed cursor). */
export async function listSubscriptions(
  deps: Deps,
  merchantId: string,
  q: SubscriptionListQuery,
): Promise<{ items: Subscription[]; nextCursor: string | null }> {
  assert(Number.isInteger(q.limit) && q.limit >= 1 && q.limit <= SUBSCRIPTIONS_LIMIT_MAX, 'limit')
  return SUBSCRIPTIONS_CURSOR.page(deps.config.masterKey, merchantId, q, {
    // A list: the read pool.
    fetch: (before, limit) =>
      repo.findSubscriptionPage(deps.readDb, {
        merchantId,
        storeId: q.storeId,
        customerId: q.customerId,
        status: q.status,
        from: q.from,
        to: q.to,
        before,
        limit,
      }),
    view: (rows) => rows.map(subscriptionRowToSubscription),
    position: byCreatedAt,
  })
}

// Charges are ordered by (cycle, attempt) within one subscription: the cursor names the
// subscription (its id is the merchant's alone) and that position.
const CHARGES_CURSOR = signedCursor<{ cycle: number; attempt: number }>(
  'subscription-charges',
  'kurus/subscriptions/charges',
  {
    write: (at) => ({ c: at.cycle, a: at.attempt }),
    read: ({ c, a }) =>
      typeof c === 'number' &&
      typeof a === 'number' &&
      Number.isSafeInteger(c) &&
      Number.isSafeInteger(a)
        ? { cycle: c, attempt: a }
        : undefined,
  },
)

/** Every charge attempt of the subscription, newest first (cycle, then attempt). */
export async function listSubscriptionCharges(
  deps: Deps,
  merchantId: string,
  subscriptionId: string,
  q: { limit: number; cursor?: string | undefined },
): Promise<{ items: SubscriptionCharge[]; nextCursor: string | null }> {
  assert(Number.isInteger(q.limit) && q.limit >= 1 && q.limit <= CHARGES_LIMIT_MAX, 'limit')
  await loadRow(deps, merchantId, subscriptionId)
  return CHARGES_CURSOR.page(deps.config.masterKey, { s: subscriptionId }, q, {
    fetch: (before, limit) =>
      repo.findChargePage(deps.db, { merchantId, subscriptionId, before, limit }),
    view: (rows) => rows.map(chargeRowToCharge),
    position: (row) => ({ cycle: row.cycle_number, attempt: row.attempt }),
  })
}
