import type { PaymentRow, PaymentStatus } from './payments.table.ts'

/** The payment as use cases return it (camelCase); HTTP picks fields per endpoint. */
export interface Payment {
  id: string
  merchantId: string
  storeId: string
  sessionId: string | null
  transactionId: string
  method: 'card' | 'qr'
  status: PaymentStatus
  amount: number
  currency: 'TRY'
  commission: number
  netAmount: number
  installmentCount: number
  cardToken: string | null
  cardMask: string | null
  cardBrand: string | null
  cardType: string | null
  bin: string | null
  threeDSecure: boolean
  authCode: string | null
  declineCode: string | null
  correlationId: string | null
  customerId: string | null
  saveCard: boolean
  callbackUrl: string | null
  voidReason: string | null
  metadata: Record<string, string>
  /** Completed plus in-flight refunds (in-flight ones are reserved). */
  refundAmount: number
  refundCompletedAmount: number
  commissionRefunded: number
  refundableAmount: number
  chargebackOpenAmount: number
  chargebackTotalAmount: number
  shares: PaymentRow['shares']
  createdAt: Date
  authorizedAt: Date | null
  completedAt: Date | null
}

/**
 * The commission and net a payment shows. The commission is priced when the payment is
 * created and kept on the row, because its capture posts exactly that amount to the ledger;
 * a payment that fails or is voided never captures, moves no money and posts no legs, so it
 * bears no commission and pays the merchant nothing (issue 22 §5: a decline showed 1,50
 * commission and 48,50 net, and statements added them in). Authorizations and payments still
 * in flight show what their capture would post.
 */
export function chargedAmounts(
  status: PaymentStatus,
  amount: number,
  pricedCommission: number,
): { commission: number; netAmount: number } {
  if (status === 'failed' || status === 'voided') return { commission: 0, netAmount: 0 }
  return { commission: pricedCommission, netAmount: amount - pricedCommission }
}

export function paymentRowToPayment(row: PaymentRow): Payment {
  const refundable =
    row.status === 'captured'
      ? row.amount - row.refund_reserved_minor - row.chargeback_open_minor
      : 0
  return {
    id: row.id,
    merchantId: row.merchant_id,
    storeId: row.store_id,
    sessionId: row.session_id,
    transactionId: row.transaction_id,
    method: row.method,
    status: row.status,
    amount: row.amount,
    currency: row.currency,
    ...chargedAmounts(row.status, row.amount, row.commission),
    installmentCount: row.installment_count,
    cardToken: row.card_token,
    cardMask: row.card_mask,
    cardBrand: row.card_brand,
    cardType: row.card_type,
    bin: row.bin,
    threeDSecure: row.three_d_secure,
    authCode: row.auth_code,
    declineCode: row.decline_code,
    correlationId: row.correlation_id,
    customerId: row.customer_id,
    saveCard: row.save_card,
    callbackUrl: row.callback_url,
    voidReason: row.void_reason,
    metadata: row.metadata,
    refundAmount: row.refund_reserved_minor,
    refundCompletedAmount: row.refund_completed_minor,
    commissionRefunded: row.commission_refunded_minor,
    refundableAmount: Math.max(0, refundable),
    chargebackOpenAmount: row.chargeback_open_minor,
    chargebackTotalAmount: row.chargeback_total_minor,
    shares: row.shares,
    createdAt: row.created_at,
    authorizedAt: row.authorized_at,
    completedAt: row.completed_at,
  }
}

/** What events carry: the merchant-facing fields, never card data beyond the mask. */
export function paymentEventData(p: Payment): Record<string, unknown> {
  return {
    id: p.id,
    transactionId: p.transactionId,
    status: p.status,
    method: p.method,
    amount: p.amount,
    currency: p.currency,
    commission: p.commission,
    netAmount: p.netAmount,
    installmentCount: p.installmentCount,
    cardMask: p.cardMask,
    cardBrand: p.cardBrand,
    refundAmount: p.refundAmount,
    refundableAmount: p.refundableAmount,
    metadata: p.metadata,
    ...(p.declineCode ? { declineCode: p.declineCode } : {}),
    createdAt: p.createdAt.toISOString(),
    completedAt: p.completedAt?.toISOString() ?? null,
  }
}

export function cardMask(bin: string, last4: string, brand: string): string {
  // Vault tokens keep BIN and last four only; American Express numbers are 15 digits.
  const length = brand === 'amex' ? 15 : 16
  return bin + '*'.repeat(length - bin.length - last4.length) + last4
}
