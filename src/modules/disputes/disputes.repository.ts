import { sql } from 'kysely'
import type { Db, Tx } from '../../database.ts'
import type { ChargebackRow, ChargebackStatus, NewChargeback } from './disputes.table.ts'

export async function insertChargeback(tx: Tx, row: NewChargeback): Promise<void> {
  await tx.insertInto('chargebacks').values(row).execute()
}

export function findChargebacksByPayment(
  db: Db,
  merchantId: string,
  paymentId: string,
): Promise<ChargebackRow[]> {
  return db
    .selectFrom('chargebacks')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .where('payment_id', '=', paymentId)
    .orderBy('received_at')
    .orderBy('id')
    .execute()
}

export function lockChargeback(
  tx: Tx,
  merchantId: string,
  paymentId: string,
  chargebackId: string,
): Promise<ChargebackRow | undefined> {
  return tx
    .selectFrom('chargebacks')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .where('payment_id', '=', paymentId)
    .where('id', '=', chargebackId)
    .forUpdate()
    .executeTakeFirst()
}

/** The state machine's write: only from `received`, so two resolutions cannot both win. */
export function resolveChargeback(
  tx: Tx,
  chargebackId: string,
  to: Exclude<ChargebackStatus, 'received'>,
  at: Date,
): Promise<ChargebackRow | undefined> {
  return tx
    .updateTable('chargebacks')
    .set({ status: to, resolved_at: at })
    .where('id', '=', chargebackId)
    .where('status', '=', 'received')
    .returningAll()
    .executeTakeFirst()
}

export async function countChargebacksByPayments(
  db: Db,
  merchantId: string,
  paymentIds: readonly string[],
): Promise<{ payment_id: string; n: number }[]> {
  if (paymentIds.length === 0) return []
  return db
    .selectFrom('chargebacks')
    .select(['payment_id', (eb) => eb.fn.countAll<number>().as('n')])
    .where('merchant_id', '=', merchantId)
    .where('payment_id', 'in', paymentIds)
    .groupBy('payment_id')
    .execute()
}

/** Chargebacks still open (received, not yet accepted or reversed): how many, how much. */
export function sumOpenChargebacks(
  db: Db,
  merchantId: string,
): Promise<{ count: number; amount_minor: number } | undefined> {
  return db
    .selectFrom('chargebacks')
    .select([
      sql<number>`count(*)`.as('count'),
      sql<number>`coalesce(sum(amount), 0)::bigint`.as('amount_minor'),
    ])
    .where('merchant_id', '=', merchantId)
    .where('status', '=', 'received')
    .executeTakeFirst()
}

export function findChargebackById(
  db: Db,
  merchantId: string,
  chargebackId: string,
): Promise<ChargebackRow | undefined> {
  return db
    .selectFrom('chargebacks')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .where('id', '=', chargebackId)
    .executeTakeFirst()
}

export interface ChargebackPageQuery {
  merchantId: string
  status: ChargebackStatus | undefined
  before: { createdAt: Date; id: string } | undefined
  limit: number
}

/** The merchant's chargebacks, newest first (chargebacks_merchant_received_idx, 0280). */
export function findChargebackPage(db: Db, q: ChargebackPageQuery): Promise<ChargebackRow[]> {
  let query = db.selectFrom('chargebacks').selectAll().where('merchant_id', '=', q.merchantId)
  if (q.status !== undefined) query = query.where('status', '=', q.status)
  const { before } = q
  if (before) {
    query = query.where((eb) =>
      eb(eb.refTuple('received_at', 'id'), '<', eb.tuple(before.createdAt, before.id)),
    )
  }
  return query.orderBy('received_at', 'desc').orderBy('id', 'desc').limit(q.limit).execute()
}
