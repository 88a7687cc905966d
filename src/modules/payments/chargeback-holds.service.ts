import type { Tx } from '../../database.ts'
import { validationError } from '../../platform/errors.ts'
import { paymentsError } from './payments.errors.ts'
import * as repo from './payments.repository.ts'
import { paymentRowToPayment, type Payment } from './payment-view.ts'

// The payment's side of a chargeback. The disputes module owns chargebacks; the payment row
// keeps how much of it stands disputed, because that amount is no longer refundable and
// bounds the next chargeback. Both run inside the disputes module's transaction.

/**
 * Locks the payment and sets `amount` aside for a new chargeback. A chargeback may not
 * exceed what was captured less completed refunds and the chargebacks still standing.
 * Returns the payment as it was before, for the ledger's cumulative apportionment.
 */
export async function holdChargeback(
  tx: Tx,
  merchantId: string,
  paymentId: string,
  amount: number | undefined,
  at: Date,
): Promise<{ before: Payment; amount: number }> {
  const row = await repo.lockPaymentById(tx, merchantId, paymentId)
  if (!row) throw paymentsError('payment_not_found')
  if (row.status !== 'captured' && row.status !== 'refunded') {
    throw paymentsError('not_disputable')
  }
  // Of a partly captured payment only what was captured can be charged back.
  const room = row.captured_minor - row.refund_completed_minor - row.chargeback_open_minor
  const chosen = amount ?? room
  if (chosen <= 0 || chosen > room) {
    throw validationError('amount', `must be between 1 and ${room}, the amount still disputable`)
  }
  // Pending refunds stay reserved; a chargeback that meets them may not push the two
  // reservations past the amount (the table's check constraint says the same).
  if (row.refund_reserved_minor + row.chargeback_open_minor + chosen > row.captured_minor) {
    throw validationError('amount', 'overlaps a refund that is still in flight')
  }
  await repo.updatePaymentChargebacks(tx, paymentId, {
    chargeback_open_minor: row.chargeback_open_minor + chosen,
    chargeback_total_minor: row.chargeback_total_minor + chosen,
    updated_at: at,
  })
  return { before: paymentRowToPayment(row), amount: chosen }
}

/** A reversed chargeback (representment won) gives its amount back to the payment. */
export async function releaseChargeback(
  tx: Tx,
  merchantId: string,
  paymentId: string,
  amount: number,
  at: Date,
): Promise<void> {
  const row = await repo.lockPaymentById(tx, merchantId, paymentId)
  if (!row) throw paymentsError('payment_not_found')
  await repo.updatePaymentChargebacks(tx, paymentId, {
    chargeback_open_minor: row.chargeback_open_minor - amount,
    chargeback_total_minor: row.chargeback_total_minor,
    updated_at: at,
  })
}
