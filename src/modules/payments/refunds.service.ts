import type { Deps, Tx } from '../../database.ts'
import { transact } from '../../platform/db/transaction.ts'
import { createOnce } from '../../platform/idempotent-create.ts'
import { AppError, validationError } from '../../platform/errors.ts'
import { checkMetadata } from '../../platform/metadata.ts'
import { failpoint } from '../../platform/failpoints.ts'
import { newId } from '../../platform/ids.ts'
import { recordEvent } from '../events/index.ts'
import { postRefund, refundStepCommission } from '../ledger/index.ts'
import { emit } from './charge.service.ts'
import { paymentsError } from './payments.errors.ts'
import * as repo from './payments.repository.ts'
import * as refundsRepo from './refunds.repository.ts'
import { paymentRowToPayment, refundableMinor, type Payment } from './payment-view.ts'
import type { PaymentRow, RefundRow, RefundStatus } from './payments.table.ts'

export const REFUND_REASON_LENGTH_MAX = 500

export interface Refund {
  id: string
  paymentId: string
  amount: number
  commissionRefund: number | null
  status: RefundStatus
  reason: string | null
  bankRefundId: string | null
  metadata: Record<string, string>
  createdAt: Date
  completedAt: Date | null
}

export function refundRowToRefund(row: RefundRow): Refund {
  return {
    id: row.id,
    paymentId: row.payment_id,
    amount: row.amount,
    commissionRefund: row.commission_refund,
    status: row.status,
    reason: row.reason,
    bankRefundId: row.bank_refund_id,
    metadata: row.metadata,
    createdAt: row.created_at,
    completedAt: row.completed_at,
  }
}

export interface RefundOutcome {
  payment: Payment
  refund: Refund
}

async function outcome(deps: Deps, merchantId: string, refundId: string): Promise<RefundOutcome> {
  return outcomeIn(deps.db, merchantId, refundId)
}

async function outcomeIn(
  db: Deps['db'],
  merchantId: string,
  refundId: string,
): Promise<RefundOutcome> {
  const refund = await refundsRepo.findRefundById(db, refundId)
  if (!refund) throw paymentsError('payment_not_found')
  const payment = await repo.findPaymentById(db, merchantId, refund.payment_id)
  if (!payment) throw paymentsError('payment_not_found')
  return { payment: paymentRowToPayment(payment), refund: refundRowToRefund(refund) }
}

/**
 * A refund's side of its Idempotency-Key record (decision 0035): `claim` in the claim
 * transaction (the pending refund and its reservation), `record` in the outcome transaction
 * with the final answer — the refund completed or failed, or the bank's refusal. A refund
 * still pending at the bank (an asynchronous refund card) is no final answer: nothing is
 * recorded, the gateway leaves the key `retryable` and a retry resumes it. NO_REFUND_ANSWER
 * without a key (and for the dashboard, which records its own).
 */
export interface RefundAnswer {
  /** The refund an earlier attempt with this key claimed and never answered: resumed. */
  readonly resumeId: string | null
  claim(tx: Tx, refundId: string): Promise<void>
  record(tx: Tx, result: RefundOutcome | AppError): Promise<void>
}

export const NO_REFUND_ANSWER: RefundAnswer = {
  resumeId: null,
  claim: async () => undefined,
  record: async () => undefined,
}

/** Inside an outcome transaction: the refund as it stands is the answer, when final. */
async function recordRefund(
  tx: Tx,
  merchantId: string,
  refundId: string,
  answer: RefundAnswer,
): Promise<RefundOutcome> {
  const result = await outcomeIn(tx, merchantId, refundId)
  if (result.refund.status !== 'pending') await answer.record(tx, result)
  return result
}

/**
 * Refunds all or part of a captured payment, in the three phases of decision 0035: (1) the
 * claim transaction reserves the amount and records a `pending` refund under the payment's
 * row lock (so concurrent refunds can never exceed the captured amount), with the
 * Idempotency-Key naming it; (2) the acquirer, keyed by the refund id (asking twice never
 * refunds twice); (3) the outcome transaction completes it — legs, totals, events and the
 * recorded answer together — or it stays pending for the reconciler (an asynchronous
 * refund: 202). A retry with the same key resumes the refund the first attempt made (to the
 * bank again under the same id if still pending) and answers it; never a second refund.
 */
export async function refundPayment(
  deps: Deps,
  merchantId: string,
  paymentId: string,
  input: {
    amount?: number
    reason?: string
    idempotencyKey?: string
    metadata?: Record<string, string>
  },
  answer: RefundAnswer = NO_REFUND_ANSWER,
): Promise<RefundOutcome> {
  if (answer.resumeId !== null) {
    const resumed = await resumeRefund(deps, merchantId, paymentId, answer.resumeId, answer)
    if (resumed) return resumed
  }
  const refundId = newId('rfn')
  const reason = input.reason?.slice(0, REFUND_REASON_LENGTH_MAX) ?? null
  const metadata = input.metadata ?? {}
  return createOnce(input.idempotencyKey, {
    find: (key) => refundsRepo.findRefundByKey(deps.db, merchantId, paymentId, key),
    // The refund made the first time (under another API key, or a record released by a
    // 5xx): carried on and answered in its current state, never a second one.
    replay: async (earlier) =>
      (await resumeRefund(deps, merchantId, paymentId, earlier.id, answer)) ??
      outcome(deps, merchantId, earlier.id),
    claim: (key) => {
      checkMetadata(metadata)
      return transact(deps.db, async (tx) => {
        const row = await repo.lockPaymentById(tx, merchantId, paymentId)
        if (!row) throw paymentsError('payment_not_found')
        const refundable = refundableMinor(row)
        const amount = input.amount ?? refundable
        if (refundable <= 0) throw paymentsError('not_refundable')
        if (amount > refundable) {
          throw validationError('amount', `must not exceed the refundableAmount of ${refundable}`)
        }
        const now = deps.clock.now()
        await refundsRepo.insertRefund(tx, {
          id: refundId,
          merchant_id: merchantId,
          payment_id: paymentId,
          amount,
          commission_refund: null,
          status: 'pending',
          reason,
          idempotency_key: key,
          bank_refund_id: null,
          metadata: JSON.stringify(metadata),
          created_at: now,
          completed_at: null,
          updated_at: now,
        })
        const updated = await refundsRepo.updatePaymentRefundTotals(tx, paymentId, row.status, {
          refund_reserved_minor: row.refund_reserved_minor + amount,
          refund_completed_minor: row.refund_completed_minor,
          commission_refunded_minor: row.commission_refunded_minor,
          status: row.status,
          updated_at: now,
        })
        await recordEvent(tx, {
          merchantId,
          storeId: row.store_id,
          type: 'refund.created',
          resourceType: 'refund',
          resourceId: refundId,
          data: { id: refundId, paymentId, amount, status: 'pending', reason, metadata },
          callbackUrl: row.callback_url,
          at: now,
        })
        await answer.claim(tx, refundId)
        return updated
      })
    },
    run: (payment) => proceedRefund(deps, payment, refundId, answer),
    uniqueIndex: 'refunds_idempotency',
  })
}

/**
 * A retry of a refund whose first attempt ended before its answer was recorded: a pending
 * refund goes to the bank again under its id; a settled one is answered as it stands.
 * Undefined when `refundId` is no refund of this payment (the retry then runs afresh).
 */
async function resumeRefund(
  deps: Deps,
  merchantId: string,
  paymentId: string,
  refundId: string,
  answer: RefundAnswer,
): Promise<RefundOutcome | undefined> {
  const refund = await refundsRepo.findRefundById(deps.db, refundId)
  if (refund?.merchant_id !== merchantId || refund.payment_id !== paymentId) return undefined
  if (refund.status === 'pending') {
    const payment = await repo.findPaymentById(deps.db, merchantId, paymentId)
    if (!payment) throw paymentsError('payment_not_found')
    return proceedRefund(deps, payment, refundId, answer)
  }
  return transact(deps.db, (tx) => recordRefund(tx, merchantId, refundId, answer))
}

/** Phases (2) and (3) of a claimed refund; its answer. */
async function proceedRefund(
  deps: Deps,
  payment: PaymentRow,
  refundId: string,
  answer: RefundAnswer,
): Promise<RefundOutcome> {
  failpoint('refund.after_reserve')
  await pushRefund(deps, payment, refundId, answer)
  return outcome(deps, payment.merchant_id, refundId)
}

/**
 * Asks the acquirer (idempotent per refund id) and records what it says: completed → the
 * outcome transaction with the answer; still pending (asynchronous) → the bank's id only;
 * refused (a 4xx of the acquirer: nothing was refunded) → the refund fails, its reservation
 * goes back and the refusal is the recorded answer, in one transaction. A failure to reach
 * the bank leaves the refund pending: the retry (or the reconciler) asks again.
 */
async function pushRefund(
  deps: Deps,
  payment: PaymentRow,
  refundId: string,
  answer: RefundAnswer = NO_REFUND_ANSWER,
): Promise<void> {
  const refund = await refundsRepo.findRefundById(deps.db, refundId)
  if (!payment.acquirer_reference) return
  if (refund?.status !== 'pending') {
    await transact(deps.db, (tx) => recordRefund(tx, payment.merchant_id, refundId, answer))
    return
  }
  const acquirer = deps.acquirer
  let pushed
  try {
    pushed = await acquirer.refund(deps, {
      paymentId: payment.id,
      refundId,
      reference: payment.acquirer_reference,
      amount: refund.amount,
    })
  } catch (error) {
    if (error instanceof AppError && error.status < 500) {
      await failRefund(deps, refundId, null, async (tx) => answer.record(tx, error))
    }
    throw error
  }
  failpoint('refund.after_acquirer')
  if (pushed.status === 'completed') {
    await completeRefund(deps, refundId, pushed.bankRefundId, answer)
    failpoint('refund.after_commit')
    return
  }
  await refundsRepo.touchRefund(deps.db, refundId, pushed.bankRefundId, deps.clock.now())
}

/**
 * Completes a pending refund: commission back pro rata (cumulatively, so a full refund
 * returns exactly the whole commission), balanced ledger legs, the payment's totals and
 * `refunded` once nothing is left, the events and the request's recorded answer — one
 * transaction. One the reconciler completed first is answered as it stands.
 */
export async function completeRefund(
  deps: Deps,
  refundId: string,
  bankRefundId: string,
  answer: RefundAnswer = NO_REFUND_ANSWER,
) {
  await transact(deps.db, async (tx) => {
    const refund = await refundsRepo.lockRefundById(tx, refundId)
    if (!refund) return
    if (refund.status !== 'pending') {
      await recordRefund(tx, refund.merchant_id, refundId, answer)
      return
    }
    const payment = await repo.lockPaymentById(tx, refund.merchant_id, refund.payment_id)
    if (!payment) throw paymentsError('payment_not_found')
    const now = deps.clock.now()
    // Refunds mirror the captures: once refunds total G, K(G) of the commission has come
    // back, whenever the captures happened (docs/payments.md, Refunds of partial captures).
    const captured = payment.captured_minor
    const commissionRefund = refundStepCommission({
      amount: payment.amount,
      commission: payment.commission,
      captured,
      previousRefunded: payment.refund_completed_minor,
      previousCommissionRefunded: payment.commission_refunded_minor,
      refundAmount: refund.amount,
    })
    await postRefund(tx, {
      merchantId: payment.merchant_id,
      paymentId: payment.id,
      refundId,
      amount: refund.amount,
      commissionRefund,
      previousRefundedMinor: payment.refund_completed_minor,
      previousCommissionRefundedMinor: payment.commission_refunded_minor,
      paymentAmount: payment.amount,
      paymentCommission: payment.commission,
      shares: payment.shares,
      capturedMinor: captured,
      at: now,
    })
    const done = await refundsRepo.updateRefund(tx, refundId, 'pending', {
      status: 'completed',
      bank_refund_id: bankRefundId,
      commission_refund: commissionRefund,
      completed_at: now,
      updated_at: now,
    })
    const completed = payment.refund_completed_minor + refund.amount
    const updated = await refundsRepo.updatePaymentRefundTotals(tx, payment.id, payment.status, {
      refund_reserved_minor: payment.refund_reserved_minor,
      refund_completed_minor: completed,
      commission_refunded_minor: payment.commission_refunded_minor + commissionRefund,
      // A partially captured payment stays open for captures even when all of its captured
      // money is refunded; releasing the rest then makes it `refunded` (captures.service.ts).
      status: completed === captured && payment.status === 'captured' ? 'refunded' : payment.status,
      updated_at: now,
    })
    if (done) await refundEvent(tx, updated, done, 'refund.completed', now)
    if (updated.status === 'refunded') await emit(tx, updated, 'payment.refunded', now)
    if (done) {
      await answer.record(tx, {
        payment: paymentRowToPayment(updated),
        refund: refundRowToRefund(done),
      })
    }
    failpoint('refund.before_commit')
  })
}

/** An async refund the bank refused: release its reservation back to refundableAmount. */
export async function failRefund(
  deps: Deps,
  refundId: string,
  bankRefundId: string | null,
  /** Inside the same transaction (the refusal answered by the request that met it). */
  also?: (tx: Tx) => Promise<void>,
) {
  await transact(deps.db, async (tx) => {
    const refund = await refundsRepo.lockRefundById(tx, refundId)
    if (refund?.status !== 'pending') return
    const payment = await repo.lockPaymentById(tx, refund.merchant_id, refund.payment_id)
    if (!payment) throw paymentsError('payment_not_found')
    const now = deps.clock.now()
    const done = await refundsRepo.updateRefund(tx, refundId, 'pending', {
      status: 'failed',
      ...(bankRefundId !== null ? { bank_refund_id: bankRefundId } : {}),
      completed_at: now,
      updated_at: now,
    })
    const updated = await refundsRepo.updatePaymentRefundTotals(tx, payment.id, payment.status, {
      refund_reserved_minor: payment.refund_reserved_minor - refund.amount,
      refund_completed_minor: payment.refund_completed_minor,
      commission_refunded_minor: payment.commission_refunded_minor,
      status: payment.status,
      updated_at: now,
    })
    if (done) await refundEvent(tx, updated, done, 'refund.failed', now)
    await also?.(tx)
  })
}

async function refundEvent(
  tx: Parameters<typeof recordEvent>[0],
  payment: PaymentRow,
  refund: RefundRow,
  type: string,
  at: Date,
): Promise<void> {
  const view = paymentRowToPayment(payment)
  await recordEvent(tx, {
    merchantId: payment.merchant_id,
    storeId: payment.store_id,
    type,
    resourceType: 'refund',
    resourceId: refund.id,
    data: {
      id: refund.id,
      paymentId: payment.id,
      amount: refund.amount,
      status: refund.status,
      reason: refund.reason,
      bankRefundId: refund.bank_refund_id,
      metadata: refund.metadata,
      refundAmount: view.refundAmount,
      refundableAmount: view.refundableAmount,
      createdAt: refund.created_at.toISOString(),
      completedAt: refund.completed_at?.toISOString() ?? null,
    },
    callbackUrl: payment.callback_url,
    at,
  })
}

export async function listRefunds(deps: Deps, merchantId: string, paymentId: string) {
  const payment = await repo.findPaymentById(deps.db, merchantId, paymentId)
  if (!payment) throw paymentsError('payment_not_found')
  return (await refundsRepo.findRefundsByPayment(deps.db, merchantId, paymentId)).map(
    refundRowToRefund,
  )
}

/**
 * The refund reconciler: every pending refund is pushed to the acquirer again (idempotent
 * per refund id, which also covers a crash before the first call) and then settled by the
 * acquirer's status answer.
 */
export async function reconcileRefunds(deps: Deps): Promise<number> {
  const pending = await refundsRepo.findPendingRefunds(deps.db, deps.clock.now(), 200)
  let moved = 0
  const acquirer = deps.acquirer
  for (const refund of pending) {
    const payment = await repo.findPaymentById(deps.db, refund.merchant_id, refund.payment_id)
    if (!payment?.acquirer_reference) continue
    const pushed = await acquirer.refund(deps, {
      paymentId: payment.id,
      refundId: refund.id,
      reference: payment.acquirer_reference,
      amount: refund.amount,
    })
    const state =
      pushed.status === 'completed'
        ? pushed
        : await acquirer.refundStatus(deps, { refundId: refund.id })
    if (state.status === 'completed') await completeRefund(deps, refund.id, state.bankRefundId)
    else if (state.status === 'failed') await failRefund(deps, refund.id, state.bankRefundId)
    else continue
    moved++
  }
  return moved
}
