import { sql } from 'kysely'
import type { Db } from '../../database.ts'

// The ledger's read side for balance transactions and finance reports (docs/reports.md).
// A balance transaction is one entry's net change of one owner's reserve + available balance;
// these queries read ledger_legs through ledger_legs_owner_movements_idx and
// ledger_legs_owner_available_idx (migration 0270). Raw SQL where a grouped keyset page or a
// running balance is clearer than the builder.

export interface OwnerRef {
  merchantId: string
  ownerType: 'merchant' | 'submerchant'
  ownerId: string
}

export interface MovementRow {
  entry_id: string
  created_at: Date
  /** created_at to the microsecond (a Date keeps milliseconds): the keyset position. */
  created_key: string
  kind: string
  reference: string
  net: number
}

export interface MovementQuery {
  from?: Date
  to?: Date
  /** Only these entry kinds; `otherThan` lists kinds to leave out instead (for `adjustment`). */
  kinds?: readonly string[]
  otherThan?: readonly string[]
  /** Keyset position: rows strictly after it in the query's order. */
  after?: { createdKey: string; entryId: string }
  order: 'asc' | 'desc'
  limit: number
}

const SIGNED = sql<number>`case when l.direction = 'CREDIT' then l.amount else -l.amount end`
const CREATED_KEY = sql<string>`to_char(l.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`

/**
 * One owner's balance movements, one row per entry whose net change of reserve + available
 * is not zero (settlements move reserve to available and net to zero), in (created_at,
 * entry_id) order. Legs of one entry share its created_at, so grouping follows the index
 * order and the LIMIT stops the scan.
 */
export function findOwnerMovements(db: Db, owner: OwnerRef, q: MovementQuery) {
  const cmp = q.order === 'desc' ? sql`<` : sql`>`
  const dir = q.order === 'desc' ? sql`desc` : sql`asc`
  const kinds =
    q.kinds !== undefined
      ? q.kinds.length === 0
        ? sql`and false`
        : sql`and e.kind in (${sql.join(q.kinds)})`
      : q.otherThan !== undefined && q.otherThan.length > 0
        ? sql`and e.kind not in (${sql.join(q.otherThan)})`
        : sql``
  return sql<MovementRow>`
    select l.entry_id, l.created_at, ${CREATED_KEY} as created_key, e.kind, e.reference,
           sum(${SIGNED})::bigint as net
      from ledger_legs l
      join ledger_entries e on e.id = l.entry_id
     where l.merchant_id = ${owner.merchantId}
       and l.owner_type = ${owner.ownerType}
       and l.owner_id = ${owner.ownerId}
       and l.account_type in ('merchant_reserve', 'merchant_available')
       ${q.from !== undefined ? sql`and l.created_at >= ${q.from}` : sql``}
       ${q.to !== undefined ? sql`and l.created_at < ${q.to}` : sql``}
       ${q.after !== undefined ? sql`and (l.created_at, l.entry_id) ${cmp} (${q.after.createdKey}::timestamptz, ${q.after.entryId})` : sql``}
       ${kinds}
     group by l.created_at, l.entry_id, e.kind, e.reference
    having sum(${SIGNED}) <> 0
     order by l.created_at ${dir}, l.entry_id ${dir}
     limit ${q.limit}`
    .execute(db)
    .then((r) => r.rows.map((row) => ({ ...row, created_at: new Date(row.created_at) })))
}

/** These entries' owner movements and commission movement, per owner and account type. */
export async function findEntryBreakdown(db: Db, merchantId: string, entryIds: readonly string[]) {
  if (entryIds.length === 0) return []
  const rows = await sql<{
    entry_id: string
    owner_type: string
    owner_id: string
    account_type: string
    net: number
  }>`
    select l.entry_id, l.owner_type, l.owner_id, l.account_type, sum(${SIGNED})::bigint as net
      from ledger_legs l
     where l.merchant_id = ${merchantId}
       and l.entry_id in (${sql.join(entryIds)})
       and l.account_type in ('merchant_reserve', 'merchant_available', 'platform_commission')
     group by l.entry_id, l.owner_type, l.owner_id, l.account_type`.execute(db)
  return rows.rows
}

/** The owner's reserve credits of these entries (captures, chargeback reversals). */
export async function findReserveCreditsOf(db: Db, owner: OwnerRef, entryIds: readonly string[]) {
  if (entryIds.length === 0) return []
  return db
    .selectFrom('ledger_reserve_credits')
    .select(['entry_id', 'credited_at', 'settled_at'])
    .where('merchant_id', '=', owner.merchantId)
    .where('owner_type', '=', owner.ownerType)
    .where('owner_id', '=', owner.ownerId)
    .where('entry_id', 'in', entryIds)
    .execute()
}

/** Net of the owner's reserve + available before `before`: one index-only range sum. */
export async function sumOwnerNetBefore(db: Db, owner: OwnerRef, before: Date): Promise<number> {
  const row = await sql<{ net: number }>`
    select coalesce(sum(${SIGNED}), 0)::bigint as net
      from ledger_legs l
     where l.merchant_id = ${owner.merchantId}
       and l.owner_type = ${owner.ownerType}
       and l.owner_id = ${owner.ownerId}
       and l.account_type in ('merchant_reserve', 'merchant_available')
       and l.created_at < ${before}`.execute(db)
  return row.rows[0]?.net ?? 0
}

export interface PayoutLegRow {
  leg_id: number
  entry_id: string
  reference: string
  created_at: Date
  amount: number
}

/**
 * The owner's payouts (payout_created entries: the debit of merchant_available) created in
 * [from, to), in posting order, keyset after a leg id.
 */
export async function findOwnerPayoutLegs(
  db: Db,
  owner: OwnerRef,
  q: { from?: Date; to?: Date; afterLegId?: number; references?: readonly string[]; limit: number },
): Promise<PayoutLegRow[]> {
  if (q.references !== undefined && q.references.length === 0) return []
  const rows = await sql<PayoutLegRow>`
    select l.id as leg_id, l.entry_id, e.reference, l.created_at, l.amount
      from ledger_legs l
      join ledger_entries e on e.id = l.entry_id
     where l.merchant_id = ${owner.merchantId}
       and l.owner_type = ${owner.ownerType}
       and l.owner_id = ${owner.ownerId}
       and l.account_type = 'merchant_available'
       and l.direction = 'DEBIT'
       and e.kind = 'payout_created'
       ${q.from !== undefined ? sql`and l.created_at >= ${q.from}` : sql``}
       ${q.to !== undefined ? sql`and l.created_at < ${q.to}` : sql``}
       ${q.afterLegId !== undefined ? sql`and l.id > ${q.afterLegId}` : sql``}
       ${q.references !== undefined ? sql`and e.reference in (${sql.join(q.references)})` : sql``}
     order by l.id
     limit ${q.limit}`.execute(db)
  return rows.rows.map((r) => ({ ...r, created_at: new Date(r.created_at) }))
}

/** Entries by reference (payout outcomes: `payout_paid:<id>`, `payout_failed:<id>`). */
export function findEntriesByReferenceList(
  db: Db,
  merchantId: string,
  references: readonly string[],
) {
  if (references.length === 0) return Promise.resolve([])
  return db
    .selectFrom('ledger_entries')
    .select(['id', 'kind', 'reference', 'created_at'])
    .where('merchant_id', '=', merchantId)
    .where('reference', 'in', references)
    .execute()
}

export interface AllocationRow {
  source_entry_id: string
  portion: number
  first_leg_id: number
}

/**
 * What one payout drew from the owner's available balance, first in, first out, per balance
 * transaction. The owner's available legs before the payout (except payout debits, which are
 * the draws themselves) form a running total S; the payouts before it drew [0, qa) of that
 * total and this one [qa, qa + amount). A leg moving S from s0 to s1 gives this payout
 * clamp(s1) − clamp(s0), clamped to that window, so the portions sum to the payout's amount
 * (the ledger refused the payout unless S − qa ≥ amount when it was posted). A settlement
 * leg is attributed to the reserve credit it released (the capture or chargeback reversal).
 * Rows in the order the legs were posted; keyset after `afterLegId`.
 */
export async function findPayoutAllocation(
  db: Db,
  owner: OwnerRef,
  payoutLegId: number,
  page: { afterLegId?: number; limit: number },
): Promise<AllocationRow[]> {
  const rows = await sql<AllocationRow>`
    with window_of as (
      select coalesce(sum(l.amount), 0)::bigint as qa
        from ledger_legs l
        join ledger_entries e on e.id = l.entry_id
       where l.merchant_id = ${owner.merchantId}
         and l.owner_type = ${owner.ownerType}
         and l.owner_id = ${owner.ownerId}
         and l.account_type = 'merchant_available'
         and l.direction = 'DEBIT'
         and e.kind = 'payout_created'
         and l.id < ${payoutLegId}
    ), draw as (
      select w.qa, w.qa + l.amount as qb
        from window_of w, ledger_legs l
       where l.id = ${payoutLegId}
    ), moves as (
      select l.id, coalesce(rc.entry_id, l.entry_id) as source_entry_id,
             sum(${SIGNED}) over (order by l.id) as s1, ${SIGNED} as amt
        from ledger_legs l
        join ledger_entries e on e.id = l.entry_id
        left join ledger_reserve_credits rc
          on e.kind = 'settlement' and rc.settlement_entry_id = e.id
         and rc.owner_type = l.owner_type and rc.owner_id = l.owner_id
       where l.merchant_id = ${owner.merchantId}
         and l.owner_type = ${owner.ownerType}
         and l.owner_id = ${owner.ownerId}
         and l.account_type = 'merchant_available'
         and e.kind <> 'payout_created'
         and l.id < ${payoutLegId}
    )
    select m.source_entry_id,
           sum(least(greatest(m.s1, d.qa), d.qb) - least(greatest(m.s1 - m.amt, d.qa), d.qb))::bigint
             as portion,
           min(m.id) as first_leg_id
      from moves m, draw d
     where greatest(m.s1, m.s1 - m.amt) > d.qa and least(m.s1, m.s1 - m.amt) < d.qb
     group by m.source_entry_id
    having sum(least(greatest(m.s1, d.qa), d.qb) - least(greatest(m.s1 - m.amt, d.qa), d.qb)) <> 0
       ${page.afterLegId !== undefined ? sql`and min(m.id) > ${page.afterLegId}` : sql``}
     order by min(m.id)
     limit ${page.limit}`.execute(db)
  return rows.rows
}

/**
 * The owner's movements in these entries (the sources of a payout's allocation), zero nets
 * included: an entry that moved money into available is always a source, even if it also
 * moved the same amount out of the reserve.
 */
export async function findOwnerMovementsOf(
  db: Db,
  owner: OwnerRef,
  entryIds: readonly string[],
): Promise<MovementRow[]> {
  if (entryIds.length === 0) return []
  const rows = await sql<MovementRow>`
    select l.entry_id, l.created_at, ${CREATED_KEY} as created_key, e.kind, e.reference,
           sum(${SIGNED})::bigint as net
      from ledger_legs l
      join ledger_entries e on e.id = l.entry_id
     where l.merchant_id = ${owner.merchantId}
       and l.owner_type = ${owner.ownerType}
       and l.owner_id = ${owner.ownerId}
       and l.account_type in ('merchant_reserve', 'merchant_available')
       and l.entry_id in (${sql.join(entryIds)})
     group by l.created_at, l.entry_id, e.kind, e.reference`.execute(db)
  return rows.rows.map((row) => ({ ...row, created_at: new Date(row.created_at) }))
}

/**
 * What a settlement payout settled: every movement of the owner's available balance after
 * the previous settlement payout's draw (`afterLegId`, exclusive; 0 for the first) and
 * before this payout's (`payoutLegId`), per source. Refunds, chargebacks, failed payouts
 * coming back and other payouts are their own sources. A settlement leg is split over the
 * reserve credits (captures, chargeback reversals) its run settled — the one it names and
 * those the same run settled with 0 because it released their money too (settleFunds moves
 * the whole matured reserve at once) — oldest first, each at most its own amount, the last
 * taking what is left. A settlement payout takes the whole available balance, which is 0
 * right after the previous one, so the portions sum to its amount; a chargeback that made
 * the balance negative is one of them (netted). Rows in posting order; the position is
 * leg id × 1000 + the credit's rank within its leg; keyset after `afterPosition`.
 */
export async function findPayoutWindow(
  db: Db,
  owner: OwnerRef,
  afterLegId: number,
  payoutLegId: number,
  page: { afterPosition?: number; limit: number },
): Promise<AllocationRow[]> {
  const rows = await sql<AllocationRow>`
    with w as (
      select l.id as leg_id, l.entry_id, e.kind, e.created_at as entry_at, ${SIGNED} as amt
        from ledger_legs l
        join ledger_entries e on e.id = l.entry_id
       where l.merchant_id = ${owner.merchantId}
         and l.owner_type = ${owner.ownerType}
         and l.owner_id = ${owner.ownerId}
         and l.account_type = 'merchant_available'
         and l.id > ${afterLegId}
         and l.id < ${payoutLegId}
    ), rel as (
      select w.leg_id, w.amt, coalesce(rc.entry_id, w.entry_id) as source_entry_id,
             coalesce(rc.amount, 0) as credit,
             row_number() over run as n,
             count(*) over (partition by w.leg_id) as cnt,
             coalesce(sum(rc.amount) over (run rows between unbounded preceding and 1 preceding), 0)
               as before
        from w
        left join ledger_reserve_credits rc
          on rc.merchant_id = ${owner.merchantId}
         and rc.owner_type = ${owner.ownerType}
         and rc.owner_id = ${owner.ownerId}
         and (rc.settlement_entry_id = w.entry_id
              or (rc.settlement_entry_id is null and rc.settled_at = w.entry_at))
       where w.kind = 'settlement'
      window run as (partition by w.leg_id order by rc.credited_at, rc.entry_id)
    ), parts as (
      select leg_id, n, source_entry_id,
             case when n = cnt then amt - least(before, amt)
                  else least(credit, greatest(0, amt - before)) end as portion
        from rel
      union all
      select leg_id, 1 as n, entry_id as source_entry_id, amt as portion
        from w where kind <> 'settlement'
    )
    select source_entry_id, sum(portion)::bigint as portion,
           min(leg_id * 1000 + n)::bigint as first_leg_id
      from parts
     group by source_entry_id
    having sum(portion) <> 0
       ${page.afterPosition !== undefined ? sql`and min(leg_id * 1000 + n) > ${page.afterPosition}` : sql``}
     order by min(leg_id * 1000 + n)
     limit ${page.limit}`.execute(db)
  return rows.rows
}
