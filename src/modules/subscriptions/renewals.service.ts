import { createPaidRenewalInvoice } from '../invoices/index.ts'
import type { Deps, Tx } from '../../database.ts'
import { assert } from '../../platform/assert.ts'
import { transact } from '../../platform/db/transaction.ts'
import { AppError } from '../../platform/errors.ts'
import { newUuid } from '../../platform/ids.ts'
import { getMerchant } from '../merchants/index.ts'
import { depsOnClock, nowOnClock } from '../test-clocks/index.ts'
import { chargeSavedCard, findPaymentByTransactionId, type Payment } from '../payments/index.ts'
import { addInterval, cycleDueAt } from './calendar.ts'
import { syncPendingCards, syncSubscriptionCard } from './card-sync.service.ts'
import { subscriptionsError } from './subscriptions.errors.ts'
import * as repo from './subscriptions.repository.ts'
import { isChargeable } from './subscriptions.service.ts'
import type { SubscriptionPatch, SubscriptionRow } from './subscriptions.table.ts'
import {
  emitSubscriptionEvent,
  subscriptionRowToSubscription,
  type Subscription,
} from './subscription-view.ts'

// The renewal engine. A charge has three steps, and no transaction is open across the
// acquirer call (ARCHITECTURE.md):
//  1. claim — one statement moves due rows to `charging` under a fresh claim id
//     (FOR UPDATE SKIP LOCKED, so two workers never claim the same row);
//  2. charge — payments.chargeSavedCard with transactionId `<subscriptionId>:<cycle>`:
//     merchant-initiated, no 3DS. That transactionId is the fence that makes "one charge per
//     cycle" hold through retries and crashes: while a payment of the cycle is live (captured
//     or pending) every further call returns that same payment;
//  3. record — one transaction, conditional on still holding the claim: status, cycleNumber,
//     nextChargeAt, the charge-history row and the outbox events.
// A worker that dies between 1 and 3 leaves the row in `charging`; after STALE_CLAIM_MS the
// next tick takes a new claim and runs 2 again, which returns the payment the dead worker
// made (or, if it failed, that failure is adopted rather than a second attempt made).

const DAY_MS = 24 * 60 * 60 * 1000
/** Dunning: the retry after the 1st, 2nd and 3rd failed attempt; the 4th failure expires it. */
export const DUNNING_DELAYS_MS: readonly number[] = [1 * DAY_MS, 3 * DAY_MS, 5 * DAY_MS]
/**
 * A claim older than this belongs to a worker that crashed (a charge takes well under a
 * second; the HTTP and acquirer timeouts are 30 s), so another worker may take the row over.
 */
export const STALE_CLAIM_MS = 5 * 60 * 1000
/** A renewal of a merchant whose KYC is not approved waits this long before looking again. */
export const KYC_DEFER_MS = 60 * 60 * 1000
/** Rows per claim statement, and how many of them are charged side by side. */
const CLAIM_BATCH = 100
const PARALLEL_CHARGES = 8

type KycCheck = (merchantId: string) => Promise<boolean>

/** KYC per merchant, read once per run (a run takes seconds; the deferral is an hour). */
function kycChecker(deps: Deps): KycCheck {
  const seen = new Map<string, Promise<boolean>>()
  return (merchantId) => {
    let answer = seen.get(merchantId)
    if (!answer) {
      answer = getMerchant(deps, merchantId).then((m) => m.kycStatus === 'approved')
      seen.set(merchantId, answer)
    }
    return answer
  }
}

function claimOf(row: SubscriptionRow): string {
  assert(row.status === 'charging' && row.claim_id !== null, 'a claimed row')
  return row.claim_id
}

/** Step 3's frame: the row locked, only if this claim still holds it. */
async function withClaim(
  deps: Deps,
  row: SubscriptionRow,
  record: (tx: Tx, current: SubscriptionRow, now: Date) => Promise<void>,
): Promise<boolean> {
  const claimId = claimOf(row)
  return transact(deps.db, async (tx) => {
    const current = await repo.lockClaimedSubscription(tx, row.id, claimId)
    // Another worker took the row over (this one stalled past STALE_CLAIM_MS): its record wins.
    if (!current) return false
    await record(tx, current, deps.clock.now())
    return true
  })
}

/** The claimed row was due with cancelAtPeriodEnd: it ends now, with no charge. */
function finishAtPeriodEnd(deps: Deps, row: SubscriptionRow): Promise<boolean> {
  return withClaim(deps, row, async (tx, current, now) => {
    const updated = await repo.updateSubscription(
      tx,
      current.id,
      current.status,
      repo.leaveCharging('cancelled', {
        next_charge_at: null,
        cancelled_at: now,
        ended_at: now,
        updated_at: now,
      }),
    )
    await emitSubscriptionEvent(tx, updated, 'subscription.cancelled', now, {
      cancelledBy: current.cancelled_by,
      reason: current.cancel_reason,
      atPeriodEnd: true,
    })
  })
}

/** KYC not approved: deferred, not failed. The row goes back to where it was. */
function deferForKyc(deps: Deps, row: SubscriptionRow): Promise<boolean> {
  return withClaim(deps, row, async (tx, current, now) => {
    const from = current.charge_from
    assert(from !== null, 'a charging row remembers its status')
    await repo.updateSubscription(
      tx,
      current.id,
      current.status,
      repo.leaveCharging(from, {
        next_charge_at: new Date(now.getTime() + KYC_DEFER_MS),
        updated_at: now,
      }),
    )
  })
}

interface ChargeOutcome {
  payment: Payment | null
  /** Why no payment was made (the card token is gone). */
  reason?: string
}

const SUCCEEDED = new Set(['captured', 'authorized', 'refunded'])
const UNSETTLED = new Set(['pending', 'pending_3ds'])

/** Step 2: the cycle's payment — an attempt this charge already made, else a new one. */
async function chargeCycle(deps: Deps, row: SubscriptionRow): Promise<ChargeOutcome> {
  const cycle = row.cycle_number + 1
  const transactionId = `${row.id}:${cycle}`
  // On a takeover, an attempt made since this charge began is the charge's own (its worker
  // crashed before recording it): it is adopted, even a failed one, instead of making
  // another attempt. A first claim has made no attempt yet and skips the lookup.
  if (isTakeover(row)) {
    const started = row.charge_started_at ?? new Date(0)
    const earlier = await findPaymentByTransactionId(deps, row.merchant_id, transactionId)
    if (earlier && earlier.createdAt.getTime() >= started.getTime()) return { payment: earlier }
  }
  try {
    const payment = await chargeSavedCard(deps, {
      merchantId: row.merchant_id,
      storeId: row.store_id,
      transactionId,
      amount: row.amount_minor,
      cardToken: row.card_token,
      customerId: row.customer_id,
      // The merchant's metadata as it is; the subscription and cycle in fields of our own.
      metadata: row.metadata,
      subscription: { id: row.id, cycle },
      ...(row.test_clock_id === null ? {} : { testClockId: row.test_clock_id }),
    })
    return { payment }
  } catch (error) {
    // The card token was revoked or is gone (the card was detached, the customer deleted):
    // an attempt that failed before reaching the acquirer.
    if (error instanceof AppError && error.status < 500) {
      return { payment: null, reason: 'card_unavailable' }
    }
    throw error
  }
}

/** After a paid cycle: the next one's due date, keeping the calendar anchor when possible. */
function scheduleAfterSuccess(row: SubscriptionRow, paidCycle: number, now: Date) {
  const unit = row.interval_unit
  const count = row.interval_count
  // A charge-now starts a fresh period now; so does a payment so late (long dunning on a
  // short interval) that the next cycle would already be due: nobody is billed twice in a
  // row to catch up, the schedule moves instead.
  if (row.charge_kind !== 'charge_now') {
    const next = cycleDueAt(
      { anchorAt: row.anchor_at, anchorCycle: row.anchor_cycle, unit, count },
      paidCycle + 1,
    )
    if (next.getTime() > now.getTime()) {
      return { next_charge_at: next, anchor_at: row.anchor_at, anchor_cycle: row.anchor_cycle }
    }
  }
  return { next_charge_at: addInterval(now, unit, count), anchor_at: now, anchor_cycle: paidCycle }
}

async function recordSuccess(deps: Deps, row: SubscriptionRow, payment: Payment): Promise<boolean> {
  const recorded = await recordRenewal(deps, row, payment)
  if (recorded && row.generate_invoices) {
    // After the renewal's commit, not inside it: the invoice is the invoices module's own
    // state change. The call is idempotent per (subscription, cycle); a failure here is
    // logged and does not undo the renewal.
    await createPaidRenewalInvoice(deps, {
      merchantId: row.merchant_id,
      storeId: row.store_id,
      customerId: row.customer_id,
      amountMinor: payment.amount,
      description: row.description ?? `Subscription ${row.id}`,
      paymentId: payment.id,
      subscriptionId: row.id,
      cycleNumber: row.cycle_number + 1,
    }).catch((error: unknown) => {
      deps.log.error({ err: error, subscriptionId: row.id }, 'renewal invoice not created')
    })
  }
  return recorded
}

function recordRenewal(deps: Deps, row: SubscriptionRow, payment: Payment): Promise<boolean> {
  return withClaim(deps, row, async (tx, current, now) => {
    const paidCycle = current.cycle_number + 1
    await repo.insertCharge(tx, {
      subscription_id: current.id,
      merchant_id: current.merchant_id,
      cycle_number: paidCycle,
      attempt: current.failed_attempts + 1,
      payment_id: payment.id,
      status: 'captured',
      amount_minor: payment.amount,
      decline_code: null,
      charged_at: now,
    })
    const patch: SubscriptionPatch = {
      ...scheduleAfterSuccess(current, paidCycle, now),
      cycle_number: paidCycle,
      failed_attempts: 0,
      updated_at: now,
    }
    const updated = await repo.updateSubscription(
      tx,
      current.id,
      current.status,
      repo.leaveCharging('active', patch),
    )
    await emitSubscriptionEvent(tx, updated, 'subscription.renewed', now, {
      paymentId: payment.id,
      paidCycle,
      from: current.charge_from,
    })
  })
}

function recordFailure(deps: Deps, row: SubscriptionRow, outcome: ChargeOutcome): Promise<boolean> {
  return withClaim(deps, row, async (tx, current, now) => {
    const cycle = current.cycle_number + 1
    const attempts = current.failed_attempts + 1
    const declineCode = outcome.payment?.declineCode ?? outcome.reason ?? 'declined'
    await repo.insertCharge(tx, {
      subscription_id: current.id,
      merchant_id: current.merchant_id,
      cycle_number: cycle,
      attempt: attempts,
      payment_id: outcome.payment?.id ?? null,
      status: 'failed',
      amount_minor: current.amount_minor,
      decline_code: declineCode,
      charged_at: now,
    })
    const delay = DUNNING_DELAYS_MS[attempts - 1]
    const ends = delay === undefined || current.cancel_at_period_end
    const updated = await repo.updateSubscription(
      tx,
      current.id,
      current.status,
      ends
        ? // Out of retries → expired; a cancel at period end asked for no more charges.
          repo.leaveCharging(current.cancel_at_period_end ? 'cancelled' : 'expired', {
            next_charge_at: null,
            failed_attempts: attempts,
            ended_at: now,
            ...(current.cancel_at_period_end ? { cancelled_at: now } : {}),
            updated_at: now,
          })
        : repo.leaveCharging('past_due', {
            next_charge_at: new Date(now.getTime() + delay),
            failed_attempts: attempts,
            updated_at: now,
          }),
    )
    await emitSubscriptionEvent(tx, updated, 'subscription.charge_failed', now, {
      paymentId: outcome.payment?.id ?? null,
      declineCode,
      attempt: attempts,
      cycle,
    })
    if (updated.status === 'past_due' && current.charge_from !== 'past_due') {
      await emitSubscriptionEvent(tx, updated, 'subscription.past_due', now)
    } else if (updated.status === 'expired') {
      await emitSubscriptionEvent(tx, updated, 'subscription.expired', now)
    } else if (updated.status === 'cancelled') {
      await emitSubscriptionEvent(tx, updated, 'subscription.cancelled', now, {
        cancelledBy: current.cancelled_by,
        reason: current.cancel_reason,
        atPeriodEnd: true,
      })
    }
  })
}

/** The acquirer has not answered: release the claim and look again at the next tick. */
function awaitPayment(deps: Deps, row: SubscriptionRow, payment: Payment): Promise<boolean> {
  return withClaim(deps, row, async (tx, current, now) => {
    await repo.updateSubscription(tx, current.id, current.status, {
      claim_id: null,
      awaiting_payment_id: payment.id,
      updated_at: now,
    })
  })
}

/**
 * A claim taken over from another worker, or resumed after a pending answer: a payment of
 * the cycle may already exist, so the charge is finished whatever else has changed.
 */
function isTakeover(row: SubscriptionRow): boolean {
  const started = row.charge_started_at
  const claimed = row.charging_since
  assert(started !== null && claimed !== null, 'a claimed charge has a start')
  return claimed.getTime() > started.getTime()
}

/** Steps 2 and 3 for one claimed row (one on a test clock runs at the clock's time). */
async function runClaimedCharge(wallDeps: Deps, claimed: SubscriptionRow, kyc: KycCheck) {
  const deps = await depsOnClock(wallDeps, claimed.test_clock_id)
  if (!isTakeover(claimed)) {
    if (claimed.cancel_at_period_end && claimed.charge_kind !== 'charge_now') {
      return finishAtPeriodEnd(deps, claimed)
    }
    if (!(await kyc(claimed.merchant_id))) return deferForKyc(deps, claimed)
  }
  // A card the buyer just entered on the portal is the one to charge.
  const row = await syncSubscriptionCard(deps, claimed)
  const outcome = await chargeCycle(deps, row)
  const payment = outcome.payment
  if (payment && SUCCEEDED.has(payment.status)) return recordSuccess(deps, row, payment)
  if (payment && UNSETTLED.has(payment.status)) return awaitPayment(deps, row, payment)
  return recordFailure(deps, row, outcome)
}

/** Runs claimed rows with bounded parallelism; one row's error never stops the others. */
async function runAll(deps: Deps, rows: SubscriptionRow[], kyc: KycCheck): Promise<number> {
  let next = 0
  let recorded = 0
  const lane = async () => {
    for (let i = next++; i < rows.length; i = next++) {
      const row = rows[i]
      if (!row) continue
      try {
        if (await runClaimedCharge(deps, row, kyc)) recorded++
      } catch (error) {
        // Left in `charging`: a later tick takes it over once the claim is stale, and the
        // transactionId fence keeps that from charging the cycle twice.
        deps.log.error({ err: error, subscriptionId: row.id }, 'subscription charge failed to run')
      }
    }
  }
  await Promise.all(Array.from({ length: Math.min(PARALLEL_CHARGES, rows.length) }, lane))
  return recorded
}

/**
 * The reconciler `subscriptions.renew_due`: takes in finished update-card sessions, resumes
 * charges left in `charging`, then claims and charges due rows batch by batch until none is
 * due. Paused, cancelled and expired rows are never claimed. Returns how many rows it moved.
 */
export async function renewDueSubscriptions(deps: Deps): Promise<number> {
  const kyc = kycChecker(deps)
  let moved = await syncPendingCards(deps)
  const now = deps.clock.now()
  const leftover = await repo.reclaimChargingSubscriptions(deps.db, {
    now,
    claimId: newUuid(),
    staleBefore: new Date(now.getTime() - STALE_CLAIM_MS),
    limit: CLAIM_BATCH * 10,
    testClockId: null,
  })
  moved += await runAll(deps, leftover, kyc)
  for (;;) {
    const claimed = await repo.claimDueSubscriptions(deps.db, {
      now: deps.clock.now(),
      claimId: newUuid(),
      limit: CLAIM_BATCH,
      testClockId: null,
    })
    if (claimed.length === 0) break
    moved += await runAll(deps, claimed, kyc)
  }
  return moved
}

/**
 * A test clock's advance: its charges left in `charging` with a claim taken before
 * `claimedBefore` (one an earlier step or an advance that died did not finish), and those
 * awaiting the acquirer, are taken over at `at` — the real-time engine leaves them alone.
 * One advance runs per clock, so none is in progress in another advance; a charge-now job
 * running meanwhile is fenced by the claim and the cycle's transactionId.
 */
export async function resumeClockCharges(
  deps: Deps,
  testClockId: string,
  at: Date,
  claimedBefore: Date,
): Promise<number> {
  const leftover = await repo.reclaimChargingSubscriptions(deps.db, {
    now: at,
    claimId: newUuid(),
    staleBefore: claimedBefore,
    limit: CLAIM_BATCH * 10,
    testClockId,
  })
  return runAll(deps, leftover, kycChecker(deps))
}

/**
 * A test clock's advance, at one moment `at` (the clock already reads `at`): claims and
 * charges the clock's subscriptions due by then, batch by batch. Returns how many it moved.
 */
export async function renewClockDueSubscriptions(
  deps: Deps,
  testClockId: string,
  at: Date,
): Promise<number> {
  const kyc = kycChecker(deps)
  let moved = await resumeClockCharges(deps, testClockId, at, at)
  for (;;) {
    const claimed = await repo.claimDueSubscriptions(deps.db, {
      now: at,
      claimId: newUuid(),
      limit: CLAIM_BATCH,
      testClockId,
    })
    if (claimed.length === 0) break
    moved += await runAll(deps, claimed, kyc)
  }
  return moved
}

/** The `subscriptions.charge_now` job: claims the queued charge and runs it. */
export async function runQueuedCharge(deps: Deps, subscriptionId: string): Promise<void> {
  const claimed = await repo.claimQueuedCharge(deps.db, {
    id: subscriptionId,
    claimId: newUuid(),
    now: deps.clock.now(),
  })
  // Already run (pg-boss runs a job at least once) or cancelled meanwhile: nothing to do.
  if (!claimed) return
  await runClaimedCharge(deps, claimed, kycChecker(deps))
}

/**
 * Sandbox: jump to the next charge time and run it, now. The charge runs as the scheduled
 * renewal (or dunning retry) would, so the calendar anchor is kept and each call steps one
 * cycle on; a cancel at period end is carried out instead of charging.
 */
export async function advanceSubscription(
  deps: Deps,
  merchantId: string,
  id: string,
): Promise<Subscription> {
  const claimId = newUuid()
  const claimed = await transact(deps.db, async (tx) => {
    const row = await repo.lockSubscription(tx, merchantId, id)
    if (!row) throw subscriptionsError('subscription_not_found')
    if (row.status === 'charging') throw subscriptionsError('charge_in_progress')
    if (!isChargeable(row.status)) throw subscriptionsError('not_chargeable')
    // On a test clock the charge runs at the clock's time (its own advance moves the clock).
    const now = await nowOnClock(tx, row.test_clock_id, deps.clock.now())
    const from = row.status
    return repo.claimSubscriptionNow(tx, {
      id,
      claimId,
      now,
      kind: from === 'past_due' ? 'retry' : 'renewal',
      from,
    })
  })
  assert(claimed !== undefined, 'the locked row was claimed')
  await runClaimedCharge(deps, claimed, kycChecker(deps))
  const after = await repo.findSubscriptionById(deps.db, merchantId, id)
  assert(after !== undefined, 'the subscription is still there')
  return subscriptionRowToSubscription(after)
}
