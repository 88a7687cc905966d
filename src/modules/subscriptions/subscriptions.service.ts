import type { Deps, Tx } from '../../database.ts'
import { sha256Hex } from '../../platform/crypto.ts'
import { transact } from '../../platform/db/transaction.ts'
import type { RecordAnswer } from '../../platform/http/idempotent-answer.ts'
import { nowOnClock } from '../test-clocks/index.ts'
import { syncSubscriptionCard } from './card-sync.service.ts'
import { subscriptionsError } from './subscriptions.errors.ts'
import * as repo from './subscriptions.repository.ts'
import {
  SUBSCRIPTIONS,
  type ChargeableStatus,
  type SubscriptionRow,
  type SubscriptionStatus,
} from './subscriptions.table.ts'
import {
  CHARGE_NOW_JOB,
  emitSubscriptionEvent,
  subscriptionRowToSubscription,
  type Subscription,
} from './subscription-view.ts'

// The merchant's use cases on one subscription (creating one: create.service.ts; the lists:
// lists.service.ts). State changes lock the row, re-check its status, write the new state and
// its outbox event in one transaction. The renewal engine (renewals.service.ts) owns every
// move out of `charging`.

/** How soon a queued charge-now is expected to run (the worker polls every few seconds). */
const CHARGE_NOW_EXPECTED_MS = 5_000

const CHARGEABLE: ReadonlySet<SubscriptionStatus> = new Set(SUBSCRIPTIONS.sourcesOf('charging'))

export function isChargeable(status: SubscriptionStatus): status is ChargeableStatus {
  return CHARGEABLE.has(status)
}

/** The portal bearer is stored only as this digest. */
export function publicHashDigest(publicHash: string): string {
  return sha256Hex(publicHash)
}

export async function loadRow(
  deps: Deps,
  merchantId: string,
  id: string,
): Promise<SubscriptionRow> {
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

/**
 * changeLocked for a merchant's API call: `record` (decision 0035) writes the route's answer
 * for the changed subscription in the same transaction.
 */
async function changeRecorded(
  deps: Deps,
  merchantId: string,
  id: string,
  record: RecordAnswer<Tx, Subscription> | undefined,
  change: (tx: Tx, row: SubscriptionRow, now: Date) => Promise<SubscriptionRow>,
): Promise<Subscription> {
  const row = await changeLocked(deps, merchantId, id, async (tx, current, now) => {
    const changed = await change(tx, current, now)
    await record?.(tx, subscriptionRowToSubscription(changed))
    return changed
  })
  return subscriptionRowToSubscription(row)
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
  record?: RecordAnswer<Tx, Subscription>,
): Promise<Subscription> {
  return changeRecorded(deps, merchantId, id, record, (tx, current, now) =>
    cancelRow(tx, current, { ...input, by: 'merchant' }, now),
  )
}

/** active or trialing → paused; the renewal engine skips paused rows. Pausing twice is a no-op. */
export async function pauseSubscription(
  deps: Deps,
  merchantId: string,
  id: string,
  record?: RecordAnswer<Tx, Subscription>,
): Promise<Subscription> {
  return changeRecorded(deps, merchantId, id, record, async (tx, current, now) => {
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
}

/**
 * paused → active, and the next tick charges at once: the cycle paid then starts a fresh
 * schedule (the anchor moves to now), so the buyer is not billed for the paused time.
 */
export async function resumeSubscription(
  deps: Deps,
  merchantId: string,
  id: string,
  record?: RecordAnswer<Tx, Subscription>,
): Promise<Subscription> {
  return changeRecorded(deps, merchantId, id, record, async (tx, current, now) => {
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
  record?: RecordAnswer<Tx, Subscription>,
): Promise<Subscription> {
  return changeRecorded(deps, merchantId, id, record, async (tx, current, now) => {
    if (current.status === 'charging') throw subscriptionsError('charge_in_progress')
    if (current.status !== 'past_due') throw subscriptionsError('not_retryable')
    return repo.updateSubscription(tx, current.id, current.status, {
      next_charge_at: now,
      updated_at: now,
    })
  })
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
  /**
   * The request's Idempotency-Key answer, recorded with the queued charge (decision 0035):
   * the 202 receipt is this request's final answer, so a retry replays it instead of queuing
   * a second cycle's charge.
   */
  record: (tx: Tx, receipt: ChargeNowReceipt) => Promise<void> = async () => undefined,
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
    const receipt = {
      subscriptionId: current.id,
      expectedAt: new Date(now.getTime() + CHARGE_NOW_EXPECTED_MS),
    }
    await record(tx, receipt)
    return receipt
  })
}
