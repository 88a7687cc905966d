import { sql } from 'kysely'
import type { Db } from '../../database.ts'

// Aggregates over payments and refunds for the merchant dashboard's overview: read-only,
// one merchant, a time range (payments_merchant_created_idx, refunds_merchant_completed_idx).

export interface DailyPaymentFigures {
  /** The calendar day in `timeZone`, YYYY-MM-DD. */
  day: string
  captured_count: number
  captured_minor: number
  approved_count: number
  failed_count: number
}

const CAPTURED = sql`status in ('partially_captured', 'captured', 'refunded')`
// The bank said yes: authorized, then captured (in part or whole), voided or refunded.
const APPROVED = sql`status in ('authorized', 'partially_captured', 'captured', 'voided', 'refunded')`

export function findDailyPaymentFigures(
  db: Db,
  q: { merchantId: string; from: Date; to: Date; timeZone: string },
): Promise<DailyPaymentFigures[]> {
  // The zone is a literal (our own constant): GROUP BY must see the same expression as SELECT.
  const day = sql<string>`to_char(created_at at time zone ${sql.lit(q.timeZone)}, 'YYYY-MM-DD')`
  return db
    .selectFrom('payments')
    .select([
      day.as('day'),
      sql<number>`count(*) filter (where ${CAPTURED})`.as('captured_count'),
      sql<number>`coalesce(sum(captured_minor) filter (where ${CAPTURED}), 0)::bigint`.as(
        'captured_minor',
      ),
      sql<number>`count(*) filter (where ${APPROVED})`.as('approved_count'),
      sql<number>`count(*) filter (where status = 'failed')`.as('failed_count'),
    ])
    .where('merchant_id', '=', q.merchantId)
    .where('created_at', '>=', q.from)
    .where('created_at', '<', q.to)
    .groupBy(day)
    .orderBy(day)
    .execute()
}

export function sumCompletedRefunds(
  db: Db,
  q: { merchantId: string; from: Date; to: Date },
): Promise<{ count: number; amount_minor: number } | undefined> {
  return db
    .selectFrom('refunds')
    .select([
      sql<number>`count(*)`.as('count'),
      sql<number>`coalesce(sum(amount), 0)::bigint`.as('amount_minor'),
    ])
    .where('merchant_id', '=', q.merchantId)
    .where('status', '=', 'completed')
    .where('completed_at', '>=', q.from)
    .where('completed_at', '<', q.to)
    .executeTakeFirst()
}
