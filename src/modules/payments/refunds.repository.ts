import type { Db, Tx } from '../../database.ts'
import {
  PAYMENTS,
  REFUNDS,
  type NewRefund,
  type RefundRow,
  type RefundStatus,
  type PaymentRow,
  type PaymentStatus,
} from './payments.table.ts'

// Refunds: the rows, their claims and retries, and the payment's refund totals.

export async function insertRefund(tx: Tx, row: NewRefund): Promise<void> {
  await tx.insertInto('refunds').values(row).execute()
}

export function findRefundByKey(
  db: Db,
  merchantId: string,
  paymentId: string,
  idempotencyKey: string,
): Promise<RefundRow | undefined> {
  return db
    .selectFrom('refunds')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .where('payment_id', '=', paymentId)
    .where('idempotency_key', '=', idempotencyKey)
    .executeTakeFirst()
}

export function findRefundById(db: Db, refundId: string): Promise<RefundRow | undefined> {
  return db.selectFrom('refunds').selectAll().where('id', '=', refundId).executeTakeFirst()
}

export function lockRefundById(tx: Tx, refundId: string): Promise<RefundRow | undefined> {
  return tx
    .selectFrom('refunds')
    .selectAll()
    .where('id', '=', refundId)
    .forUpdate()
    .executeTakeFirst()
}

export function findRefundsByPayment(
  db: Db,
  merchantId: string,
  paymentId: string,
): Promise<RefundRow[]> {
  return db
    .selectFrom('refunds')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .where('payment_id', '=', paymentId)
    .orderBy('created_at')
    .orderBy('id')
    .execute()
}

export async function updateRefund(
  tx: Tx,
  refundId: string,
  from: RefundStatus,
  set: {
    status: RefundStatus
    bank_refund_id?: string
    commission_refund?: number
    completed_at?: Date
    updated_at: Date
  },
): Promise<RefundRow | undefined> {
  return tx
    .updateTable('refunds')
    .set(set)
    .where('id', '=', refundId)
    .where('status', 'in', REFUNDS.guard(set.status, [from]))
    .returningAll()
    .executeTakeFirst()
}

export async function touchRefund(db: Db, refundId: string, bankRefundId: string, at: Date) {
  await db
    .updateTable('refunds')
    .set({ bank_refund_id: bankRefundId, updated_at: at })
    .where('id', '=', refundId)
    .where('status', '=', 'pending')
    .execute()
}

export function findPendingRefunds(
  db: Db,
  updatedBefore: Date,
  limit: number,
): Promise<RefundRow[]> {
  return db
    .selectFrom('refunds')
    .selectAll()
    .where('status', '=', 'pending')
    .where('updated_at', '<=', updatedBefore)
    .orderBy('updated_at')
    .limit(limit)
    .execute()
}

/**
 * Refund bookkeeping on the payment row; callers hold its lock and pass the status they read,
 * so a status change here is still one the state machine allows.
 */
export async function updatePaymentRefundTotals(
  tx: Tx,
  paymentId: string,
  from: PaymentStatus,
  set: {
    refund_reserved_minor: number
    refund_completed_minor: number
    commission_refunded_minor: number
    status: PaymentStatus
    updated_at: Date
  },
): Promise<PaymentRow> {
  PAYMENTS.assertMove(from, set.status, `payment ${paymentId}`)
  return tx
    .updateTable('payments')
    .set(set)
    .where('id', '=', paymentId)
    .returningAll()
    .executeTakeFirstOrThrow()
}

export function findRefundsOfPayments(db: Db, paymentIds: readonly string[]): Promise<RefundRow[]> {
  if (paymentIds.length === 0) return Promise.resolve([])
  return db
    .selectFrom('refunds')
    .selectAll()
    .where('payment_id', 'in', paymentIds)
    .orderBy('created_at')
    .orderBy('id')
    .execute()
}
