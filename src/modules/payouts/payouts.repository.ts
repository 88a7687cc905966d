import { createHash } from 'node:crypto'
import { sql, type Updateable } from 'kysely'
import type { Db, Tx } from '../../database.ts'
import {
  DRAFTS,
  PAYOUTS,
  type DraftRow,
  type DraftRowRow,
  type DraftStatus,
  type NewDraftRow,
  type NewPayout,
  type PayoutKind,
  type PayoutRow,
  type PayoutStatus,
  type PayoutsTable,
  type PayoutDraftsTable,
} from './payouts.table.ts'

// All of the payouts module's SQL.

// A multi-row INSERT binds rows × columns parameters (PostgreSQL allows 65,535); 1000 draft
// rows or payouts are written in chunks well below that.
const BULK_ROWS_MAX = 500

// Drafts

export async function insertDraft(tx: Tx, row: PayoutDraftsTable): Promise<void> {
  await tx.insertInto('payout_drafts').values(row).execute()
}

export async function insertDraftRows(tx: Tx, rows: NewDraftRow[]): Promise<void> {
  for (let i = 0; i < rows.length; i += BULK_ROWS_MAX) {
    await tx
      .insertInto('payout_draft_rows')
      .values(rows.slice(i, i + BULK_ROWS_MAX))
      .execute()
  }
}

export function findDraftById(
  db: Db,
  merchantId: string,
  draftId: string,
): Promise<DraftRow | undefined> {
  return db
    .selectFrom('payout_drafts')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .where('id', '=', draftId)
    .executeTakeFirst()
}

export function lockDraftById(
  tx: Tx,
  merchantId: string,
  draftId: string,
): Promise<DraftRow | undefined> {
  return tx
    .selectFrom('payout_drafts')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .where('id', '=', draftId)
    .forUpdate()
    .executeTakeFirst()
}

export function findDraftRows(
  db: Db,
  merchantId: string,
  draftId: string,
  onlyValid = false,
): Promise<DraftRowRow[]> {
  let query = db
    .selectFrom('payout_draft_rows')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .where('draft_id', '=', draftId)
  if (onlyValid) query = query.where('valid', '=', true)
  return query.orderBy('idx').execute()
}

/** The draft state machine's only write: applies while the draft is still in `from` (DRAFTS). */
export async function transitionDraft(
  tx: Tx,
  draftId: string,
  from: DraftStatus,
  set: Updateable<PayoutDraftsTable> & { status: DraftStatus },
): Promise<DraftRow | undefined> {
  return tx
    .updateTable('payout_drafts')
    .set(set)
    .where('id', '=', draftId)
    .where('status', 'in', DRAFTS.guard(set.status, [from]))
    .returningAll()
    .executeTakeFirst()
}

// Payouts

export async function insertPayouts(tx: Tx, rows: NewPayout[]): Promise<void> {
  for (let i = 0; i < rows.length; i += BULK_ROWS_MAX) {
    await tx
      .insertInto('payouts')
      .values(rows.slice(i, i + BULK_ROWS_MAX))
      .execute()
  }
}

export function findPayoutById(
  db: Db,
  merchantId: string,
  payoutId: string,
): Promise<PayoutRow | undefined> {
  return db
    .selectFrom('payouts')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .where('id', '=', payoutId)
    .executeTakeFirst()
}

export function findPayoutByKey(
  db: Db,
  merchantId: string,
  idempotencyKey: string,
): Promise<PayoutRow | undefined> {
  return db
    .selectFrom('payouts')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .where('idempotency_key', '=', idempotencyKey)
    .executeTakeFirst()
}

export function lockPayoutById(
  tx: Tx,
  merchantId: string,
  payoutId: string,
): Promise<PayoutRow | undefined> {
  return tx
    .selectFrom('payouts')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .where('id', '=', payoutId)
    .forUpdate()
    .executeTakeFirst()
}

export async function findPayoutIdsByDraft(
  db: Db,
  merchantId: string,
  draftId: string,
): Promise<string[]> {
  const rows = await db
    .selectFrom('payouts')
    .select('id')
    .where('merchant_id', '=', merchantId)
    .where('draft_id', '=', draftId)
    .orderBy('draft_row_idx')
    .execute()
  return rows.map((r) => r.id)
}

/** What one owner has paid out (or is paying out) since `since`: failed payouts don't count. */
export async function sumOwnerPayoutsSince(
  db: Db,
  merchantId: string,
  ownerType: 'merchant' | 'submerchant',
  ownerId: string,
  since: Date,
): Promise<number> {
  const row = await db
    .selectFrom('payouts')
    .select(sql<number>`coalesce(sum(amount_minor), 0)::bigint`.as('total'))
    .where('merchant_id', '=', merchantId)
    .where('owner_type', '=', ownerType)
    .where('owner_id', '=', ownerId)
    .where('created_at', '>=', since)
    .where('status', '<>', 'failed')
    .executeTakeFirstOrThrow()
  return row.total
}

/**
 * The payout state machine's only write path: applies only while the payout is still in
 * `from` and PAYOUTS allows the move, so two workers (or a retried job) can't both move it.
 * Undefined when another got there first.
 */
export async function transitionPayout(
  tx: Tx,
  payoutId: string,
  from: PayoutStatus,
  set: Updateable<PayoutsTable> & { status: PayoutStatus },
): Promise<PayoutRow | undefined> {
  return tx
    .updateTable('payouts')
    .set(set)
    .where('id', '=', payoutId)
    .where('status', 'in', PAYOUTS.guard(set.status, [from]))
    .returningAll()
    .executeTakeFirst()
}

export interface PayoutPageQuery {
  merchantId: string
  submerchantId?: string | undefined
  status?: PayoutStatus | undefined
  kind?: PayoutKind | undefined
  from?: Date | undefined
  to?: Date | undefined
  /** Keyset: rows strictly older than this (created_at, id) pair. */
  before?: { createdAt: Date; id: string } | undefined
  limit: number
}

/** Newest first. */
export function findPayoutsPage(db: Db, q: PayoutPageQuery): Promise<PayoutRow[]> {
  let query = db.selectFrom('payouts').selectAll().where('merchant_id', '=', q.merchantId)
  if (q.submerchantId !== undefined) query = query.where('submerchant_id', '=', q.submerchantId)
  if (q.status !== undefined) query = query.where('status', '=', q.status)
  if (q.kind !== undefined) query = query.where('kind', '=', q.kind)
  if (q.from !== undefined) query = query.where('created_at', '>=', q.from)
  if (q.to !== undefined) query = query.where('created_at', '<', q.to)
  const before = q.before
  if (before) {
    query = query.where((eb) =>
      eb(eb.refTuple('created_at', 'id'), '<', eb.tuple(before.createdAt, before.id)),
    )
  }
  return query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(q.limit).execute()
}

/** Payouts a crash or an exhausted job left pending or processing since before `before`. */
export function findStalePayouts(
  db: Db,
  before: Date,
  limit: number,
): Promise<Pick<PayoutRow, 'id' | 'merchant_id'>[]> {
  return db
    .selectFrom('payouts')
    .select(['id', 'merchant_id'])
    .where('status', 'in', ['pending', 'processing'])
    .where('updated_at', '<', before)
    .orderBy('updated_at')
    .limit(limit)
    .execute()
}

// Advisory locks live in (namespace, key) pairs; this namespace is the payouts module's own.
const PAYOUT_OWNER_LOCK_NAMESPACE = 0x5041594f // 'PAYO'

/**
 * Serialises payout creation per owner until the transaction ends, so two concurrent
 * payouts can't both pass the daily limit. Taken before the ledger's own owner lock, never
 * after it, so the two can't deadlock.
 */
export async function lockPayoutOwner(tx: Tx, ownerKey: string): Promise<void> {
  const key = createHash('sha256').update(ownerKey).digest().readInt32BE(0)
  await sql`select pg_advisory_xact_lock(${PAYOUT_OWNER_LOCK_NAMESPACE}::int4, ${key}::int4)`.execute(
    tx,
  )
}

/** The merchant's latest drafts, newest first (the dashboard's Payouts page). */
export function findRecentDrafts(db: Db, merchantId: string, limit: number): Promise<DraftRow[]> {
  return db
    .selectFrom('payout_drafts')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute()
}

/** A keyset page of the merchant's drafts, newest first (the dashboard's drafts list). */
export function findDraftPage(
  db: Db,
  merchantId: string,
  before: { createdAt: Date; id: string } | undefined,
  limit: number,
): Promise<DraftRow[]> {
  let q = db.selectFrom('payout_drafts').selectAll().where('merchant_id', '=', merchantId)
  if (before) {
    q = q.where((eb) =>
      eb(eb.refTuple('created_at', 'id'), '<', eb.tuple(before.createdAt, before.id)),
    )
  }
  return q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute()
}
