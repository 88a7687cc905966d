import { OutcomeSignal } from '../../platform/outcome-signal.ts'
import type { Deps, Tx } from '../../database.ts'
import { transact } from '../../platform/db/transaction.ts'
import type { RecordAnswer } from '../../platform/http/idempotent-answer.ts'
import { AppError, validationError } from '../../platform/errors.ts'
import { mergeMetadata } from '../../platform/metadata.ts'
import { acquirerFacts, binInfo } from '../acquirer/index.ts'
import { getMerchant } from '../merchants/index.ts'
import { failpoint } from '../../platform/failpoints.ts'
import {
  answerSettled,
  authorizeAndSettle,
  emit,
  NO_ANSWER,
  type ChargeAnswer,
} from './charge.service.ts'
import { computeCommission } from './commission.ts'
import { declinedError, paymentsError } from './payments.errors.ts'
import * as repo from './payments.repository.ts'
import * as sessionsRepo from './sessions.repository.ts'
import {
  captureAnswerOf,
  captureRowToCapture,
  paymentRowToPayment,
  paymentViewOf,
  type Payment,
  type PaymentDetail,
  type PaymentViewDetail,
} from './payment-view.ts'

/** The payment with its captures (GET /v1/payments/{id}). */
export async function getPayment(
  deps: Deps,
  merchantId: string,
  paymentId: string,
): Promise<PaymentDetail> {
  const found = await repo.findPaymentWithCaptures(deps.db, merchantId, paymentId)
  if (!found) throw paymentsError('payment_not_found')
  return {
    ...paymentRowToPayment(found.row),
    captures: found.captures.map(captureRowToCapture),
  }
}

/** GET /v1/payments/{id}: the payment with its acquirer's facts, in one statement. */
export async function getPaymentWithAcquirer(
  deps: Deps,
  merchantId: string,
  paymentId: string,
): Promise<{ payment: PaymentViewDetail; acquirer: ReturnType<typeof acquirerFacts> }> {
  const found = await repo.findPaymentForRead(deps.db, merchantId, paymentId)
  if (!found) throw paymentsError('payment_not_found')
  return {
    payment: { ...paymentViewOf(found.row), captures: found.captures.map(captureAnswerOf) },
    acquirer: acquirerFacts(found.acquirer),
  }
}

/**
 * Merges `patch` into the payment's metadata (a key set to "" is removed) under the row
 * lock, so concurrent patches never drop each other's keys, and records `payment.updated`
 * in the same transaction. `updated_at` is left alone on purpose: it times the capture and
 * void claims and the reconciliation of pending payments, which metadata has no part in.
 */
export async function updatePaymentMetadata(
  deps: Deps,
  merchantId: string,
  paymentId: string,
  patch: Record<string, string>,
  record?: RecordAnswer<Tx, PaymentDetail>,
): Promise<PaymentDetail> {
  return transact(deps.db, async (tx) => {
    const row = await repo.lockPaymentById(tx, merchantId, paymentId)
    if (!row) throw paymentsError('payment_not_found')
    const metadata = mergeMetadata(row.metadata, patch)
    const updated = await repo.updatePaymentMetadata(tx, paymentId, metadata)
    await emit(tx, updated, 'payment.updated', deps.clock.now())
    // Read in the transaction: the recorded answer is what it committed (decision 0035).
    const detail = await getPayment({ ...deps, db: tx }, merchantId, paymentId)
    await record?.(tx, detail)
    return detail
  })
}

/** The public status endpoint: the payment id is the bearer; nothing but the status leaves. */
export async function getPublicStatus(deps: Deps, paymentId: string) {
  const row = await repo.findPaymentStatusById(deps.db, paymentId)
  if (!row) throw paymentsError('payment_not_found')
  return { paymentId: row.id, status: row.status }
}

// A duplicate 3DS submit that lost the race waits for the winner's outcome, within bounds:
// woken when the winner (in this process) has recorded it, else it re-reads every
// DUPLICATE_RECHECK_MS (the winner may be another API process).
const DUPLICATE_WAIT_MS_MAX = 5_000
const DUPLICATE_RECHECK_MS = 100
const outcomeRecorded = new OutcomeSignal()

async function waitForOutcome(deps: Deps, merchantId: string, paymentId: string) {
  const deadline = performance.now() + DUPLICATE_WAIT_MS_MAX
  for (;;) {
    const row = await repo.findPaymentById(deps.db, merchantId, paymentId)
    if (!row) throw paymentsError('payment_not_found')
    const left = deadline - performance.now()
    if (row.status !== 'pending' || left <= 0) return paymentRowToPayment(row)
    await outcomeRecorded.wait(paymentId, Math.min(left, DUPLICATE_RECHECK_MS))
  }
}

function answerFor(payment: Payment): Payment {
  if (payment.status === 'failed')
    throw declinedError(payment.id, payment.declineCode ?? 'declined')
  return payment
}

/**
 * Completes a 3DS challenge. The pares is verified before anything changes; a duplicate
 * submit gets the same answer as the first (the winning row, or the same 402). In the phases
 * of decision 0035: the claim transaction moves the payment `pending_3ds` → `pending` with
 * the Idempotency-Key naming it (a failed authentication is claim and outcome at once, its
 * 402 recorded there); the bank under the payment's id; the outcome transaction with the
 * recorded answer. A retry after a crash carries the claimed payment on, never answers
 * differently from what was applied.
 */
export async function complete3ds(
  deps: Deps,
  merchantId: string,
  paymentId: string,
  input: { pares: string; correlationId: string },
  answer: ChargeAnswer = NO_ANSWER,
): Promise<Payment> {
  const row = await repo.findPaymentById(deps.db, merchantId, paymentId)
  if (!row) throw paymentsError('payment_not_found')
  if (!row.correlation_id || row.correlation_id !== input.correlationId) {
    throw new AppError('SVC-3DS-3601', 400, 'correlationId does not match this payment')
  }
  if (answer.resumeId === paymentId && row.status !== 'pending_3ds') {
    // The first attempt's claim committed: carried on (pending) or answered as it ended.
    if (row.status !== 'pending') return (await answerSettled(deps, row, answer)).payment
    try {
      return await authorizeAndSettle(deps, merchantId, paymentId, undefined, answer)
    } finally {
      outcomeRecorded.notify(paymentId)
    }
  }
  const { authenticated } = await deps.acquirer.verifyPares(deps, {
    paymentId,
    correlationId: input.correlationId,
    pares: input.pares,
  })
  if (row.status !== 'pending_3ds')
    return answerFor(await waitForOutcome(deps, merchantId, paymentId))
  const now = deps.clock.now()
  const claimed = await transact(deps.db, async (tx) => {
    const moved = await repo.transitionPayment(tx, merchantId, paymentId, ['pending_3ds'], {
      status: authenticated ? 'pending' : 'failed',
      ...(authenticated ? {} : { decline_code: 'authentication_failed', completed_at: now }),
      updated_at: now,
    })
    if (!moved) return moved
    await answer.claim(tx, paymentId)
    if (!authenticated) {
      if (moved.session_id) await sessionsRepo.incrementSessionFailures(tx, moved.session_id)
      await emit(tx, moved, 'payment.failed', now)
      await answer.record(tx, declinedError(paymentId, 'authentication_failed'))
    }
    return moved
  })
  if (!claimed) return answerFor(await waitForOutcome(deps, merchantId, paymentId))
  try {
    if (!authenticated) throw declinedError(paymentId, 'authentication_failed')
    failpoint('3ds.after_claim')
    return await authorizeAndSettle(deps, merchantId, paymentId, undefined, answer)
  } finally {
    outcomeRecorded.notify(paymentId)
  }
}

export interface InstallmentOption {
  installmentCount: number
  installmentAmount: number
  firstInstallmentAmount: number
  totalAmount: number
  commission: number
}

/**
 * What the card's BIN allows and what each choice costs the merchant: the same numbers the
 * charge uses. The buyer pays the amount in equal parts; the first part carries the kuruş
 * that do not divide evenly.
 */
export async function quoteInstallments(
  deps: Deps,
  merchantId: string,
  bin: string,
  amount: number,
) {
  if (!/^\d{6,8}$/.test(bin)) throw validationError('bin', 'must be the first 6 to 8 digits')
  const info = binInfo(bin.slice(0, 6))
  const merchant = await getMerchant(deps, merchantId)
  const options: InstallmentOption[] = info.installments.map((count) => ({
    installmentCount: count,
    installmentAmount: Math.floor(amount / count),
    firstInstallmentAmount: amount - Math.floor(amount / count) * (count - 1),
    totalAmount: amount,
    commission: computeCommission(merchant.pricing, amount, count),
  }))
  return { bin: info.bin, brand: info.brand, cardType: info.cardType, bank: info.bank, options }
}

/** Sandbox helper: plays the buyer at the ACS and returns what it would redirect with. */
export async function sandboxSolveChallenge(
  deps: Deps,
  merchantId: string,
  paymentId: string,
  otp: string,
) {
  const row = await repo.findPaymentById(deps.db, merchantId, paymentId)
  if (!row) throw paymentsError('payment_not_found')
  if (row.status !== 'pending_3ds' || !row.correlation_id) throw paymentsError('not_pending_3ds')
  return deps.acquirer.completeChallenge(deps, {
    paymentId,
    merchantId,
    correlationId: row.correlation_id,
    otp,
  })
}
