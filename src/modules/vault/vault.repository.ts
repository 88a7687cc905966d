import { sql } from 'kysely'
import { jsonObjectFrom } from 'kysely/helpers/postgres'
import type { Db, Tx } from '../../database.ts'
import type { CardAccessRow, CardTokenRow, NewCardToken } from './vault.table.ts'

export async function insertCardToken(db: Db, row: NewCardToken): Promise<void> {
  await db.insertInto('vault_card_tokens').values(row).execute()
}

/** Binds a single-use token to its order unless another order has it or it expired. */
export async function bindSingleUseToken(
  db: Db,
  merchantId: string,
  id: string,
  transactionId: string,
  now: Date,
): Promise<boolean> {
  const row = await db
    .updateTable('vault_card_tokens')
    .set({ bound_transaction_id: transactionId })
    .where('merchant_id', '=', merchantId)
    .where('id', '=', id)
    .where('single_use', '=', true)
    .where((eb) =>
      eb.or([
        eb('bound_transaction_id', '=', transactionId),
        eb.and([eb('bound_transaction_id', 'is', null), eb('expires_at', '>', now)]),
      ]),
    )
    .returning('id')
    .executeTakeFirst()
  return row !== undefined
}

export function findCardTokenById(
  db: Db,
  merchantId: string,
  id: string,
): Promise<CardTokenRow | undefined> {
  return db
    .selectFrom('vault_card_tokens')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .where('id', '=', id)
    .executeTakeFirst()
}

/**
 * A token's public columns (never the sealed PAN or its key) as one JSON column of another
 * module's statement: the card charge reads its session and its token in one round trip.
 */
export function cardTokenJsonOf(db: Db, merchantId: string, id: string) {
  return jsonObjectFrom(
    db
      .selectFrom('vault_card_tokens')
      .select([
        'id',
        'merchant_id',
        'fingerprint',
        'last4',
        'bin',
        'brand',
        'card_type',
        'exp_month',
        'exp_year',
        'holder_name',
        'status',
        'customer_id',
        'created_at',
        'single_use',
      ])
      .where('merchant_id', '=', merchantId)
      .where('id', '=', id),
  )
}

/**
 * Reads a token and writes its detokenization audit row in one statement (so one round trip
 * and one implicit transaction): the row comes back only if the audit insert succeeded.
 * Its commit stays synchronous: the audit must be durable before a card number leaves the
 * vault, and the card charge's intent and risk decision commit asynchronously because this
 * commit flushes the WAL up to them before any acquirer sees the card (docs/performance.md).
 * `allowed` false (a caller the vault refuses) is audited as denied; so is a missing or
 * revoked token. The statement reads one snapshot: a revoke committing meanwhile is ordered
 * after this read, as it would be after a locked read's commit.
 */
export async function findCardTokenAudited(
  db: Db,
  p: {
    merchantId: string
    id: string
    auditedToken: string
    callerService: string
    allowed: boolean
    at: Date
  },
): Promise<CardTokenRow | undefined> {
  const result = await sql<CardTokenRow>`
    with token as (
      select * from vault_card_tokens where merchant_id = ${p.merchantId} and id = ${p.id}
    ), audit as (
      insert into vault_card_access (op, card_token, merchant_id, caller_service, result, created_at)
      select 'detokenize', ${p.auditedToken}, ${p.merchantId}, ${p.callerService},
        case when ${p.allowed}::boolean and exists (select 1 from token where status = 'active')
          then 'ok' else 'denied' end,
        ${p.at}::timestamptz
    )
    select * from token`.execute(db)
  return result.rows[0]
}

export function lockCardTokenById(
  tx: Tx,
  merchantId: string,
  id: string,
): Promise<CardTokenRow | undefined> {
  return tx
    .selectFrom('vault_card_tokens')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .where('id', '=', id)
    .forUpdate()
    .executeTakeFirst()
}

export async function updateCardTokenCustomer(
  tx: Tx,
  id: string,
  customerId: string,
): Promise<void> {
  await tx
    .updateTable('vault_card_tokens')
    .set({ customer_id: customerId })
    .where('id', '=', id)
    .where('customer_id', 'is', null)
    .execute()
}

export async function updateCardTokenRevoked(tx: Tx, id: string): Promise<void> {
  // The use case gets only a transaction (it runs inside the caller's), so the database
  // supplies the time.
  await tx
    .updateTable('vault_card_tokens')
    .set({ status: 'revoked', revoked_at: sql<Date>`now()` })
    .where('id', '=', id)
    .where('status', '=', 'active')
    .execute()
}

export interface CardAccessPageQuery {
  merchantId: string
  from: Date | undefined
  to: Date | undefined
  /** Keyset position: rows strictly older than this (created_at, id). */
  before: { createdAt: Date; id: number } | undefined
  limit: number
}

/** Newest first; keyset pagination on (created_at, id), served by vault_card_access_merchant_idx. */
export function findCardAccessPage(db: Db, q: CardAccessPageQuery): Promise<CardAccessRow[]> {
  let query = db.selectFrom('vault_card_access').selectAll().where('merchant_id', '=', q.merchantId)
  if (q.from) query = query.where('created_at', '>=', q.from)
  if (q.to) query = query.where('created_at', '<', q.to)
  const before = q.before
  if (before) {
    query = query.where((eb) =>
      eb(eb.refTuple('created_at', 'id'), '<', eb.tuple(before.createdAt, before.id)),
    )
  }
  return query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(q.limit).execute()
}

/** Rows wrapped under any key but the listed ones, locked for the re-wrap (others skip them). */
export function lockRowsToRewrap(
  tx: Tx,
  keepKekIds: string[],
  limit: number,
): Promise<Pick<CardTokenRow, 'id' | 'dek_wrapped' | 'kek_id'>[]> {
  return tx
    .selectFrom('vault_card_tokens')
    .select(['id', 'dek_wrapped', 'kek_id'])
    .where('kek_id', 'not in', keepKekIds)
    .orderBy('id')
    .limit(limit)
    .forUpdate()
    .skipLocked()
    .execute()
}

export async function updateWrappedDek(
  tx: Tx,
  id: string,
  fromKekId: string,
  wrapped: { dekWrapped: string; kekId: string },
): Promise<void> {
  await tx
    .updateTable('vault_card_tokens')
    .set({ dek_wrapped: wrapped.dekWrapped, kek_id: wrapped.kekId })
    .where('id', '=', id)
    .where('kek_id', '=', fromKekId)
    .execute()
}

export async function countRowsUnderKek(db: Db, kekId: string): Promise<number> {
  const row = await db
    .selectFrom('vault_card_tokens')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('kek_id', '=', kekId)
    .executeTakeFirst()
  return Number(row?.n ?? 0)
}
