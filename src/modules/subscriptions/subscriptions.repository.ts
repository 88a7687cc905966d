import { sql } from 'kysely'
import type { Db, Tx } from '../../database.ts'
import { assert } from '../../platform/assert.ts'
import {
  SUBSCRIPTIONS,
  type ChargeableStatus,
  type ChargeKind,
  type NewSubscription,
  type NewSubscriptionCharge,
  type SubscriptionChargeRow,
  type SubscriptionPatch,
  type SubscriptionRow,
  type SubscriptionStatus,
} from './subscriptions.table.ts'

const CHARGEABLE = SUBSCRIPTIONS.sourcesOf('charging')

export async function insertSubscription(tx: Tx, row: NewSubscription): Promise<void> {
  await tx.insertInto('subscriptions').values(row).execute()
}

export function findSubscriptionById(
  db: Db,
  merchantId: string,
  id: string,
): Promise<SubscriptionRow | undefined> {
  return db
    .selectFrom('subscriptions')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .where('id', '=', id)
    .executeTakeFirst()
}

/** The buyer's portal: the bearer's digest is the key, across merchants. */
export function findSubscriptionByHashDigest(
  db: Db,
  digest: string,
): Promise<SubscriptionRow | undefined> {
  return db
    .selectFrom('subscriptions')
    .selectAll()
    .where('public_hash_sha256', '=', digest)
    .executeTakeFirst()
}

export function lockSubscription(
  tx: Tx,
  merchantId: string,
  id: string,
): Promise<SubscriptionRow | undefined> {
  return tx
    .selectFrom('subscriptions')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .where('id', '=', id)
    .forUpdate()
    .executeTakeFirst()
}

/** The row, locked, only while `claimId` still holds its charge. */
export function lockClaimedSubscription(
  tx: Tx,
  id: string,
  claimId: string,
): Promise<SubscriptionRow | undefined> {
  return tx
    .selectFrom('subscriptions')
    .selectAll()
    .where('id', '=', id)
    .where('status', '=', 'charging')
    .where('claim_id', '=', claimId)
    .forUpdate()
    .executeTakeFirst()
}

/**
 * Every write of a locked subscription, conditional on the status the caller read: a patch
 * that changes the status is also conditional on SUBSCRIPTIONS allowing the move.
 */
export async function updateSubscription(
  tx: Tx,
  id: string,
  from: SubscriptionStatus,
  patch: SubscriptionPatch,
): Promise<SubscriptionRow> {
  const to = patch.status ?? from
  const row = await tx
    .updateTable('subscriptions')
    .set(patch)
    .where('id', '=', id)
    .where('status', 'in', to === from ? [from] : SUBSCRIPTIONS.guard(to, [from]))
    .returningAll()
    .executeTakeFirst()
  assert(row, `subscription ${id} left ${from} under its lock`)
  return row
}

/** The card-sync write: applies only while that update-card session is still unsynced. */
export function updateSubscriptionCard(
  tx: Tx,
  id: string,
  seq: number,
  patch: SubscriptionPatch,
): Promise<SubscriptionRow | undefined> {
  return tx
    .updateTable('subscriptions')
    .set(patch)
    .where('id', '=', id)
    .where('card_synced_seq', '<', seq)
    .where('card_session_seq', '>=', seq)
    .returningAll()
    .executeTakeFirst()
}

/** Records that update-card session n was minted (never moves the counter backwards). */
export async function raiseCardSessionSeq(db: Db, id: string, seq: number): Promise<void> {
  await db
    .updateTable('subscriptions')
    .set({ card_session_seq: seq })
    .where('id', '=', id)
    .where('card_session_seq', '<', seq)
    .execute()
}

const CHARGING_COLUMNS_CLEARED = {
  charge_from: null,
  charge_kind: null,
  claim_id: null,
  charging_since: null,
  charge_started_at: null,
  awaiting_payment_id: null,
} as const

/** The patch that takes a row out of `charging` (every claim column cleared). */
export function leaveCharging(
  status: Exclude<SubscriptionStatus, 'charging'>,
  patch: SubscriptionPatch,
): SubscriptionPatch {
  return { ...CHARGING_COLUMNS_CLEARED, ...patch, status }
}

/**
 * The renewal engine's claim: due rows in a chargeable status move to `charging` under this
 * claim id in one statement. `FOR UPDATE SKIP LOCKED` lets several workers claim side by side
 * on PostgreSQL without waiting for (or taking) each other's rows; the outer status check is
 * re-evaluated after any lock wait, so a row is claimed by one worker only. PGlite has a
 * single connection, so there claims simply queue. Raw SQL would read no better: the SET
 * copies the row's own status into charge_from, which Kysely expresses with sql`` anyway.
 */
export function claimDueSubscriptions(
  db: Db,
  p: {
    now: Date
    claimId: string
    limit: number
    /**
     * null: the real-time engine, which never claims a row on a test clock (it would be
     * charged at wall time); a clock's id: that clock's advance, at the clock's time.
     */
    testClockId: string | null
  },
): Promise<SubscriptionRow[]> {
  return db
    .updateTable('subscriptions')
    .set({
      status: 'charging',
      charge_from: sql<ChargeableStatus>`status`,
      charge_kind: sql<ChargeKind>`case when status = 'past_due' then 'retry' else 'renewal' end`,
      claim_id: p.claimId,
      charging_since: p.now,
      charge_started_at: p.now,
      awaiting_payment_id: null,
      updated_at: p.now,
    })
    .where('id', 'in', (eb) =>
      eb
        .selectFrom('subscriptions')
        .select('id')
        .where('status', 'in', CHARGEABLE)
        .where('next_charge_at', '<=', p.now)
        .where('test_clock_id', p.testClockId === null ? 'is' : '=', p.testClockId)
        .orderBy('next_charge_at')
        .orderBy('id')
        .limit(p.limit)
        .forUpdate()
        .skipLocked(),
    )
    .where('status', 'in', CHARGEABLE)
    .returningAll()
    .execute()
}

/**
 * Rows left in `charging` that need a worker: a charge whose payment was still pending at the
 * acquirer (checked every tick), and claims older than `staleBefore` — a worker that crashed
 * mid-charge, or a charge-now whose job never ran. The new claim id replaces the old one, so
 * a stalled worker that wakes up can no longer record anything.
 */
export function reclaimChargingSubscriptions(
  db: Db,
  p: {
    now: Date
    claimId: string
    staleBefore: Date
    limit: number
    /**
     * null: the real-time engine, which leaves a test clock's rows to that clock's advance (their
     * claim times are clock times, which wall time would misjudge); a clock's id: its advance.
     */
    testClockId: string | null
  },
): Promise<SubscriptionRow[]> {
  return db
    .updateTable('subscriptions')
    .set({
      claim_id: p.claimId,
      charging_since: p.now,
      charge_started_at: sql<Date>`coalesce(charge_started_at, ${p.now})`,
      updated_at: p.now,
    })
    .where('id', 'in', (eb) =>
      eb
        .selectFrom('subscriptions')
        .select('id')
        .where('status', '=', 'charging')
        .where((w) =>
          w.or([
            w.and([w('claim_id', 'is', null), w('awaiting_payment_id', 'is not', null)]),
            w('charging_since', '<', p.staleBefore),
          ]),
        )
        .where('test_clock_id', p.testClockId === null ? 'is' : '=', p.testClockId)
        .orderBy('charging_since')
        .limit(p.limit)
        .forUpdate()
        .skipLocked(),
    )
    .where('status', '=', 'charging')
    .returningAll()
    .execute()
}

/** A queued charge-now's job takes its claim; nothing when another worker already has it. */
export function claimQueuedCharge(
  db: Db,
  p: { id: string; claimId: string; now: Date },
): Promise<SubscriptionRow | undefined> {
  return db
    .updateTable('subscriptions')
    .set({
      claim_id: p.claimId,
      charging_since: p.now,
      charge_started_at: p.now,
      updated_at: p.now,
    })
    .where('id', '=', p.id)
    .where('status', '=', 'charging')
    .where('claim_id', 'is', null)
    .where('awaiting_payment_id', 'is', null)
    .returningAll()
    .executeTakeFirst()
}

/** A row, locked and claimed directly by its id (the sandbox's advance). */
export function claimSubscriptionNow(
  tx: Tx,
  p: { id: string; claimId: string; now: Date; kind: ChargeKind; from: ChargeableStatus },
): Promise<SubscriptionRow | undefined> {
  return tx
    .updateTable('subscriptions')
    .set({
      status: 'charging',
      charge_from: p.from,
      charge_kind: p.kind,
      claim_id: p.claimId,
      charging_since: p.now,
      charge_started_at: p.now,
      awaiting_payment_id: null,
      updated_at: p.now,
    })
    .where('id', '=', p.id)
    .where('status', 'in', SUBSCRIPTIONS.guard('charging', [p.from]))
    .returningAll()
    .executeTakeFirst()
}

/** Subscriptions with an update-card session not yet looked at. */
export function findCardSyncCandidates(db: Db, limit: number): Promise<SubscriptionRow[]> {
  return db
    .selectFrom('subscriptions')
    .selectAll()
    .whereRef('card_session_seq', '>', 'card_synced_seq')
    .orderBy('updated_at')
    .limit(limit)
    .execute()
}

export interface SubscriptionPageQuery {
  merchantId: string
  storeId: string | undefined
  customerId: string | undefined
  status: SubscriptionStatus | undefined
  from: Date | undefined
  to: Date | undefined
  before: { createdAt: Date; id: string } | undefined
  limit: number
}

/** Newest first; keyset on (created_at, id), served by subscriptions_list_idx. */
export function findSubscriptionPage(db: Db, q: SubscriptionPageQuery): Promise<SubscriptionRow[]> {
  let query = db.selectFrom('subscriptions').selectAll().where('merchant_id', '=', q.merchantId)
  const { storeId, customerId, status, from, to, before } = q
  if (storeId !== undefined) query = query.where('store_id', '=', storeId)
  if (customerId !== undefined) query = query.where('customer_id', '=', customerId)
  if (status !== undefined) query = query.where('status', '=', status)
  if (from !== undefined) query = query.where('created_at', '>=', from)
  if (to !== undefined) query = query.where('created_at', '<', to)
  if (before) {
    query = query.where((eb) =>
      eb(eb.refTuple('created_at', 'id'), '<', eb.tuple(before.createdAt, before.id)),
    )
  }
  return query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(q.limit).execute()
}

// Charge history

export async function insertCharge(tx: Tx, row: NewSubscriptionCharge): Promise<void> {
  await tx.insertInto('subscription_charges').values(row).execute()
}

/** Newest first; keyset on (cycle_number, attempt), the table's own primary key. */
export function findChargePage(
  db: Db,
  q: {
    merchantId: string
    subscriptionId: string
    before: { cycle: number; attempt: number } | undefined
    limit: number
  },
): Promise<SubscriptionChargeRow[]> {
  let query = db
    .selectFrom('subscription_charges')
    .selectAll()
    .where('merchant_id', '=', q.merchantId)
    .where('subscription_id', '=', q.subscriptionId)
  const { before } = q
  if (before) {
    query = query.where((eb) =>
      eb(eb.refTuple('cycle_number', 'attempt'), '<', eb.tuple(before.cycle, before.attempt)),
    )
  }
  return query.orderBy('cycle_number', 'desc').orderBy('attempt', 'desc').limit(q.limit).execute()
}
