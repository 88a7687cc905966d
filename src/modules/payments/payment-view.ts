import { capturedCommission } from '../ledger/index.ts'
import type { CaptureRow, PaymentRow, PaymentStatus, PaymentViewRow } from './payments.table.ts'
import type { RiskAssessment } from './risk-types.ts'

/** The payment as use cases return it (camelCase); HTTP picks fields per endpoint. */
export interface Payment {
  id: string
  merchantId: string
  storeId: string
  sessionId: string | null
  transactionId: string
  method: 'card' | 'qr'
  status: PaymentStatus
  /** The authorized amount. */
  amount: number
  currency: 'TRY'
  /** Sum of the completed captures. */
  capturedAmount: number
  /** Of the captured amount once anything is captured (pro rata), else of the whole amount. */
  commission: number
  netAmount: number
  installmentCount: number
  cardToken: string | null
  cardMask: string | null
  cardBrand: string | null
  cardType: string | null
  bin: string | null
  cardFingerprint: string | null
  risk: RiskAssessment | null
  /** The charge asked to capture at once (a review withholds it until approved). */
  captureRequested: boolean
  threeDSecure: boolean
  authCode: string | null
  declineCode: string | null
  correlationId: string | null
  customerId: string | null
  saveCard: boolean
  callbackUrl: string | null
  voidReason: string | null
  metadata: Record<string, string>
  /** The payment link it was made through (docs/payments.md, Payment links). */
  paymentLinkId: string | null
  /** The subscription a renewal renews and its cycle; null for any other payment. */
  subscriptionId: string | null
  subscriptionCycle: number | null
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
  /** Sandbox: the test clock it was made on (a renewal of a subscription on one), or null. */
  testClockId: string | null
}

/**
 * The commission and net a payment shows. The commission is priced when the payment is
 * created and kept on the row; each capture posts its pro-rata share of it to the ledger
 * (docs/payments.md, Partial and multi-capture). A payment that fails or is voided never
 * captures, moves no money and posts no legs, so it bears no commission and pays the merchant
 * nothing (issue 22 §5: a decline showed 1,50 commission and 48,50 net, and statements added
 * them in). Once anything is captured, commission and net are of the captured amount, as the
 * captures posted them; before that (authorizations, payments in flight) they show what a
 * full capture would post.
 */
export function chargedAmounts(
  status: PaymentStatus,
  amount: number,
  pricedCommission: number,
  captured: number,
): { commission: number; netAmount: number } {
  if (status === 'failed' || status === 'voided') return { commission: 0, netAmount: 0 }
  if (captured === 0) return { commission: pricedCommission, netAmount: amount - pricedCommission }
  const charged = capturedCommission(amount, pricedCommission, captured)
  return { commission: charged, netAmount: captured - charged }
}

/**
 * What may still be refunded: captured − refunds (reserved or done) − open chargebacks
 * (CONTRACT.md), while the payment is captured or partially captured (captured money is
 * refundable also while more may still be captured; docs/payments.md). The one formula: the
 * refund's check and the payment's `refundableAmount` both use it.
 */
export function refundableMinor(
  row: Pick<
    PaymentRow,
    'status' | 'captured_minor' | 'refund_reserved_minor' | 'chargeback_open_minor'
  >,
): number {
  return row.status === 'captured' || row.status === 'partially_captured'
    ? row.captured_minor - row.refund_reserved_minor - row.chargeback_open_minor
    : 0
}

/** What a payment's answer shows (payments.http.ts, paymentJson): GET reads only these. */
export type PaymentView = Pick<
  Payment,
  | 'id'
  | 'merchantId'
  | 'storeId'
  | 'transactionId'
  | 'method'
  | 'status'
  | 'amount'
  | 'currency'
  | 'capturedAmount'
  | 'commission'
  | 'netAmount'
  | 'installmentCount'
  | 'cardMask'
  | 'cardBrand'
  | 'cardType'
  | 'bin'
  | 'cardFingerprint'
  | 'risk'
  | 'threeDSecure'
  | 'authCode'
  | 'declineCode'
  | 'customerId'
  | 'metadata'
  | 'paymentLinkId'
  | 'subscriptionId'
  | 'subscriptionCycle'
  | 'refundAmount'
  | 'refundableAmount'
  | 'createdAt'
  | 'completedAt'
>

/** The view of a payment from its answer's columns (PAYMENT_VIEW_COLUMNS). */
export function paymentViewOf(row: PaymentViewRow): PaymentView {
  const captured = row.captured_minor
  return {
    id: row.id,
    merchantId: row.merchant_id,
    storeId: row.store_id,
    transactionId: row.transaction_id,
    method: row.method,
    status: row.status,
    amount: row.amount,
    currency: row.currency,
    capturedAmount: captured,
    ...chargedAmounts(row.status, row.amount, row.commission, captured),
    installmentCount: row.installment_count,
    cardMask: row.card_mask,
    cardBrand: row.card_brand,
    cardType: row.card_type,
    bin: row.bin,
    cardFingerprint: row.card_fingerprint,
    risk: row.risk,
    threeDSecure: row.three_d_secure,
    authCode: row.auth_code,
    declineCode: row.decline_code,
    customerId: row.customer_id,
    metadata: row.metadata,
    paymentLinkId: row.payment_link_id,
    subscriptionId: row.subscription_id,
    subscriptionCycle: row.subscription_cycle,
    refundAmount: row.refund_reserved_minor,
    refundableAmount: Math.max(0, refundableMinor(row)),
    createdAt: row.created_at,
    completedAt: row.completed_at,
  }
}

export function paymentRowToPayment(row: PaymentRow): Payment {
  // The answer's fields in one place (paymentViewOf), the rest of the row beside them.
  return {
    ...paymentViewOf(row),
    sessionId: row.session_id,
    cardToken: row.card_token,
    captureRequested: row.capture_requested,
    correlationId: row.correlation_id,
    saveCard: row.save_card,
    callbackUrl: row.callback_url,
    voidReason: row.void_reason,
    refundCompletedAmount: row.refund_completed_minor,
    commissionRefunded: row.commission_refunded_minor,
    chargebackOpenAmount: row.chargeback_open_minor,
    chargebackTotalAmount: row.chargeback_total_minor,
    shares: row.shares,
    authorizedAt: row.authorized_at,
    testClockId: row.test_clock_id,
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
    capturedAmount: p.capturedAmount,
    commission: p.commission,
    netAmount: p.netAmount,
    installmentCount: p.installmentCount,
    cardMask: p.cardMask,
    cardBrand: p.cardBrand,
    refundAmount: p.refundAmount,
    refundableAmount: p.refundableAmount,
    metadata: p.metadata,
    paymentLinkId: p.paymentLinkId,
    subscriptionId: p.subscriptionId,
    subscriptionCycle: p.subscriptionCycle,
    ...(p.declineCode ? { declineCode: p.declineCode } : {}),
    createdAt: p.createdAt.toISOString(),
    completedAt: p.completedAt?.toISOString() ?? null,
  }
}

/** A completed capture as the API lists it. */
export interface CaptureView {
  id: string
  amount: number
  commission: number
  final: boolean
  createdAt: Date
}

export function captureRowToCapture(row: CaptureRow): CaptureView {
  return { ...captureAnswerOf(row), commission: row.commission, final: row.final }
}

/** A capture as a payment's answer lists it, dated by its completion. */
export function captureAnswerOf(
  row: Pick<CaptureRow, 'id' | 'amount' | 'created_at' | 'completed_at'>,
): CaptureAnswer {
  return { id: row.id, amount: row.amount, createdAt: row.completed_at ?? row.created_at }
}

/** A payment with its completed captures, oldest first (single-payment reads). */
export interface PaymentDetail extends Payment {
  captures: CaptureView[]
}

/** A capture as a payment's answer lists it. */
export type CaptureAnswer = Pick<CaptureView, 'id' | 'amount' | 'createdAt'>

/** GET /v1/payments/{id}: the answer's fields and its completed captures. */
export interface PaymentViewDetail extends PaymentView {
  captures: CaptureAnswer[]
}

export function cardMask(bin: string, last4: string, brand: string): string {
  // Vault tokens keep BIN and last four only; American Express numbers are 15 digits.
  const length = brand === 'amex' ? 15 : 16
  return bin + '*'.repeat(length - bin.length - last4.length) + last4
}
