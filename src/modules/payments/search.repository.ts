import { sql } from 'kysely'
import type { Db } from '../../database.ts'
import type { PaymentStatus } from './payments.table.ts'

// Read-only search over payments for the transactions read model (modules/transactions):
// the SQL stays here, beside the tables it reads; transactions calls search.service.ts.
// Every query pages by keyset on (created_at desc, id desc) inside one merchant, so a page
// costs the same at row 10 and at row 10,000,000 (indexes: migrations 0040 and 0061).

export interface PaymentSearchFilter {
  merchantId: string
  status?: PaymentStatus
  storeId?: string
  customerId?: string
  paymentId?: string
  method?: 'card' | 'qr'
  /** created_at >= from */
  from?: Date
  /** created_at < to */
  to?: Date
  amountMin?: number
  amountMax?: number
  /**
   * The dashboard's search box: a payment whose id or transactionId is exactly this, or (four
   * digits) whose card ends in it.
   */
  q?: string
  /** One exact metadata pair (GIN index payments_metadata_idx, migration 0251). */
  metadata?: { key: string; value: string }
}

/**
 * A keyset position: the last row's created_at at full (microsecond) precision as text,
 * and its id. A JS Date keeps milliseconds only, and a position rounded down would skip
 * rows that share the millisecond with a smaller id.
 */
export interface SearchPosition {
  createdKey: string
  id: string
}

export interface PaymentSearchRow {
  id: string
  store_id: string
  transaction_id: string
  method: 'card' | 'qr'
  status: PaymentStatus
  amount: number
  currency: 'TRY'
  commission: number
  captured_minor: number
  customer_id: string | null
  card_mask: string | null
  card_brand: string | null
  installment_count: number
  refund_reserved_minor: number
  refund_completed_minor: number
  chargeback_open_minor: number
  chargeback_total_minor: number
  created_at: Date
  created_key: string
  refunds_count: number
}

// The keyset's text form: ISO 8601 UTC with microseconds, read back with ::timestamptz.
const CREATED_KEY = sql<string>`to_char(p.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`

export async function findPaymentPage(
  db: Db,
  filter: PaymentSearchFilter,
  after: SearchPosition | undefined,
  limit: number,
): Promise<PaymentSearchRow[]> {
  let query = db
    .selectFrom('payments as p')
    .select([
      'p.id',
      'p.store_id',
      'p.transaction_id',
      'p.method',
      'p.status',
      'p.amount',
      'p.currency',
      'p.commission',
      'p.captured_minor',
      'p.customer_id',
      'p.card_mask',
      'p.card_brand',
      'p.installment_count',
      'p.refund_reserved_minor',
      'p.refund_completed_minor',
      'p.chargeback_open_minor',
      'p.chargeback_total_minor',
      'p.created_at',
      CREATED_KEY.as('created_key'),
      // Refund records that count against the payment: completed and still in flight. A
      // correlated count runs only for the rows the page returns (refunds_payment_idx).
      (eb) =>
        eb
          .selectFrom('refunds as r')
          .select(eb.fn.countAll<number>().as('n'))
          .where('r.merchant_id', '=', filter.merchantId)
          .whereRef('r.payment_id', '=', 'p.id')
          .where('r.status', 'in', ['pending', 'completed'])
          .as('refunds_count'),
    ])
    .where('p.merchant_id', '=', filter.merchantId)
  if (filter.status !== undefined) query = query.where('p.status', '=', filter.status)
  if (filter.storeId !== undefined) query = query.where('p.store_id', '=', filter.storeId)
  if (filter.customerId !== undefined) query = query.where('p.customer_id', '=', filter.customerId)
  if (filter.paymentId !== undefined) query = query.where('p.id', '=', filter.paymentId)
  if (filter.method !== undefined) query = query.where('p.method', '=', filter.method)
  if (filter.from !== undefined) query = query.where('p.created_at', '>=', filter.from)
  if (filter.to !== undefined) query = query.where('p.created_at', '<', filter.to)
  if (filter.amountMin !== undefined) query = query.where('p.amount', '>=', filter.amountMin)
  if (filter.amountMax !== undefined) query = query.where('p.amount', '<=', filter.amountMax)
  const q = filter.q
  if (q !== undefined) {
    query = query.where((eb) =>
      eb.or([
        eb('p.id', '=', q),
        eb('p.transaction_id', '=', q),
        // payments_merchant_last4_created_idx (migration 0233) serves this expression.
        ...(/^\d{4}$/.test(q) ? [eb(sql<string>`right(p.card_mask, 4)`, '=', q)] : []),
      ]),
    )
  }
  if (filter.metadata !== undefined) {
    // Containment (@>) is what the GIN jsonb_path_ops index answers; `->>` would not use it.
    const pair = JSON.stringify({ [filter.metadata.key]: filter.metadata.value })
    query = query.where(sql<boolean>`p.metadata @> ${pair}::jsonb`)
  }
  if (after !== undefined) {
    // A row comparison, which PostgreSQL turns into one index condition on (created_at, id).
    query = query.where(
      sql<boolean>`(p.created_at, p.id) < (${after.createdKey}::timestamptz, ${after.id}::text)`,
    )
  }
  const rows = await query
    .orderBy('p.created_at', 'desc')
    .orderBy('p.id', 'desc')
    .limit(limit)
    .execute()
  return rows.map((r) => ({ ...r, refunds_count: r.refunds_count ?? 0 }))
}
