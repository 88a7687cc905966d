import { sql, type Expression, type ExpressionBuilder } from 'kysely'
import { jsonObjectFrom } from 'kysely/helpers/postgres'
import type { Database, Db, Tx } from '../../database.ts'
import type {
  AcquirerPosAccountsTable,
  AcquirerPosPaymentsTable,
  PosAccountRow,
  PosAttempt,
  PosPaymentRow,
  PosRefundRow,
  RoutingRow,
} from './pos.table.ts'
import type { Insertable, Updateable } from 'kysely'

export function insertPosAccount(
  db: Db | Tx,
  row: Insertable<AcquirerPosAccountsTable>,
): Promise<PosAccountRow> {
  return db.insertInto('acquirer_pos_accounts').values(row).returningAll().executeTakeFirstOrThrow()
}

/** A merchant's own accounts and the platform's (merchantId null: the platform's only). */
export function findPosAccounts(db: Db, merchantId: string | null): Promise<PosAccountRow[]> {
  let q = db.selectFrom('acquirer_pos_accounts').selectAll().where('deleted_at', 'is', null)
  q =
    merchantId === null
      ? q.where('merchant_id', 'is', null)
      : q.where((eb) => eb.or([eb('merchant_id', '=', merchantId), eb('merchant_id', 'is', null)]))
  return q.orderBy('created_at').orderBy('id').execute()
}

/**
 * The merchant's accounts (findPosAccounts' rows) joined to a one-row select of other facts:
 * a merchant with none still gets its one row, with nulls in the account's columns.
 */
function accountsJoin(merchantId: string) {
  return sql`left join lateral (
      select * from acquirer_pos_accounts
      where deleted_at is null and (merchant_id = ${merchantId} or merchant_id is null)
      order by created_at, id
    ) as a on true`
}

/**
 * A charge's first look at the POS side, in one round trip (issue 43): whether this payment
 * already has its POS row or a bank 3D gate record (a retry or a 3-D Secure charge: the caller
 * reads them), and the accounts findPosAccounts
 * returns for the merchant. `recorded` comes on every row; with no account there is one row
 * whose account columns are all null.
 */
export async function findPosAccountsUnlessRecorded(
  db: Db,
  paymentId: string,
  merchantId: string,
): Promise<{ recorded: boolean; accounts: PosAccountRow[] }> {
  const { rows } = await sql<PosAccountRow & { recorded: boolean }>`
    select (exists (select 1 from acquirer_pos_payments where payment_id = ${paymentId})
        or exists (select 1 from acquirer_pos_3ds where payment_id = ${paymentId})) as recorded,
      a.*
    from (select 1) as one
    ${accountsJoin(merchantId)}`.execute(db)
  return {
    recorded: rows[0]?.recorded ?? false,
    // The one row of a merchant with no account has nulls in the account's columns.
    accounts: rows.filter((r) => r.id !== null).map(({ recorded: _, ...account }) => account),
  }
}

/**
 * A charge's 3-D Secure start at the POS side, in one round trip (issue 43): the correlation
 * id of this payment's bank 3D gate if it has one already (a repeat: answered from it), and
 * the accounts findPosAccounts returns for the merchant; shaped as
 * findPosAccountsUnlessRecorded.
 */
export async function findPosAccountsAnd3dsGate(
  db: Db,
  paymentId: string,
  merchantId: string,
): Promise<{ gateCorrelationId: string | null; accounts: PosAccountRow[] }> {
  const { rows } = await sql<PosAccountRow & { gate_correlation_id: string | null }>`
    select (select correlation_id from acquirer_pos_3ds where payment_id = ${paymentId})
        as gate_correlation_id,
      a.*
    from (select 1) as one
    ${accountsJoin(merchantId)}`.execute(db)
  return {
    gateCorrelationId: rows[0]?.gate_correlation_id ?? null,
    accounts: rows
      .filter((r) => r.id !== null)
      .map(({ gate_correlation_id: _, ...account }) => account),
  }
}

export function findPosAccount(db: Db, id: string): Promise<PosAccountRow | undefined> {
  return db.selectFrom('acquirer_pos_accounts').selectAll().where('id', '=', id).executeTakeFirst()
}

export function findPosAccountsByIds(db: Db, ids: readonly string[]): Promise<PosAccountRow[]> {
  if (ids.length === 0) return Promise.resolve([])
  return db.selectFrom('acquirer_pos_accounts').selectAll().where('id', 'in', ids).execute()
}

export function updatePosAccount(
  db: Db | Tx,
  id: string,
  patch: Updateable<AcquirerPosAccountsTable>,
): Promise<PosAccountRow | undefined> {
  return db
    .updateTable('acquirer_pos_accounts')
    .set(patch)
    .where('id', '=', id)
    .where('deleted_at', 'is', null)
    .returningAll()
    .executeTakeFirst()
}

export function findRouting(db: Db, merchantId: string): Promise<RoutingRow | undefined> {
  return db
    .selectFrom('acquirer_routing')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .executeTakeFirst()
}

export function upsertRouting(
  db: Db,
  row: { merchant_id: string; rules: string; default_order: string; updated_at: Date },
): Promise<RoutingRow> {
  return db
    .insertInto('acquirer_routing')
    .values(row)
    .onConflict((oc) =>
      oc.column('merchant_id').doUpdateSet({
        rules: row.rules,
        default_order: row.default_order,
        updated_at: row.updated_at,
      }),
    )
    .returningAll()
    .executeTakeFirstOrThrow()
}

export function findPosPayment(db: Db, paymentId: string): Promise<PosPaymentRow | undefined> {
  return db
    .selectFrom('acquirer_pos_payments')
    .selectAll()
    .where('payment_id', '=', paymentId)
    .executeTakeFirst()
}

/**
 * The payment's POS row's public facts as one JSON object (null without a POS row), for a
 * statement of another module that reads the payment: GET /v1/payments/{id} in one round
 * trip, with this table's SQL kept here.
 */
export function posPaymentJsonOf(
  eb: ExpressionBuilder<Database, 'payments'>,
  paymentId: Expression<string>,
) {
  return jsonObjectFrom(
    eb
      .selectFrom('acquirer_pos_payments')
      .select([
        'acquirer_pos_payments.pos_account_id',
        'acquirer_pos_payments.provider',
        'acquirer_pos_payments.bank',
        'acquirer_pos_payments.auth_code',
        'acquirer_pos_payments.host_reference',
        'acquirer_pos_payments.attempts',
      ])
      .where('acquirer_pos_payments.payment_id', '=', paymentId),
  )
}

/** The first writer's row wins: a concurrent retry of the same payment gets undefined. */
export async function insertPosPayment(
  db: Db,
  row: Insertable<AcquirerPosPaymentsTable>,
): Promise<PosPaymentRow | undefined> {
  return db
    .insertInto('acquirer_pos_payments')
    .values(row)
    .onConflict((oc) => oc.column('payment_id').doNothing())
    .returningAll()
    .executeTakeFirst()
}

export function updatePosPayment(
  db: Db,
  paymentId: string,
  patch: Updateable<AcquirerPosPaymentsTable>,
): Promise<PosPaymentRow | undefined> {
  return db
    .updateTable('acquirer_pos_payments')
    .set(patch)
    .where('payment_id', '=', paymentId)
    .returningAll()
    .executeTakeFirst()
}

/** Appends an attempt and points the row at the POS it went to. */
export function recordAttempt(
  db: Db,
  paymentId: string,
  attempt: PosAttempt,
  patch: Updateable<AcquirerPosPaymentsTable>,
): Promise<PosPaymentRow | undefined> {
  return db
    .updateTable('acquirer_pos_payments')
    .set({
      ...patch,
      attempts: sql`attempts || ${JSON.stringify([attempt])}::jsonb`,
    })
    .where('payment_id', '=', paymentId)
    .returningAll()
    .executeTakeFirst()
}

export function findPosRefund(db: Db, refundId: string): Promise<PosRefundRow | undefined> {
  return db
    .selectFrom('acquirer_pos_refunds')
    .selectAll()
    .where('refund_id', '=', refundId)
    .executeTakeFirst()
}

export function findPosRefunds(db: Db, paymentId: string): Promise<PosRefundRow[]> {
  return db
    .selectFrom('acquirer_pos_refunds')
    .selectAll()
    .where('payment_id', '=', paymentId)
    .execute()
}

export function insertPosRefund(db: Db, row: PosRefundRow): Promise<PosRefundRow | undefined> {
  return db
    .insertInto('acquirer_pos_refunds')
    .values(row)
    .onConflict((oc) => oc.column('refund_id').doNothing())
    .returningAll()
    .executeTakeFirst()
}

export function updatePosRefund(
  db: Db,
  refundId: string,
  patch: { state: PosRefundRow['state']; bank_code: string | null; updated_at: Date },
): Promise<void> {
  return db
    .updateTable('acquirer_pos_refunds')
    .set(patch)
    .where('refund_id', '=', refundId)
    .execute()
    .then(() => undefined)
}
