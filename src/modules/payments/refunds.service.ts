import type { Deps } from '../../database.ts'
import { transact } from '../../platform/db/transaction.ts'
import { createOnce } from '../../platform/idempotent-create.ts'
import { validationError } from '../../platform/errors.ts'
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
  const refund = await refundsRepo.findRefundById(deps.db, refundId)
  if (!refund) throw paymentsError('payment_not_found')
  const payment = await repo.findPaymentById(deps.db, merchantId, refund.payment_id)
  if (!payment) throw paymentsError('payment_not_found')
  return { payment: paymentRowToPayment(payment), refund: refundRowToRefund(refund) }
}

/**
 * Refunds all or part of a captured payment. Three steps, as for a charge: (1) reserve the
 * amount and record a `pending` refund under the payment's row lock, so concurrent refunds
 * can never exceed the captured amount; (2) ask the acquirer, keyed by the refund id;
 * (3) complete it now, or leave it pending for the reconciler. A retry with the same
 * Idempotency-Key finds the refund made the first time and reports its current state.
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
): Promise<RefundOutcome> {
  const refundId = newId('rfn')
  const reason = input.reason?.slice(0, REFUND_REASON_LENGTH_MAX) ?? null
  const metadata = input.metadata ?? {}
  return createOnce(input.idempotencyKey, {
    find: (key) => refundsRepo.findRefundByKey(deps.db, merchantId, paymentId, key),
    // The refund made the first time, in its current state.
    replay: (earlier) => outcome(deps, merchantId, earlier.id),
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
        return updated
      })
    },
    run: async (payment) => {
      failpoint('refund.after_reserve')
      await pushRefund(deps, payment, refundId)
      return outcome(deps, merchantId, refundId)
    },
    uniqueIndex: 'refunds_idempotency',
  })
}

/** Asks the acquirer (idempotent per refund id) and records what it says. */
async function pushRefund(deps: Deps, payment: PaymentRow, refundId: string): Promise<void> {
  const refund = await refundsRepo.findRefundById(deps.db, refundId)
  if (refund?.status !== 'pending' || !payment.acquirer_reference) return
  const acquirer = deps.acquirer
  const answer = await acquirer.refund(deps, {
    paymentId: payment.id,
    refundId,
    reference: payment.acquirer_reference,
    amount: refund.amount,
  })
  failpoint('refund.after_acquirer')
  if (answer.status === 'completed') {
    await completeRefund(deps, refundId, answer.bankRefundId)
    return
  }
  await refundsRepo.touchRefund(deps.db, refundId, answer.bankRefundId, deps.clock.now())
}

/**
 * Completes a pending refund: commission back pro rata (cumulatively, so a full refund
 * returns exactly the whole commission), balanced ledger legs, the payment's totals and
 * `refunded` once nothing is left, and the events — one transaction.
 */
export async function completeRefund(deps: Deps, refundId: string, bankRefundId: string) {
  await transact(deps.db, async (tx) => {
    const refund = await refundsRepo.lockRefundById(tx, refundId)
    if (refund?.status !== 'pending') return
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
    failpoint('refund.before_commit')
  })
}

/** An async refund the bank refused: release its reservation back to refundableAmount. */
export async function failRefund(deps: Deps, refundId: string, bankRefundId: string) {
  await transact(deps.db, async (tx) => {
    const refund = await refundsRepo.lockRefundById(tx, refundId)
    if (refund?.status !== 'pending') return
    const payment = await repo.lockPaymentById(tx, refund.merchant_id, refund.payment_id)
    if (!payment) throw paymentsError('payment_not_found')
    const now = deps.clock.now()
    const done = await refundsRepo.updateRefund(tx, refundId, 'pending', {
      status: 'failed',
      bank_refund_id: bankRefundId,
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
