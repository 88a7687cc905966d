import type { Deps, Tx } from '../../database.ts'
import { assert } from '../../platform/assert.ts'
import { transact } from '../../platform/db/transaction.ts'
import { validationError } from '../../platform/errors.ts'
import { failpoint } from '../../platform/failpoints.ts'
import { newId } from '../../platform/ids.ts'
import { OutcomeSignal } from '../../platform/outcome-signal.ts'
import { captureStepCommission } from '../ledger/index.ts'
import { depsOnClock } from '../test-clocks/index.ts'
import { emit, fullCaptureId, postCaptureLegs, saveCardIfAsked } from './charge.service.ts'
import { paymentsError } from './payments.errors.ts'
import * as repo from './payments.repository.ts'
import { riskPort } from './risk-port.ts'
import { captureRowToCapture, paymentRowToPayment, type PaymentDetail } from './payment-view.ts'
import type { CaptureRow, PaymentRow, PaymentStatus } from './payments.table.ts'

// Captures and voids of an authorization (CONTRACT.md "Payments", "Payments, later phase").
// One action at a time reaches the bank per payment: a request claims the payment
// (`action_in_flight`) under its row lock, and a capture also records itself as a `pending`
// capture row in that transaction, with its amount checked against the uncaptured remainder
// there, so concurrent captures can never add up to more than the authorization. The bank
// is called outside any transaction; a second transaction records the outcome.

/**
 * A capture's or void's side of its Idempotency-Key record (decision 0035): `claim` in the
 * claim transaction (the pending capture, or the void's claim on the payment), `record` in
 * the outcome transaction with the payment as answered. NO_ACTION_ANSWER without a key.
 */
export interface ActionAnswer {
  /** What an earlier attempt with this key claimed and never answered: resumed. */
  readonly resumeId: string | null
  claim(tx: Tx, resourceId: string): Promise<void>
  record(tx: Tx, payment: PaymentDetail): Promise<void>
}

export const NO_ACTION_ANSWER: ActionAnswer = {
  resumeId: null,
  claim: async () => undefined,
  record: async () => undefined,
}

/** What a void's claim names in its Idempotency-Key record (a capture names its own id). */
function voidResource(paymentId: string): string {
  return `void:${paymentId}`
}

/** Statuses in which the authorization is still open (something may be captured or voided). */
const OPEN: readonly PaymentStatus[] = ['authorized', 'partially_captured']

// A claimed capture or void is taken over after this long: its request is assumed dead.
const ACTION_STALE_MS = 60_000
// A request that finds the payment claimed waits for the claim to go, within bounds: woken
// when a request of this process settles the claim, else it re-reads every CLAIM_RECHECK_MS
// (the claim's holder may be another API process).
const CLAIM_WAIT_MS_MAX = 5_000
const CLAIM_RECHECK_MS = 100
const claimSettled = new OutcomeSignal()

export interface CaptureInput {
  /** Kuruş; omitted = the whole uncaptured remainder. */
  amount?: number
  /** Release the rest of the authorization after this capture (default true). */
  final?: boolean
}

type Want =
  | { action: 'capture'; input: CaptureInput }
  | { action: 'void'; reason: string | null }
  /** Only finish a stale claim (the reconciler). */
  | { action: 'takeover' }

type Claim =
  /** The caller now owns this capture: its own, or a dead request's (`takenOver`). */
  | { kind: 'capture'; row: PaymentRow; capture: CaptureRow; takenOver: boolean }
  /** The caller now owns the void: its own, or a dead request's (`takenOver`). */
  | { kind: 'void'; row: PaymentRow; takenOver: boolean }
  /** Another request holds a fresh claim. */
  | { kind: 'busy' }
  /** Nothing to do: the authorization is no longer open, or (takeover) no claim is stale. */
  | { kind: 'idle'; row: PaymentRow }

function isOpen(status: PaymentStatus): boolean {
  return OPEN.includes(status)
}

async function insertPendingCapture(
  tx: Tx,
  row: PaymentRow,
  amount: number,
  final: boolean,
  at: Date,
): Promise<CaptureRow> {
  // The whole authorization at once has the payment's own capture id (and ledger reference).
  const whole = row.captured_minor === 0 && amount === row.amount
  return repo.insertCapture(tx, {
    id: whole ? fullCaptureId(row.id) : newId('cap'),
    merchant_id: row.merchant_id,
    payment_id: row.id,
    amount,
    commission: captureStepCommission({
      amount: row.amount,
      commission: row.commission,
      shares: row.shares,
      previousCapturedMinor: row.captured_minor,
      captureAmount: amount,
    }),
    final: whole || final,
    status: 'pending',
    created_at: at,
    completed_at: null,
  })
}

/**
 * Under the payment's row lock: takes the action claim for what the caller wants, or takes
 * over a stale claim as it was claimed (a dead request may have reached the bank, so its
 * action — never the caller's — is what gets finished). A capture's amount is checked
 * against the remainder here and recorded as a pending capture before the lock goes.
 */
function claimAction(
  deps: Deps,
  merchantId: string,
  paymentId: string,
  want: Want,
  answer: ActionAnswer = NO_ACTION_ANSWER,
): Promise<Claim> {
  return transact(deps.db, async (tx) => {
    const row = await repo.lockPaymentById(tx, merchantId, paymentId)
    if (!row) throw paymentsError('payment_not_found')
    if (!isOpen(row.status)) return { kind: 'idle', row }
    const now = deps.clock.now()
    if (row.action_in_flight !== null) {
      if (row.updated_at.getTime() > now.getTime() - ACTION_STALE_MS) return { kind: 'busy' }
      await repo.setPaymentAction(tx, paymentId, row.action_in_flight, now)
      if (row.action_in_flight === 'void') return { kind: 'void', row, takenOver: true }
      // A claim without its pending capture predates captures (a capture of the whole
      // amount, which is what the bank was asked for under that id).
      const capture =
        (await repo.findPendingCapture(tx, paymentId)) ??
        (await insertPendingCapture(tx, row, row.amount - row.captured_minor, true, now))
      return { kind: 'capture', row, capture, takenOver: true }
    }
    if (want.action === 'takeover') return { kind: 'idle', row }
    if (want.action === 'void') {
      await repo.setPaymentAction(tx, paymentId, 'void', now, want.reason)
      await answer.claim(tx, voidResource(paymentId))
      return { kind: 'void', row: { ...row, void_reason: want.reason }, takenOver: false }
    }
    const remainder = row.amount - row.captured_minor
    const amount = want.input.amount ?? remainder
    if (amount > remainder) {
      throw validationError('amount', `must not exceed the uncaptured remainder of ${remainder}`)
    }
    const capture = await insertPendingCapture(tx, row, amount, want.input.final ?? true, now)
    await repo.setPaymentAction(tx, paymentId, 'capture', now)
    await answer.claim(tx, capture.id)
    return { kind: 'capture', row, capture, takenOver: false }
  })
}

/** Waits until no claim is held; false when it is still held after the deadline. */
async function waitWhileClaimed(
  deps: Deps,
  merchantId: string,
  paymentId: string,
  deadline: number,
): Promise<boolean> {
  for (;;) {
    const row = await repo.findPaymentById(deps.db, merchantId, paymentId)
    if (!row) throw paymentsError('payment_not_found')
    if (row.action_in_flight === null || !isOpen(row.status)) return true
    const left = deadline - performance.now()
    if (left <= 0) return false
    await claimSettled.wait(paymentId, Math.min(left, CLAIM_RECHECK_MS))
  }
}

/** The capture at the bank (idempotent per capture id), then its outcome on the row. */
async function performCapture(
  deps: Deps,
  row: PaymentRow,
  capture: CaptureRow,
  answer: ActionAnswer,
): Promise<void> {
  assert(row.acquirer_reference, `payment ${row.id} is authorized without a bank reference`)
  failpoint('capture.after_claim')
  try {
    await deps.acquirer.capture(deps, {
      paymentId: row.id,
      reference: row.acquirer_reference,
      captureId: capture.id,
      amount: capture.amount,
      final: capture.final,
    })
  } catch (error) {
    // The bank refused: nothing was captured, the claim goes.
    await transact(deps.db, async (tx) => {
      if (await repo.settleCapture(tx, capture.id, 'failed', deps.clock.now())) {
        await repo.setPaymentAction(tx, row.id, null, deps.clock.now())
      }
    })
    throw error
  }
  failpoint('capture.after_acquirer')
  const now = deps.clock.now()
  const settled = await transact(deps.db, async (tx) => {
    const finished = await finishCapture(tx, row, capture.id, now)
    // Recorded by whoever finished it (the reconciler may have): the payment as it stands.
    await answer.record(tx, await detailIn(tx, finished?.row ?? (await currentIn(tx, row))))
    failpoint('capture.before_commit')
    return finished
  })
  failpoint('capture.after_commit')
  if (settled?.previousCapturedMinor === 0) {
    await saveCardIfAsked(deps, paymentRowToPayment(settled.row))
  }
}

/**
 * Records a capture the bank made, in one transaction: the payment's running total and
 * status (`captured` when the total reaches the amount or the capture was final, else
 * `partially_captured`), the capture row, its ledger legs and its `payment.captured`.
 * Undefined when another request recorded it first.
 */
async function finishCapture(tx: Tx, claimed: PaymentRow, captureId: string, now: Date) {
  const row = await repo.lockPaymentById(tx, claimed.merchant_id, claimed.id)
  if (!row) throw paymentsError('payment_not_found')
  const capture = await repo.lockCaptureById(tx, captureId)
  if (capture?.status !== 'pending') return undefined
  assert(isOpen(row.status), `payment ${row.id} has a pending capture but is ${row.status}`)
  const total = row.captured_minor + capture.amount
  assert(total <= row.amount, `payment ${row.id}: captures exceed the authorization`)
  const done = total === row.amount || capture.final
  const moved = await repo.transitionPayment(tx, row.merchant_id, row.id, OPEN, {
    status: done ? 'captured' : 'partially_captured',
    captured_minor: total,
    action_in_flight: null,
    completed_at: done ? now : null,
    updated_at: now,
  })
  assert(moved, `payment ${row.id} left the open statuses under its lock`)
  await repo.settleCapture(tx, capture.id, 'completed', now)
  await postCaptureLegs(tx, row, now, capture, row.captured_minor)
  // `amount` is this capture's; the payment's own amount is `authorizedAmount` here.
  await emit(tx, moved, 'payment.captured', now, {
    captureId: capture.id,
    amount: capture.amount,
    authorizedAmount: moved.amount,
  })
  // A payment held for review and captured directly: its review closes with it (decision 0036).
  await riskPort()?.closeReview(tx, { ...reviewKey(moved), outcome: 'captured', at: now })
  return { row: moved, previousCapturedMinor: row.captured_minor }
}

function reviewKey(row: PaymentRow) {
  return { merchantId: row.merchant_id, storeId: row.store_id, paymentId: row.id }
}

/** The void at the bank, then its outcome on the row. */
async function performVoid(deps: Deps, row: PaymentRow, answer: ActionAnswer): Promise<void> {
  assert(row.acquirer_reference, `payment ${row.id} is authorized without a bank reference`)
  try {
    await deps.acquirer.void(deps, { paymentId: row.id, reference: row.acquirer_reference })
  } catch (error) {
    await transact(deps.db, async (tx) => {
      const current = await repo.lockPaymentById(tx, row.merchant_id, row.id)
      if (current?.action_in_flight === 'void' && isOpen(current.status)) {
        await repo.setPaymentAction(tx, row.id, null, deps.clock.now(), null)
      }
    })
    throw error
  }
  await transact(deps.db, async (tx) => {
    await finishVoid(tx, row, deps.clock.now())
    await answer.record(tx, await detailIn(tx, await currentIn(tx, row)))
  })
}

/**
 * Records a void the bank made: nothing captured → `voided` (`payment.voided`); some
 * captured → the rest of the authorization is released and the payment is `captured`
 * with what it has (`payment.remainder_released`). The reason is the one its claim stored.
 */
async function finishVoid(tx: Tx, claimed: PaymentRow, now: Date): Promise<void> {
  const row = await repo.lockPaymentById(tx, claimed.merchant_id, claimed.id)
  if (!row) throw paymentsError('payment_not_found')
  if (row.action_in_flight !== 'void' || !isOpen(row.status)) return
  const reason = row.void_reason
  if (row.captured_minor === 0) {
    const moved = await repo.transitionPayment(tx, row.merchant_id, row.id, OPEN, {
      status: 'voided',
      action_in_flight: null,
      completed_at: now,
      updated_at: now,
    })
    if (moved) {
      await emit(tx, moved, 'payment.voided', now, { reason })
      const outcome = reason === AUTHORIZATION_EXPIRED ? 'expired' : 'voided'
      await riskPort()?.closeReview(tx, { ...reviewKey(moved), outcome, at: now })
    }
    return
  }
  // Captured money may have been refunded meanwhile; all of it refunded → `refunded`.
  const refundedAll = row.refund_completed_minor === row.captured_minor
  const moved = await repo.transitionPayment(tx, row.merchant_id, row.id, ['partially_captured'], {
    status: refundedAll ? 'refunded' : 'captured',
    action_in_flight: null,
    completed_at: now,
    updated_at: now,
  })
  if (moved) {
    await emit(tx, moved, 'payment.remainder_released', now, {
      reason,
      releasedAmount: moved.amount - moved.captured_minor,
    })
    if (refundedAll) await emit(tx, moved, 'payment.refunded', now)
  }
}

/**
 * Performs a claim; true when it was a dead request's action (the caller goes on). The claim
 * itself is taken at wall time (its staleness is wall time); what the bank did is recorded at
 * the payment's test clock's time when it is on one (decision 0034), at no cost otherwise.
 */
async function perform(
  wall: Deps,
  claim: Claim & { kind: 'capture' | 'void' },
  answer: ActionAnswer = NO_ACTION_ANSWER,
) {
  const deps = await depsOnClock(wall, claim.row.test_clock_id)
  // A dead request's action, taken over, is not this request's answer.
  const own = claim.takenOver ? NO_ACTION_ANSWER : answer
  try {
    if (claim.kind === 'capture') await performCapture(deps, claim.row, claim.capture, own)
    else await performVoid(deps, claim.row, own)
  } finally {
    // Settled (or given back) and committed: whoever waits on this payment looks again now.
    claimSettled.notify(claim.row.id)
  }
  return claim.takenOver
}

async function detail(deps: Deps, row: PaymentRow): Promise<PaymentDetail> {
  return detailIn(deps.db, row)
}

async function detailIn(db: Deps['db'], row: PaymentRow): Promise<PaymentDetail> {
  const captures = await repo.findCapturesByPayment(db, row.merchant_id, row.id)
  return { ...paymentRowToPayment(row), captures: captures.map(captureRowToCapture) }
}

async function currentIn(tx: Tx, row: PaymentRow): Promise<PaymentRow> {
  const found = await repo.findPaymentById(tx, row.merchant_id, row.id)
  if (!found) throw paymentsError('payment_not_found')
  return found
}

/**
 * A retry of a capture or void whose first attempt died after its claim committed: the
 * claimed action is carried on (the bank is asked again under the same capture id, which
 * never captures twice) or, if it was finished meanwhile, answered as it stands — never
 * done a second time, never refused for having been done. Undefined when the earlier
 * attempt's claim was given back (the bank refused it): nothing was applied, so the retry
 * runs afresh.
 */
async function resumeAction(
  deps: Deps,
  merchantId: string,
  paymentId: string,
  resumeId: string,
  answer: ActionAnswer,
): Promise<PaymentDetail | undefined> {
  type Resume = Claim | { kind: 'done'; row: PaymentRow } | { kind: 'fresh' }
  const found = await transact(deps.db, async (tx): Promise<Resume> => {
    const row = await repo.lockPaymentById(tx, merchantId, paymentId)
    if (!row) throw paymentsError('payment_not_found')
    const now = deps.clock.now()
    if (resumeId === voidResource(paymentId)) {
      if (!isOpen(row.status)) return { kind: 'done', row }
      if (row.action_in_flight !== 'void') return { kind: 'fresh' }
      await repo.setPaymentAction(tx, paymentId, 'void', now)
      return { kind: 'void', row, takenOver: false }
    }
    const capture = await repo.lockCaptureById(tx, resumeId)
    if (capture?.status === 'completed') return { kind: 'done', row }
    if (capture?.status !== 'pending' || row.action_in_flight !== 'capture')
      return { kind: 'fresh' }
    await repo.setPaymentAction(tx, paymentId, 'capture', now)
    return { kind: 'capture', row, capture, takenOver: false }
  })
  if (found.kind === 'fresh' || found.kind === 'busy') return undefined
  if (found.kind === 'done' || found.kind === 'idle') {
    return transact(deps.db, async (tx) => {
      const payment = await detailIn(tx, found.row)
      await answer.record(tx, payment)
      return payment
    })
  }
  await perform(deps, found, answer)
  return detail(deps, await current(deps, merchantId, paymentId))
}

async function current(deps: Deps, merchantId: string, paymentId: string) {
  const row = await repo.findPaymentById(deps.db, merchantId, paymentId)
  if (!row) throw paymentsError('payment_not_found')
  return row
}

/**
 * Runs the caller's capture or void to its end: claims (waiting while another request
 * holds a fresh claim; finishing a dead request's action first), performs, and answers with
 * the payment. `onIdle` decides the answer when the authorization is no longer open.
 */
async function run(
  deps: Deps,
  merchantId: string,
  paymentId: string,
  want: Want & { action: 'capture' | 'void' },
  onIdle: (row: PaymentRow) => Promise<PaymentDetail>,
  answer: ActionAnswer,
): Promise<PaymentDetail> {
  if (answer.resumeId !== null) {
    const resumed = await resumeAction(deps, merchantId, paymentId, answer.resumeId, answer)
    if (resumed) return resumed
  }
  const deadline = performance.now() + CLAIM_WAIT_MS_MAX
  for (;;) {
    const claim = await claimAction(deps, merchantId, paymentId, want, answer)
    if (claim.kind === 'idle') return onIdle(claim.row)
    if (claim.kind === 'busy') {
      if (!(await waitWhileClaimed(deps, merchantId, paymentId, deadline))) {
        throw paymentsError('action_in_progress')
      }
      continue
    }
    if (await perform(deps, claim, answer)) continue
    return detail(deps, await current(deps, merchantId, paymentId))
  }
}

/**
 * Captures `amount` (default: the uncaptured remainder) of an authorized or partially
 * captured payment; `final` (default true) releases the rest. More than the remainder is
 * 400. A capture without amount of a `captured` payment answers it as it is (idempotent:
 * of 20 concurrent full captures one posts the legs and all answer `captured`); one with
 * an amount is 409. Concurrent captures run one after another, each checked against what
 * the others left.
 */
export function capturePayment(
  deps: Deps,
  merchantId: string,
  paymentId: string,
  input: CaptureInput = {},
  answer: ActionAnswer = NO_ACTION_ANSWER,
): Promise<PaymentDetail> {
  return run(
    deps,
    merchantId,
    paymentId,
    { action: 'capture', input },
    async (row) => {
      if (row.status !== 'captured') throw paymentsError('not_capturable')
      if (input.amount !== undefined) throw paymentsError('already_captured')
      return detail(deps, row)
    },
    answer,
  )
}

/**
 * Voids an authorization: nothing captured → `voided`; partially captured → the remainder
 * is released and the payment is `captured`. Idempotent on a voided row. Posts no legs.
 */
export function voidPayment(
  deps: Deps,
  merchantId: string,
  paymentId: string,
  reason: string | null,
  answer: ActionAnswer = NO_ACTION_ANSWER,
): Promise<PaymentDetail> {
  return run(
    deps,
    merchantId,
    paymentId,
    { action: 'void', reason },
    async (row) => {
      if (row.status !== 'voided') throw paymentsError('not_voidable')
      return detail(deps, row)
    },
    answer,
  )
}

/**
 * Finishes captures and voids whose request died holding the claim (after the bank may have
 * acted): each is taken over and completed as claimed. Returns how many were finished.
 */
export async function finishStaleActions(deps: Deps, limit: number): Promise<number> {
  const stale = new Date(deps.clock.now().getTime() - ACTION_STALE_MS)
  const rows = await repo.findStaleActions(deps.db, stale, limit)
  let finished = 0
  for (const row of rows) {
    try {
      const claim = await claimAction(deps, row.merchant_id, row.id, { action: 'takeover' })
      if (claim.kind !== 'capture' && claim.kind !== 'void') continue
      await perform(deps, claim)
      finished++
    } catch (error) {
      deps.log.warn({ err: error, paymentId: row.id }, 'could not finish a stale action')
    }
  }
  return finished
}

export const AUTHORIZATION_EXPIRED = 'authorization_expired'

/**
 * Releases authorizations older than the TTL (`KURUS_AUTHORIZATION_TTL`) as a void would:
 * nothing captured → `voided`; partially captured → `captured` with what it has. Both with
 * reason `authorization_expired`. Returns how many were released. The one rule for both
 * times: the reconciler's (testClockId null: payments on no clock, at wall time) and a
 * sandbox test clock's advance (that clock's payments, measured from the clock's `now`; each
 * void is dated on the clock, as `perform` dates every action of a payment on a clock;
 * decision 0034).
 */
export async function expireAuthorizations(
  deps: Deps,
  limit: number,
  on: { testClockId: string | null; now: Date } = { testClockId: null, now: deps.clock.now() },
): Promise<number> {
  const before = new Date(on.now.getTime() - deps.config.authorizationTtlMs)
  const rows = await repo.findExpiredAuthorizations(deps.db, before, limit, on.testClockId)
  let released = 0
  for (const row of rows) {
    try {
      await voidPayment(deps, row.merchant_id, row.id, AUTHORIZATION_EXPIRED)
      released++
    } catch (error) {
      // A capture that completed meanwhile closed it; anything else waits for the next run.
      deps.log.warn({ err: error, paymentId: row.id }, 'could not release an expired authorization')
    }
  }
  return released
}

/**
 * A sandbox test clock's advance: when the first of the clock's open authorizations expires,
 * if that is at or before `upTo` (the advance stops the clock there to expire it).
 */
export async function nextAuthorizationExpiryOnClock(
  deps: Deps,
  testClockId: string,
  upTo: Date,
): Promise<Date | undefined> {
  const ttl = deps.config.authorizationTtlMs
  const first = await repo.findFirstClockAuthorization(
    deps.db,
    testClockId,
    new Date(upTo.getTime() - ttl),
  )
  return first === undefined ? undefined : new Date(first.getTime() + ttl)
}

/**
 * A sandbox test clock's advance, the clock already reading `at`: the clock's authorizations
 * past the TTL at `at` are released by expireAuthorizations (their voids dated on the clock).
 */
export function expireClockAuthorizations(
  deps: Deps,
  testClockId: string,
  at: Date,
  limit: number,
): Promise<number> {
  return expireAuthorizations(deps, limit, { testClockId, now: at })
}
