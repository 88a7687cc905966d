import type { Db, Tx } from '../../database.ts'
import type { PosPaymentRow, PosRefundRow } from './pos.table.ts'
import type {
  AcquirerReconciliationItemsTable,
  AcquirerReconciliationRunsTable,
  ReconciliationItemRow,
  ReconciliationRunRow,
} from './reconciliation.table.ts'
import type { Insertable } from 'kysely'

/** Our orders on a POS whose authorization was sent in [start, end). */
export function findPosPaymentsBetween(
  db: Db,
  posAccountId: string,
  start: Date,
  end: Date,
): Promise<PosPaymentRow[]> {
  return db
    .selectFrom('acquirer_pos_payments')
    .selectAll()
    .where('pos_account_id', '=', posAccountId)
    .where('created_at', '>=', start)
    .where('created_at', '<', end)
    .orderBy('created_at')
    .execute()
}

export function findPosPaymentsByIds(db: Db, ids: readonly string[]): Promise<PosPaymentRow[]> {
  if (ids.length === 0) return Promise.resolve([])
  return db.selectFrom('acquirer_pos_payments').selectAll().where('payment_id', 'in', ids).execute()
}

export function findPosRefundsOf(db: Db, paymentIds: readonly string[]): Promise<PosRefundRow[]> {
  if (paymentIds.length === 0) return Promise.resolve([])
  return db
    .selectFrom('acquirer_pos_refunds')
    .selectAll()
    .where('payment_id', 'in', paymentIds)
    .execute()
}

export async function upsertRun(
  tx: Tx,
  row: Insertable<AcquirerReconciliationRunsTable>,
): Promise<void> {
  await tx
    .insertInto('acquirer_reconciliation_runs')
    .values(row)
    .onConflict((oc) =>
      oc.columns(['pos_account_id', 'bank_date']).doUpdateSet({
        method: row.method,
        checked_orders: row.checked_orders,
        mismatches: row.mismatches,
        ran_at: row.ran_at,
      }),
    )
    .execute()
}

/** Inserts the item unless that difference is known already; whether it is new. */
export async function insertItemOnce(
  tx: Tx,
  row: Insertable<AcquirerReconciliationItemsTable>,
): Promise<boolean> {
  const inserted = await tx
    .insertInto('acquirer_reconciliation_items')
    .values(row)
    .onConflict((oc) =>
      oc.columns(['pos_account_id', 'bank_date', 'order_id', 'kind', 'field']).doNothing(),
    )
    .returning('id')
    .executeTakeFirst()
  return inserted !== undefined
}

export function findRun(
  db: Db,
  posAccountId: string,
  bankDate: string,
): Promise<ReconciliationRunRow | undefined> {
  return db
    .selectFrom('acquirer_reconciliation_runs')
    .selectAll()
    .where('pos_account_id', '=', posAccountId)
    .where('bank_date', '=', bankDate)
    .executeTakeFirst()
}

/** A page of the day's differences by id; `merchantId` narrows a platform POS to one merchant's. */
export function findItems(
  db: Db,
  q: {
    posAccountId: string
    bankDate: string
    merchantId?: string | undefined
    after?: string | undefined
    limit: number
  },
): Promise<ReconciliationItemRow[]> {
  let query = db
    .selectFrom('acquirer_reconciliation_items')
    .selectAll()
    .where('pos_account_id', '=', q.posAccountId)
    .where('bank_date', '=', q.bankDate)
  if (q.merchantId !== undefined) query = query.where('merchant_id', '=', q.merchantId)
  if (q.after !== undefined) query = query.where('id', '>', q.after)
  return query.orderBy('id').limit(q.limit).execute()
}

/**
 * The accounts a daily run still owes a day: those that took an order of ours that day
 * (approved, or unknown to us) and have no run for it yet.
 */
export async function findAccountsToReconcile(
  db: Db,
  day: { start: Date; end: Date; date: string },
): Promise<string[]> {
  const rows = await db
    .selectFrom('acquirer_pos_payments as p')
    .innerJoin('acquirer_pos_accounts as a', 'a.id', 'p.pos_account_id')
    .select('p.pos_account_id as id')
    .distinct()
    .where('p.created_at', '>=', day.start)
    .where('p.created_at', '<', day.end)
    .where('p.state', 'in', ['approved', 'unknown'])
    .where('a.deleted_at', 'is', null)
    .where((eb) =>
      eb.not(
        eb.exists(
          eb
            .selectFrom('acquirer_reconciliation_runs as r')
            .select('r.pos_account_id')
            .whereRef('r.pos_account_id', '=', 'p.pos_account_id')
            .where('r.bank_date', '=', day.date),
        ),
      ),
    )
    .orderBy('p.pos_account_id')
    .execute()
  return rows.flatMap((r) => (r.id === null ? [] : [r.id]))
}
