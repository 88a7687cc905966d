import { countChargebacks, listChargebacks, type ChargebackStatus } from '../disputes/index.ts'
import { createHash } from 'node:crypto'
import type { Deps } from '../../database.ts'
import { assert } from '../../platform/assert.ts'
import { signedCursor } from '../../platform/cursor.ts'
import { validationError } from '../../platform/errors.ts'
import { legsForPayment, type LegView } from '../ledger/index.ts'
import {
  findPaymentWithRefunds,
  searchPayments,
  type PaymentSearchEntry,
  type PaymentSearchFilter,
  type PaymentStatus,
  type RefundStatus,
  type SearchPosition,
} from '../payments/index.ts'
import { transactionsError } from './transactions.errors.ts'

// The transactions read model: lists, details and ledger legs of payments, read through the
// payments and ledger modules' public functions (this module owns no payment SQL).

export const LIST_LIMIT_MAX = 100

/** Filters shared by the list and exports; dates already parsed, all optional. */
export type TransactionFilters = Omit<PaymentSearchFilter, 'merchantId'>

export interface TransactionListItem extends PaymentSearchEntry {
  /** Chargeback records of the payment: 0 until the disputes module supplies them. */
  chargebacksCount: number
}

/** Refund record inside a transaction detail. */
export interface TransactionRefund {
  refundId: string
  amount: number
  status: RefundStatus
  reason: string | null
  createdAt: Date
  completedAt: Date | null
}

/** A chargeback inside a transaction detail, from the disputes module. */
export interface TransactionChargeback {
  chargebackId: string
  amount: number
  status: ChargebackStatus
  reasonCode: string
  receivedAt: Date
}

export interface TransactionDetail {
  id: string
  storeId: string
  transactionId: string
  method: 'card' | 'qr'
  status: PaymentStatus
  amount: number
  currency: 'TRY'
  commission: number
  netAmount: number
  customerId: string | null
  refundAmount: number
  refunds: TransactionRefund[]
  refundsCount: number
  chargebacks: TransactionChargeback[]
  chargebacksCount: number
  chargebackOpenAmount: number
  chargebackTotalAmount: number
  createdAt: Date
  completedAt: Date | null
}

/** 400 for filter combinations that can match nothing by construction. */
export function checkFilters(f: TransactionFilters, prefix = ''): void {
  if (f.from && f.to && f.from.getTime() > f.to.getTime()) {
    throw validationError(`${prefix}from`, 'must not be after to')
  }
  if (f.amountMin !== undefined && f.amountMax !== undefined && f.amountMin > f.amountMax) {
    throw validationError(`${prefix}amountMin`, 'must not be greater than amountMax')
  }
}

// Cursors: signed with a key of their own (derived from the master key for this purpose),
// bound to the merchant and to the filters they were issued under, so a cursor cannot be
// edited, replayed against another merchant, or reused with different filters.
// The position is the row's created_at to the microsecond (as the search orders it) and id.
const CREATED_KEY = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/
const LIST_CURSOR = signedCursor<SearchPosition>('transactions', 'kurus/transactions/list-cursor', {
  write: (at) => ({ t: at.createdKey, i: at.id }),
  read: ({ t, i }) =>
    typeof t === 'string' && CREATED_KEY.test(t) && typeof i === 'string'
      ? { createdKey: t, id: i }
      : undefined,
})

function filtersFingerprint(f: TransactionFilters): string {
  const canonical = JSON.stringify([
    f.status ?? null,
    f.storeId ?? null,
    f.customerId ?? null,
    f.paymentId ?? null,
    f.method ?? null,
    f.from?.toISOString() ?? null,
    f.to?.toISOString() ?? null,
    f.amountMin ?? null,
    f.amountMax ?? null,
    // The dashboard's search text; absent from API requests, so their cursors are unchanged.
    ...(f.q !== undefined ? [f.q] : []),
    ...(f.metadata ? [f.metadata.key, f.metadata.value] : []),
  ])
  return createHash('sha256').update(canonical).digest('base64url').slice(0, 16)
}

/** The merchant's payments, newest first, `limit` per page; `nextCursor` null on the last. */
export async function listTransactions(
  deps: Deps,
  merchantId: string,
  filters: TransactionFilters,
  page: { limit: number; cursor?: string },
): Promise<{ items: TransactionListItem[]; nextCursor: string | null }> {
  assert(Number.isInteger(page.limit) && page.limit >= 1 && page.limit <= LIST_LIMIT_MAX, 'limit')
  checkFilters(filters)
  const scope = { m: merchantId, f: filtersFingerprint(filters) }
  return LIST_CURSOR.page(deps.config.masterKey, scope, page, {
    fetch: (after, limit) => searchPayments(deps, { ...filters, merchantId }, after, limit),
    view: async (rows) => {
      const counts = await countChargebacks(
        deps,
        merchantId,
        rows.map((r) => r.id),
      )
      return rows.map((r) => ({ ...r, chargebacksCount: counts.get(r.id) ?? 0 }))
    },
    position: (row) => row.position,
  })
}

export async function getTransaction(
  deps: Deps,
  merchantId: string,
  paymentId: string,
): Promise<TransactionDetail> {
  const found = await findPaymentWithRefunds(deps, merchantId, paymentId)
  if (!found) throw transactionsError('transaction_not_found')
  const { payment: p, refunds } = found
  const chargebacks: TransactionChargeback[] = (
    await listChargebacks(deps, merchantId, paymentId)
  ).map((c) => ({
    chargebackId: c.id,
    amount: c.amount,
    status: c.status,
    reasonCode: c.reasonCode,
    receivedAt: c.receivedAt,
  }))
  return {
    id: p.id,
    storeId: p.storeId,
    transactionId: p.transactionId,
    method: p.method,
    status: p.status,
    amount: p.amount,
    currency: p.currency,
    commission: p.commission,
    netAmount: p.netAmount,
    customerId: p.customerId,
    refundAmount: p.refundAmount,
    refunds: refunds.map((r) => ({
      refundId: r.id,
      amount: r.amount,
      status: r.status,
      reason: r.reason,
      createdAt: r.createdAt,
      completedAt: r.completedAt,
    })),
    // The same rule as the list: completed and in-flight refund records.
    refundsCount: refunds.filter((r) => r.status !== 'failed').length,
    chargebacks,
    chargebacksCount: chargebacks.length,
    chargebackOpenAmount: p.chargebackOpenAmount,
    chargebackTotalAmount: p.chargebackTotalAmount,
    createdAt: p.createdAt,
    completedAt: p.completedAt,
  }
}

/** The ledger legs posted for a payment (none for authorizations, voids and failures). */
export async function getTransactionLedger(
  deps: Deps,
  merchantId: string,
  paymentId: string,
): Promise<LegView[]> {
  // The payment must be this merchant's: the legs query alone would answer [] for another
  // merchant's id, which must be a 404 instead.
  const found = await findPaymentWithRefunds(deps, merchantId, paymentId)
  if (!found) throw transactionsError('transaction_not_found')
  return legsForPayment(deps.db, merchantId, paymentId)
}
