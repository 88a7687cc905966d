import { sql } from 'kysely'
import type { Db, Tx } from '../../database.ts'
import {
  CHARGEBACKS,
  type ChargebackResolution,
  type ChargebackRow,
  type ChargebackStatus,
  type EvidenceDraft,
  type NewChargeback,
} from './disputes.table.ts'

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

/**
 * The state machine's write: only from those of `from` that CHARGEBACKS allows into `to`, so
 * two moves of one chargeback cannot both win and no move outside the table is written.
 */
export function moveChargeback(
  tx: Tx,
  chargebackId: string,
  from: readonly ChargebackStatus[],
  to: ChargebackStatus,
  set: {
    resolvedAt?: Date
    resolution?: ChargebackResolution
    evidenceFileId?: string
    evidenceSubmittedAt?: Date
  },
): Promise<ChargebackRow | undefined> {
  return tx
    .updateTable('chargebacks')
    .set({
      status: to,
      ...(set.resolvedAt ? { resolved_at: set.resolvedAt } : {}),
      ...(set.resolution ? { resolution: set.resolution } : {}),
      ...(set.evidenceFileId ? { evidence_file_id: set.evidenceFileId } : {}),
      ...(set.evidenceSubmittedAt ? { evidence_submitted_at: set.evidenceSubmittedAt } : {}),
    })
    .where('id', '=', chargebackId)
    .where('status', 'in', CHARGEBACKS.guard(to, from))
    .returningAll()
    .executeTakeFirst()
}

/** Saves the evidence draft of a chargeback still open (`received`). */
export function updateEvidenceDraft(
  tx: Tx,
  chargebackId: string,
  evidence: EvidenceDraft,
): Promise<ChargebackRow | undefined> {
  return tx
    .updateTable('chargebacks')
    .set({ evidence: JSON.stringify(evidence) })
    .where('id', '=', chargebackId)
    .where('status', '=', 'received')
    .returningAll()
    .executeTakeFirst()
}

/** Open chargebacks past their deadline, across merchants (chargebacks_open_due_idx). */
export async function findOverdueChargebacks(db: Db, now: Date, limit: number) {
  return (
    db
      .selectFrom('chargebacks')
      .select(['id', 'merchant_id', 'payment_id'])
      .where('status', '=', 'received')
      .where('evidence_due_by', '<=', now)
      // A sandbox test clock's chargebacks expire when their clock passes the deadline.
      .where('test_clock_id', 'is', null)
      .orderBy('evidence_due_by')
      .limit(limit)
      .execute()
  )
}

/** A test clock's open chargebacks past their deadline at `at` (chargebacks_test_clock_due_idx). */
export function findClockOverdueChargebacks(db: Db, testClockId: string, at: Date, limit: number) {
  return db
    .selectFrom('chargebacks')
    .select(['id', 'merchant_id', 'payment_id'])
    .where('test_clock_id', '=', testClockId)
    .where('status', '=', 'received')
    .where('evidence_due_by', '<=', at)
    .orderBy('evidence_due_by')
    .limit(limit)
    .execute()
}

/** The earliest deadline at or before `upTo` of a test clock's open chargebacks. */
export async function findNextClockDeadline(
  db: Db,
  testClockId: string,
  upTo: Date,
): Promise<Date | undefined> {
  const row = await db
    .selectFrom('chargebacks')
    .select('evidence_due_by')
    .where('test_clock_id', '=', testClockId)
    .where('status', '=', 'received')
    .where('evidence_due_by', '<=', upTo)
    .orderBy('evidence_due_by')
    .limit(1)
    .executeTakeFirst()
  return row?.evidence_due_by
}

/**
 * Submissions awaiting the bank's decision, oldest first (chargebacks_under_review_idx);
 * `offset` skips those the caller left undecided.
 */
export async function findUnderReview(db: Db, limit: number, offset: number) {
  return db
    .selectFrom('chargebacks')
    .select(['id', 'merchant_id', 'payment_id', 'evidence'])
    .where('status', '=', 'under_review')
    .orderBy('evidence_submitted_at')
    .orderBy('id')
    .limit(limit)
    .offset(offset)
    .execute()
}

/**
 * Open chargebacks whose deadline is within `before` and whose owners were not reminded yet
 * (chargebacks_open_due_idx).
 */
export async function findReminderDue(db: Db, before: Date, now: Date, limit: number) {
  return (
    db
      .selectFrom('chargebacks')
      .selectAll()
      .where('status', '=', 'received')
      .where('evidence_due_by', '<=', before)
      .where('evidence_due_by', '>', now)
      .where('reminder_sent_at', 'is', null)
      // No reminder mail for a sandbox test clock's chargeback (its deadline is not wall time).
      .where('test_clock_id', 'is', null)
      .orderBy('evidence_due_by')
      .limit(limit)
      .execute()
  )
}

/** Claims the reminder: one process sends it, once (conditional on reminder_sent_at null). */
export async function claimReminder(db: Db, chargebackId: string, at: Date): Promise<boolean> {
  const row = await db
    .updateTable('chargebacks')
    .set({ reminder_sent_at: at })
    .where('id', '=', chargebackId)
    .where('reminder_sent_at', 'is', null)
    .where('status', '=', 'received')
    .returning('id')
    .executeTakeFirst()
  return row !== undefined
}

/** Gives the reminder back when sending failed, so the next run tries again. */
export async function releaseReminder(db: Db, chargebackId: string): Promise<void> {
  await db
    .updateTable('chargebacks')
    .set({ reminder_sent_at: null })
    .where('id', '=', chargebackId)
    .execute()
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

/** Chargebacks still open (received or under review): how many, how much. */
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
    .where('status', 'in', ['received', 'under_review'])
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
