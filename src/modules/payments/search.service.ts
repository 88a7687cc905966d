import type { Deps } from '../../database.ts'
import { assert } from '../../platform/assert.ts'
import { chargedAmounts, paymentRowToPayment, type Payment } from './payment-view.ts'
import * as repo from './payments.repository.ts'
import * as refundsRepo from './refunds.repository.ts'
import { PAYMENTS, type PaymentStatus } from './payments.table.ts'
import { refundRowToRefund, type Refund } from './refunds.service.ts'
import * as search from './search.repository.ts'

// Read-only queries that modules/transactions (the read model) needs over payments and
// refunds. Nothing here writes; nothing here throws a 404 (the caller decides what a missing
// payment means for its own resource).

export type { PaymentSearchFilter, SearchPosition } from './search.repository.ts'

/** Every payment status, in the state machine's order (the dashboard's filter lists them). */
export const PAYMENT_STATUSES: readonly PaymentStatus[] = PAYMENTS.statuses

export function isPaymentStatus(value: string): value is PaymentStatus {
  return PAYMENTS.has(value)
}

/** One payment as a list or export row shows it. */
export interface PaymentSearchEntry {
  id: string
  storeId: string
  transactionId: string
  method: 'card' | 'qr'
  status: PaymentStatus
  amount: number
  currency: 'TRY'
  /** Sum of the completed captures. */
  capturedAmount: number
  commission: number
  netAmount: number
  customerId: string | null
  cardMask: string | null
  cardBrand: string | null
  installmentCount: number
  /** Completed plus in-flight refund amounts. */
  refundAmount: number
  refundCompletedAmount: number
  /** Refund records that are completed or pending (failed ones do not count). */
  refundsCount: number
  chargebackOpenAmount: number
  chargebackTotalAmount: number
  createdAt: Date
  /** Where the next page starts if this row is the last one of a page. */
  position: search.SearchPosition
}

// Bounds one round trip: a list page asks for at most 101 rows, an export batch for 1000.
export const SEARCH_LIMIT_MAX = 1000

/** Payments matching `filter`, newest first (created_at desc, id desc), after `after`. */
export async function searchPayments(
  deps: Deps,
  filter: search.PaymentSearchFilter,
  after: search.SearchPosition | undefined,
  limit: number,
): Promise<PaymentSearchEntry[]> {
  assert(Number.isInteger(limit) && limit >= 1 && limit <= SEARCH_LIMIT_MAX, 'search limit')
  // Lists and exports only: the read replica's pool when there is one (Deps.readDb).
  const rows = await search.findPaymentPage(deps.readDb, filter, after, limit)
  return rows.map((r) => ({
    id: r.id,
    storeId: r.store_id,
    transactionId: r.transaction_id,
    method: r.method,
    status: r.status,
    amount: r.amount,
    currency: r.currency,
    capturedAmount: r.captured_minor,
    // As on the payment: of the captured amount once anything is captured (pro rata).
    ...chargedAmounts(r.status, r.amount, r.commission, r.captured_minor),
    customerId: r.customer_id,
    cardMask: r.card_mask,
    cardBrand: r.card_brand,
    installmentCount: r.installment_count,
    refundAmount: r.refund_reserved_minor,
    refundCompletedAmount: r.refund_completed_minor,
    refundsCount: r.refunds_count,
    chargebackOpenAmount: r.chargeback_open_minor,
    chargebackTotalAmount: r.chargeback_total_minor,
    createdAt: r.created_at,
    position: { createdKey: r.created_key, id: r.id },
  }))
}

/** The payment and every refund record of it, oldest first; undefined if not this merchant's. */
export async function findPaymentWithRefunds(
  deps: Deps,
  merchantId: string,
  paymentId: string,
): Promise<{ payment: Payment; refunds: Refund[] } | undefined> {
  const row = await repo.findPaymentById(deps.db, merchantId, paymentId)
  if (!row) return undefined
  const refunds = await refundsRepo.findRefundsByPayment(deps.db, merchantId, paymentId)
  return { payment: paymentRowToPayment(row), refunds: refunds.map(refundRowToRefund) }
}

/** One page of every tenant's payments in id order, each with its refunds (for the audit). */
export async function auditPaymentsPage(
  deps: Pick<Deps, 'db'>,
  afterId: string,
  limit: number,
): Promise<
  {
    payment: Payment
    captureRequested: boolean
    refunds: Refund[]
    captures: AuditCapture[]
  }[]
> {
  const rows = await repo.findPaymentsPage(deps.db, afterId, limit)
  const ids = rows.map((r) => r.id)
  const refunds = await refundsRepo.findRefundsOfPayments(deps.db, ids)
  const byPayment = new Map<string, Refund[]>()
  for (const r of refunds) {
    const list = byPayment.get(r.payment_id) ?? []
    list.push(refundRowToRefund(r))
    byPayment.set(r.payment_id, list)
  }
  const captures = new Map<string, AuditCapture[]>()
  for (const c of await repo.findCapturesOfPayments(deps.db, ids)) {
    const list = captures.get(c.payment_id) ?? []
    list.push({
      id: c.id,
      amount: c.amount,
      commission: c.commission,
      final: c.final,
      status: c.status,
    })
    captures.set(c.payment_id, list)
  }
  return rows.map((row) => ({
    payment: paymentRowToPayment(row),
    captureRequested: row.capture_requested,
    refunds: byPayment.get(row.id) ?? [],
    captures: captures.get(row.id) ?? [],
  }))
}

/** A capture row as the audit sees it (every status). */
export interface AuditCapture {
  id: string
  amount: number
  commission: number
  final: boolean
  status: 'pending' | 'completed' | 'failed'
}
