import { sql, type ExpressionBuilder } from 'kysely'
import { jsonArrayFrom } from 'kysely/helpers/postgres'
import type { Database, Db, Tx } from '../../database.ts'
import type {
  ListItemRow,
  NewListItem,
  NewReview,
  NewRule,
  ReviewClosedBy,
  ReviewRow,
  ReviewStatus,
  RiskListName,
  RuleRow,
} from './risk.table.ts'

// All of the risk module's SQL.

type Keyset = { createdAt: Date; id: string } | undefined

// ---------------------------------------------------------------- lists

export function insertListItem(db: Db | Tx, row: NewListItem): Promise<ListItemRow> {
  return db.insertInto('risk_list_items').values(row).returningAll().executeTakeFirstOrThrow()
}

export function findListPage(
  db: Db,
  merchantId: string,
  list: RiskListName,
  before: Keyset,
  limit: number,
): Promise<ListItemRow[]> {
  let q = db
    .selectFrom('risk_list_items')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .where('list', '=', list)
  if (before) {
    q = q.where((eb) =>
      eb(eb.refTuple('created_at', 'id'), '<', eb.tuple(before.createdAt, before.id)),
    )
  }
  return q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute()
}

export async function deleteListItem(
  db: Db | Tx,
  merchantId: string,
  list: RiskListName,
  id: string,
): Promise<boolean> {
  const res = await db
    .deleteFrom('risk_list_items')
    .where('merchant_id', '=', merchantId)
    .where('list', '=', list)
    .where('id', '=', id)
    .executeTakeFirst()
  return Number(res.numDeletedRows) > 0
}

/** What the charge's screen columns read (chargeScreenColumns). */
export interface ChargeScreenRow {
  risk_listed: { list: RiskListName }[]
  risk_rules: Pick<RuleRow, 'id' | 'action' | 'condition'>[]
}

/**
 * What a charge is screened against, as two columns of the statement that counts its velocity
 * (payments' risk-facts.repository.ts: one round trip on the charge path): the lists its facts
 * are on (at most one equality probe per list on the unique (merchant_id, list, value) index),
 * and the merchant's enabled rules in their order.
 */
export function chargeScreenColumns(
  eb: ExpressionBuilder<Database, never>,
  merchantId: string,
  probes: { list: RiskListName; value: string }[],
) {
  return [
    jsonArrayFrom(
      eb
        .selectFrom('risk_list_items')
        .select('list')
        .where('merchant_id', '=', merchantId)
        .where((w) =>
          probes.length === 0
            ? sql<boolean>`false`
            : w.or(probes.map((p) => w.and([w('list', '=', p.list), w('value', '=', p.value)]))),
        ),
    ).as('risk_listed'),
    jsonArrayFrom(
      eb
        .selectFrom('risk_rules')
        .select(['id', 'action', 'condition'])
        .where('merchant_id', '=', merchantId)
        .where('enabled', '=', true)
        .orderBy('created_at')
        .orderBy('id'),
    ).as('risk_rules'),
  ]
}

// ---------------------------------------------------------------- rules

export function insertRule(tx: Tx, row: NewRule): Promise<RuleRow> {
  return tx.insertInto('risk_rules').values(row).returningAll().executeTakeFirstOrThrow()
}

export async function countRules(tx: Tx, merchantId: string): Promise<number> {
  const row = await tx
    .selectFrom('risk_rules')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('merchant_id', '=', merchantId)
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

export function findRules(db: Db, merchantId: string): Promise<RuleRow[]> {
  return db
    .selectFrom('risk_rules')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .orderBy('created_at')
    .orderBy('id')
    .execute()
}

export function findRuleById(db: Db, merchantId: string, id: string): Promise<RuleRow | undefined> {
  return db
    .selectFrom('risk_rules')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .where('id', '=', id)
    .executeTakeFirst()
}

export function updateRule(
  db: Db | Tx,
  merchantId: string,
  id: string,
  set: Partial<{ name: string; enabled: boolean; condition: string; updated_at: Date }>,
): Promise<RuleRow | undefined> {
  return db
    .updateTable('risk_rules')
    .set(set)
    .where('merchant_id', '=', merchantId)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst()
}

export async function deleteRule(db: Db | Tx, merchantId: string, id: string): Promise<boolean> {
  const res = await db
    .deleteFrom('risk_rules')
    .where('merchant_id', '=', merchantId)
    .where('id', '=', id)
    .executeTakeFirst()
  return Number(res.numDeletedRows) > 0
}

/**
 * Serialises rule creation per merchant (a transaction-scoped advisory lock: row locks would
 * not cover the first rule), so two concurrent creates cannot pass 100 together.
 */
export async function lockMerchantRules(tx: Tx, merchantId: string): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtextextended(${`risk_rules:${merchantId}`}, 0))`.execute(
    tx,
  )
}

// ---------------------------------------------------------------- reviews

export function insertReview(tx: Tx, row: NewReview): Promise<ReviewRow | undefined> {
  return tx
    .insertInto('risk_reviews')
    .values(row)
    .onConflict((oc) => oc.column('payment_id').doNothing())
    .returningAll()
    .executeTakeFirst()
}

export function findReviewById(
  db: Db,
  merchantId: string,
  id: string,
): Promise<ReviewRow | undefined> {
  return db
    .selectFrom('risk_reviews')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .where('id', '=', id)
    .executeTakeFirst()
}

export function findReviewPage(
  db: Db,
  merchantId: string,
  status: ReviewStatus | undefined,
  before: Keyset,
  limit: number,
): Promise<ReviewRow[]> {
  let q = db.selectFrom('risk_reviews').selectAll().where('merchant_id', '=', merchantId)
  if (status) q = q.where('status', '=', status)
  if (before) {
    q = q.where((eb) =>
      eb(eb.refTuple('created_at', 'id'), '<', eb.tuple(before.createdAt, before.id)),
    )
  }
  return q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute()
}

/** The claim on an open review: the conditional update only one closer wins. */
export function closeReview(
  db: Db,
  id: string,
  reason: 'approved' | 'rejected' | 'expired',
  at: Date,
  by: ReviewClosedBy,
): Promise<ReviewRow | undefined> {
  return db
    .updateTable('risk_reviews')
    .set({ status: 'closed', closed_reason: reason, closed_at: at, closed_by: by })
    .where('id', '=', id)
    .where('status', '=', 'open')
    .returningAll()
    .executeTakeFirst()
}

/** The open review of a payment, if any. */
export function findOpenReviewOfPayment(
  db: Db,
  merchantId: string,
  paymentId: string,
): Promise<ReviewRow | undefined> {
  return db
    .selectFrom('risk_reviews')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .where('payment_id', '=', paymentId)
    .where('status', '=', 'open')
    .executeTakeFirst()
}

/** Open reviews opened before `before`, oldest first: risk_reviews_open_created_idx. */
export function findOpenReviewsBefore(db: Db, before: Date, limit: number): Promise<ReviewRow[]> {
  return db
    .selectFrom('risk_reviews')
    .selectAll()
    .where('status', '=', 'open')
    .where('created_at', '<=', before)
    .orderBy('created_at')
    .limit(limit)
    .execute()
}

/** How many of the merchant's reviews are open (the dashboard overview's figure). */
export async function countOpenReviews(db: Db, merchantId: string): Promise<number> {
  const row = await db
    .selectFrom('risk_reviews')
    .select(sql<number>`count(*)`.as('count'))
    .where('merchant_id', '=', merchantId)
    .where('status', '=', 'open')
    .executeTakeFirst()
  return row?.count ?? 0
}
