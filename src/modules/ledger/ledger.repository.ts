import { createHash } from 'node:crypto'
import { sql } from 'kysely'
import type { Db, Tx } from '../../database.ts'
import type {
  AccountType,
  LedgerEntryRow,
  LedgerReserveCreditRow,
  NewLedgerAccount,
  NewLedgerEntry,
  NewLedgerLeg,
  NewLedgerReserveCredit,
  OwnerType,
} from './ledger.table.ts'

// All of the ledger's SQL. Balances are computed, never stored: each is a sum over the
// ledger_legs_balance_idx range of one (merchant, owner, account type).

/** Credit-normal signed amount: credits count up, debits down. */
const creditMinusDebit = sql<number>`sum(case when direction = 'CREDIT' then amount else -amount end)::bigint`

/** Owner accounts are created on first use; the platform's were seeded by the migration. */
export async function insertAccountsIfAbsent(tx: Tx, rows: NewLedgerAccount[]): Promise<void> {
  if (rows.length === 0) return
  // DO NOTHING takes no row lock on an existing account, so concurrent captures of one
  // merchant don't queue here.
  await tx
    .insertInto('ledger_accounts')
    .values(rows)
    .onConflict((oc) => oc.doNothing())
    .execute()
}

/** One posting: the owners' accounts (if absent), the entry, its legs and its reserve credits. */
export interface Posting {
  accounts: NewLedgerAccount[]
  entry: NewLedgerEntry
  /** The legs, without entry_id (the inserted entry's). */
  legs: Omit<NewLedgerLeg, 'entry_id'>[]
  /** Reserve credits, without entry_id; may be empty. */
  credits: Omit<
    NewLedgerReserveCredit,
    'entry_id' | 'settled_at' | 'settled_minor' | 'settlement_entry_id'
  >[]
}

/**
 * Writes a posting in one statement (data-modifying CTEs: one round trip on the hot path).
 * Returns the new entry's id, or undefined when the reference was already posted: then
 * nothing else is written either, since legs and credits hang off the inserted entry.
 * A concurrent transaction posting the same reference makes this wait for it; once it
 * commits we do nothing (one entry), and if it rolls back we insert. Foreign keys from the
 * legs to the accounts inserted here are checked at the end of the statement, so they hold.
 */
export async function insertPosting(tx: Tx, p: Posting): Promise<string | undefined> {
  const e = p.entry
  const accounts =
    p.accounts.length === 0
      ? sql``
      : sql`accounts as (
          insert into ledger_accounts (id, owner_type, owner_id, merchant_id, account_type,
            currency, created_at)
          values ${sql.join(
            p.accounts.map(
              (a) =>
                sql`(${a.id}, ${a.owner_type}, ${a.owner_id}, ${a.merchant_id}, ${a.account_type},
                  ${a.currency}, ${a.created_at}::timestamptz)`,
            ),
          )}
          on conflict do nothing
        ),`
  const credits =
    p.credits.length === 0
      ? sql``
      : sql`, credits as (
          insert into ledger_reserve_credits (entry_id, merchant_id, owner_type, owner_id,
            source_reference, amount, credited_at)
          select entry.id, v.merchant_id, v.owner_type, v.owner_id, v.source_reference, v.amount,
            v.credited_at
          from entry cross join (values ${sql.join(
            p.credits.map(
              (c) =>
                sql`(${c.merchant_id}::text, ${c.owner_type}::text, ${c.owner_id}::text,
                  ${c.source_reference}::text, ${c.amount}::bigint, ${c.credited_at}::timestamptz)`,
            ),
          )}) as v(merchant_id, owner_type, owner_id, source_reference, amount, credited_at)
        )`
  const result = await sql<{ id: string }>`
    with ${accounts} entry as (
      insert into ledger_entries (id, merchant_id, kind, reference, payment_id, created_at)
      values (${e.id}, ${e.merchant_id}, ${e.kind}, ${e.reference}, ${e.payment_id ?? null},
        ${e.created_at}::timestamptz)
      on conflict (reference) do nothing
      returning id
    ), legs as (
      insert into ledger_legs (entry_id, merchant_id, payment_id, account_id, owner_type,
        owner_id, account_type, direction, amount, currency, created_at)
      select entry.id, v.merchant_id, v.payment_id, v.account_id, v.owner_type, v.owner_id,
        v.account_type, v.direction, v.amount, v.currency, v.created_at
      from entry cross join (values ${sql.join(
        p.legs.map(
          (l) =>
            sql`(${l.merchant_id}::text, ${l.payment_id ?? null}::text, ${l.account_id}::text,
              ${l.owner_type}::text, ${l.owner_id}::text, ${l.account_type}::text,
              ${l.direction}::text, ${l.amount}::bigint, ${l.currency}::text,
              ${l.created_at}::timestamptz)`,
        ),
      )}) as v(merchant_id, payment_id, account_id, owner_type, owner_id, account_type,
        direction, amount, currency, created_at)
    ) ${credits}
    select id from entry`.execute(tx)
  return result.rows[0]?.id
}

export async function insertLegs(tx: Tx, rows: NewLedgerLeg[]): Promise<void> {
  await tx.insertInto('ledger_legs').values(rows).execute()
}

// A multi-row INSERT binds (rows × columns) parameters; PostgreSQL allows 65,535 per
// statement, so batches are written in chunks well below that.
const BULK_ROWS_MAX = 500

/** Several new entries at once (a batch of payouts); references must not be posted yet. */
export async function insertEntries(tx: Tx, rows: NewLedgerEntry[]): Promise<void> {
  for (let i = 0; i < rows.length; i += BULK_ROWS_MAX) {
    await tx
      .insertInto('ledger_entries')
      .values(rows.slice(i, i + BULK_ROWS_MAX))
      .execute()
  }
}

export async function insertLegsInChunks(tx: Tx, rows: NewLedgerLeg[]): Promise<void> {
  for (let i = 0; i < rows.length; i += BULK_ROWS_MAX) {
    await insertLegs(tx, rows.slice(i, i + BULK_ROWS_MAX))
  }
}

export interface ReserveCreditPosition {
  creditedAt: Date
  entryId: string
  ownerType: 'merchant' | 'submerchant'
  ownerId: string
}

/** Unsettled reserve credits, oldest first, after a keyset position (the reconciler's scan). */
export function findUnsettledReserveCredits(
  db: Db,
  after: ReserveCreditPosition | undefined,
  limit: number,
): Promise<LedgerReserveCreditRow[]> {
  let query = db.selectFrom('ledger_reserve_credits').selectAll().where('settled_at', 'is', null)
  if (after) {
    query = query.where((eb) =>
      eb(
        eb.refTuple('credited_at', 'entry_id', 'owner_type', 'owner_id'),
        '>',
        eb.tuple(after.creditedAt, after.entryId, after.ownerType, after.ownerId),
      ),
    )
  }
  return query
    .orderBy('credited_at')
    .orderBy('entry_id')
    .orderBy('owner_type')
    .orderBy('owner_id')
    .limit(limit)
    .execute()
}

export function lockReserveCredit(
  tx: Tx,
  merchantId: string,
  key: { entryId: string; ownerType: 'merchant' | 'submerchant'; ownerId: string },
): Promise<LedgerReserveCreditRow | undefined> {
  return tx
    .selectFrom('ledger_reserve_credits')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .where('entry_id', '=', key.entryId)
    .where('owner_type', '=', key.ownerType)
    .where('owner_id', '=', key.ownerId)
    .forUpdate()
    .executeTakeFirst()
}

/**
 * The owner's reserve balance and the part of it still inside the settlement delay (its
 * unsettled credits newer than `maturedBefore`), read in ONE statement so both come from one
 * snapshot: a capture committing between two separate reads could otherwise be counted in
 * the reserve but not yet as immature, and its money would be released early.
 */
export async function sumReserveAndImmature(
  tx: Tx,
  merchantId: string,
  ownerType: 'merchant' | 'submerchant',
  ownerId: string,
  maturedBefore: Date,
): Promise<{ reserve: number; immature: number }> {
  const row = await sql<{ reserve: number | null; immature: number | null }>`
    select
      (select sum(case when direction = 'CREDIT' then amount else -amount end)::bigint
         from ledger_legs
        where merchant_id = ${merchantId} and owner_type = ${ownerType}
          and owner_id = ${ownerId} and account_type = 'merchant_reserve') as reserve,
      (select sum(amount)::bigint
         from ledger_reserve_credits
        where merchant_id = ${merchantId} and owner_type = ${ownerType}
          and owner_id = ${ownerId} and settled_at is null
          and credited_at > ${maturedBefore}) as immature`.execute(tx)
  const first = row.rows[0]
  return { reserve: first?.reserve ?? 0, immature: first?.immature ?? 0 }
}

export async function updateReserveCreditSettled(
  tx: Tx,
  key: { entryId: string; ownerType: 'merchant' | 'submerchant'; ownerId: string },
  settled: { at: Date; amount: number; settlementEntryId: string | null },
): Promise<void> {
  await tx
    .updateTable('ledger_reserve_credits')
    .set({
      settled_at: settled.at,
      settled_minor: settled.amount,
      settlement_entry_id: settled.settlementEntryId,
    })
    .where('entry_id', '=', key.entryId)
    .where('owner_type', '=', key.ownerType)
    .where('owner_id', '=', key.ownerId)
    .where('settled_at', 'is', null)
    .execute()
}

export function findEntryByReference(
  db: Db,
  reference: string,
): Promise<LedgerEntryRow | undefined> {
  return db
    .selectFrom('ledger_entries')
    .selectAll()
    .where('reference', '=', reference)
    .executeTakeFirst()
}

export function findEntriesByReferences(
  db: Db,
  merchantId: string,
  references: readonly string[],
): Promise<LedgerEntryRow[]> {
  return db
    .selectFrom('ledger_entries')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .where('reference', 'in', references)
    .execute()
}

export function findLegsByEntry(db: Db, merchantId: string, entryId: string) {
  return db
    .selectFrom('ledger_legs')
    .select(['owner_type', 'owner_id', 'account_type', 'direction', 'amount'])
    .where('merchant_id', '=', merchantId)
    .where('entry_id', '=', entryId)
    .orderBy('id')
    .execute()
}

export function findLegsByPayment(db: Db, merchantId: string, paymentId: string) {
  return (
    db
      .selectFrom('ledger_entries as e')
      .innerJoin('ledger_legs as l', 'l.entry_id', 'e.id')
      .select([
        'l.account_type',
        'l.direction',
        'l.amount',
        'l.currency',
        'l.owner_type',
        'l.owner_id',
      ])
      .where('e.merchant_id', '=', merchantId)
      .where('e.payment_id', '=', paymentId)
      .where('l.merchant_id', '=', merchantId)
      // Entry time, then insertion order (legs of one entry are written together, in the
      // order the flow table lists them).
      .orderBy('e.created_at')
      .orderBy('l.id')
      .execute()
  )
}

export interface OwnerAccountBalanceRow {
  owner_type: OwnerType
  owner_id: string
  account_type: AccountType
  balance: number
}

/** Credit-normal balances of the tenant's owner accounts (not the platform's). */
export function sumOwnerBalancesByMerchant(
  db: Db,
  merchantId: string,
  ownerIds?: readonly string[],
  accountTypes?: readonly AccountType[],
): Promise<OwnerAccountBalanceRow[]> {
  let query = db
    .selectFrom('ledger_legs')
    .select(['owner_type', 'owner_id', 'account_type', creditMinusDebit.as('balance')])
    .where('merchant_id', '=', merchantId)
    .where('owner_type', 'in', ['merchant', 'submerchant'])
  if (ownerIds) query = query.where('owner_id', 'in', ownerIds)
  if (accountTypes) query = query.where('account_type', 'in', accountTypes)
  return query.groupBy(['owner_type', 'owner_id', 'account_type']).execute()
}

// Advisory locks live in (namespace, key) pairs; this namespace is the ledger's own.
const OWNER_LOCK_NAMESPACE = 0x4c454447 // 'LEDG'

export function ownerLockKey(ownerKey: string): number {
  return createHash('sha256').update(ownerKey).digest().readInt32BE(0)
}

/**
 * Serialises the balance-reading postings (refund, chargeback, settlement, payout) of one
 * owner until the transaction ends, so two of them can't both spend one reserve or one
 * available balance. Captures only credit and never take it. Keys are locked in ascending
 * order of the lock key itself, so two transactions over the same owners cannot deadlock.
 */
export async function lockOwners(tx: Tx, ownerKeys: readonly string[]): Promise<void> {
  const keys = [...new Set(ownerKeys.map(ownerLockKey))].sort((a, b) => a - b)
  for (const key of keys) {
    await sql`select pg_advisory_xact_lock(${OWNER_LOCK_NAMESPACE}::int4, ${key}::int4)`.execute(tx)
  }
}

// checkLedger's queries scan the whole ledger: they are for the operator's command and the
// nightly reconciler, never for a request. Each reports at most `limit` offenders.

export function findUnbalancedEntries(db: Db, limit: number) {
  return db
    .selectFrom('ledger_entries as e')
    .leftJoin('ledger_legs as l', 'l.entry_id', 'e.id')
    .select([
      'e.id',
      'e.kind',
      (eb) => eb.fn.count<number>('l.id').as('legs'),
      sql<number>`coalesce(sum(l.amount) filter (where l.direction = 'DEBIT'), 0)::bigint`.as(
        'debits',
      ),
      sql<number>`coalesce(sum(l.amount) filter (where l.direction = 'CREDIT'), 0)::bigint`.as(
        'credits',
      ),
    ])
    .groupBy(['e.id', 'e.kind'])
    .having((eb) =>
      eb.or([
        eb(eb.fn.count('l.id'), '<', 2),
        eb(
          sql`coalesce(sum(l.amount) filter (where l.direction = 'DEBIT'), 0)`,
          '<>',
          sql`coalesce(sum(l.amount) filter (where l.direction = 'CREDIT'), 0)`,
        ),
      ]),
    )
    .orderBy('e.id')
    .limit(limit)
    .execute()
}

export function sumLegsByCurrencyAndDirection(db: Db) {
  return db
    .selectFrom('ledger_legs')
    .select(['currency', 'direction', sql<number>`sum(amount)::bigint`.as('total')])
    .groupBy(['currency', 'direction'])
    .execute()
}

/** Legs without their entry or account, or whose copied fields disagree with them. */
export function findInconsistentLegs(db: Db, limit: number) {
  return db
    .selectFrom('ledger_legs as l')
    .leftJoin('ledger_entries as e', 'e.id', 'l.entry_id')
    .leftJoin('ledger_accounts as a', 'a.id', 'l.account_id')
    .select([
      'l.id',
      'l.entry_id',
      sql<boolean>`e.id is null`.as('orphan_entry'),
      sql<boolean>`a.id is null`.as('orphan_account'),
      sql<boolean>`l.merchant_id is distinct from e.merchant_id
        or l.payment_id is distinct from e.payment_id`.as('entry_mismatch'),
      sql<boolean>`l.owner_type is distinct from a.owner_type
        or l.owner_id is distinct from a.owner_id
        or l.account_type is distinct from a.account_type
        or (a.owner_type <> 'platform' and a.merchant_id is distinct from l.merchant_id)`.as(
        'account_mismatch',
      ),
    ])
    .where(
      sql<boolean>`e.id is null or a.id is null
        or l.merchant_id is distinct from e.merchant_id
        or l.payment_id is distinct from e.payment_id
        or l.owner_type is distinct from a.owner_type
        or l.owner_id is distinct from a.owner_id
        or l.account_type is distinct from a.account_type
        or (a.owner_type <> 'platform' and a.merchant_id is distinct from l.merchant_id)`,
    )
    .orderBy('l.id')
    .limit(limit)
    .execute()
}

// The audit's view of each payment's books (`kurus check-ledger`): per payment, what its
// capture, refund and chargeback entries moved through buyer_pending and the commission
// account. Without ids: one row over every entry that has a payment (payment_id null).
const paymentSum = (kind: string, account: AccountType, direction: 'DEBIT' | 'CREDIT') =>
  sql<number>`coalesce(sum(l.amount) filter (where e.kind = ${kind} and l.account_type = ${account} and l.direction = ${direction}), 0)::bigint`

export function sumLegsByPayment(db: Db, paymentIds: readonly string[] | null) {
  if (paymentIds?.length === 0) return Promise.resolve([])
  const query = db
    .selectFrom('ledger_entries as e')
    .innerJoin('ledger_legs as l', 'l.entry_id', 'e.id')
    .select([
      sql<number>`count(distinct e.id) filter (where e.kind = 'capture')::int`.as(
        'capture_entries',
      ),
      sql<number>`count(distinct e.id) filter (where e.kind = 'refund')::int`.as('refund_entries'),
      sql<number>`count(distinct e.id) filter (where e.kind = 'chargeback')::int`.as(
        'chargeback_entries',
      ),
      sql<number>`count(distinct e.id) filter (where e.kind not in ('capture', 'refund', 'chargeback', 'chargeback_reversal'))::int`.as(
        'other_entries',
      ),
      paymentSum('capture', 'buyer_pending', 'DEBIT').as('captured'),
      paymentSum('capture', 'platform_commission', 'CREDIT').as('commission'),
      paymentSum('refund', 'buyer_pending', 'CREDIT').as('refunded'),
      paymentSum('refund', 'platform_commission', 'DEBIT').as('commission_refunded'),
      paymentSum('chargeback', 'buyer_pending', 'CREDIT').as('charged_back'),
      paymentSum('chargeback_reversal', 'buyer_pending', 'DEBIT').as('chargeback_reversed'),
    ])
    .where('e.payment_id', 'is not', null)
  return paymentIds
    ? query
        .select('e.payment_id')
        .where('e.payment_id', 'in', paymentIds)
        .groupBy('e.payment_id')
        .execute()
    : query.select(sql<string | null>`null`.as('payment_id')).execute()
}
