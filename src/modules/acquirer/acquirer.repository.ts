import { sql } from 'kysely'
import type { Db, Tx } from '../../database.ts'
import { ASYNC_COMMIT } from '../../platform/db/transaction.ts'
import type {
  NewOperation,
  NewThreeDs,
  OperationRow,
  OperationStatus,
  ThreeDsRow,
} from './acquirer.table.ts'

/** The payment's single authorize or void operation, if the bank has one. */
export function findPaymentOperation(
  db: Db,
  op: 'authorize' | 'void',
  paymentId: string,
): Promise<OperationRow | undefined> {
  return db
    .selectFrom('acquirer_sandbox_operations')
    .selectAll()
    .where('op', '=', op)
    .where('payment_id', '=', paymentId)
    .executeTakeFirst()
}

/** Locks the authorization: captures, voids and refunds of one payment run one at a time. */
export function lockAuthorization(tx: Tx, paymentId: string): Promise<OperationRow | undefined> {
  return tx
    .selectFrom('acquirer_sandbox_operations')
    .selectAll()
    .where('op', '=', 'authorize')
    .where('payment_id', '=', paymentId)
    .forUpdate()
    .executeTakeFirst()
}

/**
 * Inserts an authorize, capture or void unless the payment already has one (a concurrent
 * retry won). Returns whether this row was the one stored.
 */
export async function insertPaymentOperationOnce(db: Db, row: NewOperation): Promise<boolean> {
  const result = await db
    .insertInto('acquirer_sandbox_operations')
    .values(row)
    .onConflict((oc) => oc.column('payment_id').where('op', '=', sql.lit(row.op)).doNothing())
    .executeTakeFirst()
  return (result.numInsertedOrUpdatedRows ?? 0n) > 0n
}

/** Inserts the payment's operation of this kind unless one exists; the one stored either way. */
export async function insertPaymentOperationOrGet(
  db: Db,
  row: NewOperation,
): Promise<OperationRow> {
  // The sandbox bank stands for a remote system: its rows commit without waiting for the WAL
  // flush, and the payment's outcome, a synchronous commit, follows and flushes them
  // (docs/performance.md). A server crash before that loses an answer nobody recorded: the
  // payment stays `pending` and the reconciler's inquiry finds no operation (a safe "no").
  const inserted = await db
    .insertInto('acquirer_sandbox_operations')
    .values(row)
    .onConflict((oc) => oc.column('payment_id').where('op', '=', sql.lit(row.op)).doNothing())
    .returningAll()
    .returning(ASYNC_COMMIT)
    .executeTakeFirst()
  if (inserted) {
    const { async_commit: _, ...operation } = inserted
    return operation
  }
  const stored = await findPaymentOperation(db, row.op as 'authorize' | 'void', row.payment_id)
  if (!stored) throw new Error(`operation ${row.op} of ${row.payment_id} vanished`)
  return stored
}

/** The payment's captures, oldest first (several since partial captures). */
export function findCaptureOperations(db: Db, paymentId: string): Promise<OperationRow[]> {
  return db
    .selectFrom('acquirer_sandbox_operations')
    .selectAll()
    .where('op', '=', 'capture')
    .where('payment_id', '=', paymentId)
    .orderBy('created_at')
    .orderBy('id')
    .execute()
}

/** A capture, under the authorization's lock (its id is unique: a retry is found first). */
export async function insertCaptureOperation(tx: Tx, row: NewOperation): Promise<void> {
  await tx.insertInto('acquirer_sandbox_operations').values(row).execute()
}

export async function insertRefundOperation(tx: Tx, row: NewOperation): Promise<void> {
  await tx.insertInto('acquirer_sandbox_operations').values(row).execute()
}

export function findRefundOperation(db: Db, refundId: string): Promise<OperationRow | undefined> {
  return db
    .selectFrom('acquirer_sandbox_operations')
    .selectAll()
    .where('op', '=', 'refund')
    .where('refund_id', '=', refundId)
    .executeTakeFirst()
}

export function lockRefundOperation(tx: Tx, refundId: string): Promise<OperationRow | undefined> {
  return tx
    .selectFrom('acquirer_sandbox_operations')
    .selectAll()
    .where('op', '=', 'refund')
    .where('refund_id', '=', refundId)
    .forUpdate()
    .executeTakeFirst()
}

/** Refunds of a payment that still hold (or have taken) money: pending and completed. */
export async function sumActiveRefunds(tx: Tx, paymentId: string): Promise<number> {
  // sum(bigint) is numeric, which the drivers return as text; the cast back to bigint gets
  // the int8 parser (exact, checked below 2^53).
  const row = await tx
    .selectFrom('acquirer_sandbox_operations')
    .select(sql<number>`coalesce(sum(amount), 0)::bigint`.as('total'))
    .where('op', '=', 'refund')
    .where('payment_id', '=', paymentId)
    .where('status', 'in', ['pending', 'completed'])
    .executeTakeFirstOrThrow()
  return row.total
}

export async function updateRefundStatus(
  tx: Tx,
  refundId: string,
  status: OperationStatus,
  at: Date,
): Promise<void> {
  await tx
    .updateTable('acquirer_sandbox_operations')
    .set({ status, updated_at: at })
    .where('op', '=', 'refund')
    .where('refund_id', '=', refundId)
    .where('status', '=', 'pending')
    .execute()
}

export function findThreeDsByPayment(db: Db, paymentId: string): Promise<ThreeDsRow | undefined> {
  return db
    .selectFrom('acquirer_sandbox_3ds')
    .selectAll()
    .where('payment_id', '=', paymentId)
    .executeTakeFirst()
}

export function findThreeDsByCorrelation(
  db: Db,
  correlationId: string,
): Promise<ThreeDsRow | undefined> {
  return db
    .selectFrom('acquirer_sandbox_3ds')
    .selectAll()
    .where('correlation_id', '=', correlationId)
    .executeTakeFirst()
}

/** Inserts the payment's 3-D Secure row unless one exists; the one stored either way. */
export async function insertThreeDsOrGet(db: Db, row: NewThreeDs): Promise<ThreeDsRow> {
  // Asynchronous commit as the bank's operations (above): the payment's next synchronous
  // commit (pending_3ds, or the outcome) flushes it before anyone acts on it.
  const inserted = await db
    .insertInto('acquirer_sandbox_3ds')
    .values(row)
    .onConflict((oc) => oc.column('payment_id').doNothing())
    .returningAll()
    .returning(ASYNC_COMMIT)
    .executeTakeFirst()
  if (inserted) {
    const { async_commit: _, ...threeDs } = inserted
    return threeDs
  }
  const stored = await findThreeDsByPayment(db, row.payment_id)
  if (!stored) throw new Error(`3-D Secure row of ${row.payment_id} vanished`)
  return stored
}

export async function updateThreeDsResult(
  db: Db,
  correlationId: string,
  result: 'Y' | 'N',
  at: Date,
): Promise<void> {
  await db
    .updateTable('acquirer_sandbox_3ds')
    .set({ result, completed_at: at })
    .where('correlation_id', '=', correlationId)
    .execute()
}
