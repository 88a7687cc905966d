import { sql } from 'kysely'
import type { Db, Tx } from '../../database.ts'
import type { IdempotencyRow } from './gateway.table.ts'

export interface IdempotencyIdentity {
  apiKeyId: string
  endpoint: string
  key: string
}

/**
 * Claims a fresh key; false when a record for it already exists.
 *
 * The claim's commit does not wait for the WAL flush (synchronous_commit off for its own
 * implicit transaction, as the rate limiter does): whatever the request then commits, its
 * effect or its recorded answer, is a synchronous commit later in the WAL, which makes the
 * claim durable with it. A crash can only forget a claim whose request left nothing durable.
 */
export async function insertIdempotencyKey(
  db: Db,
  id: IdempotencyIdentity,
  fingerprint: string,
  requestId: string,
  now: Date,
  expiresAt: Date,
): Promise<boolean> {
  const result = await sql<{ claimed: number }>`
    insert into idempotency_keys (api_key_id, endpoint, idempotency_key, fingerprint, state,
      locked_at, request_id, created_at, expires_at)
    select ${id.apiKeyId}, ${id.endpoint}, ${id.key}::uuid, ${fingerprint}, 'processing',
      ${now}::timestamptz, ${requestId}, ${now}::timestamptz, ${expiresAt}::timestamptz
    from (select set_config('synchronous_commit', 'off', true)) as async_commit
    on conflict (api_key_id, endpoint, idempotency_key) do nothing
    returning 1 as claimed`.execute(db)
  return result.rows.length === 1
}

export function lockIdempotencyKey(
  tx: Tx,
  id: IdempotencyIdentity,
): Promise<IdempotencyRow | undefined> {
  return tx
    .selectFrom('idempotency_keys')
    .selectAll()
    .where('api_key_id', '=', id.apiKeyId)
    .where('endpoint', '=', id.endpoint)
    .where('idempotency_key', '=', id.key)
    .forUpdate()
    .executeTakeFirst()
}

export async function updateIdempotencyReclaimed(
  tx: Tx,
  id: IdempotencyIdentity,
  fingerprint: string,
  requestId: string,
  now: Date,
  expiresAt: Date | undefined,
): Promise<void> {
  await tx
    .updateTable('idempotency_keys')
    .set({
      fingerprint,
      state: 'processing',
      locked_at: now,
      request_id: requestId,
      response_status: null,
      response_body: null,
      response_content_type: null,
      ...(expiresAt ? { created_at: now, expires_at: expiresAt } : {}),
    })
    .where('api_key_id', '=', id.apiKeyId)
    .where('endpoint', '=', id.endpoint)
    .where('idempotency_key', '=', id.key)
    .execute()
}

export async function updateIdempotencyDone(
  db: Db,
  id: IdempotencyIdentity,
  requestId: string,
  status: number,
  body: string,
  contentType: string,
): Promise<void> {
  await db
    .updateTable('idempotency_keys')
    .set({
      state: 'done',
      locked_at: null,
      response_status: status,
      response_body: body,
      response_content_type: contentType,
    })
    .where('api_key_id', '=', id.apiKeyId)
    .where('endpoint', '=', id.endpoint)
    .where('idempotency_key', '=', id.key)
    // Only the request that holds the claim may complete it.
    .where('request_id', '=', requestId)
    .where('state', '=', 'processing')
    .execute()
}

export async function updateIdempotencyRetryable(
  db: Db,
  id: IdempotencyIdentity,
  requestId: string,
): Promise<void> {
  await db
    .updateTable('idempotency_keys')
    .set({ state: 'retryable', locked_at: null })
    .where('api_key_id', '=', id.apiKeyId)
    .where('endpoint', '=', id.endpoint)
    .where('idempotency_key', '=', id.key)
    .where('request_id', '=', requestId)
    .where('state', '=', 'processing')
    .execute()
}

export async function deleteIdempotencyKey(
  db: Db,
  id: IdempotencyIdentity,
  requestId: string,
): Promise<void> {
  await db
    .deleteFrom('idempotency_keys')
    .where('api_key_id', '=', id.apiKeyId)
    .where('endpoint', '=', id.endpoint)
    .where('idempotency_key', '=', id.key)
    .where('request_id', '=', requestId)
    .where('state', '=', 'processing')
    .execute()
}

export async function deleteExpiredIdempotencyKeys(db: Db, now: Date, limit: number) {
  const result = await db
    .deleteFrom('idempotency_keys')
    .where(({ eb, selectFrom }) =>
      eb(
        sql.raw('(api_key_id, endpoint, idempotency_key)'),
        'in',
        selectFrom('idempotency_keys')
          .select(['api_key_id', 'endpoint', 'idempotency_key'])
          .where('expires_at', '<=', now)
          .limit(limit),
      ),
    )
    .executeTakeFirst()
  return Number(result.numDeletedRows)
}

/**
 * Token bucket in one statement, so it holds across API processes. Raw SQL because the
 * refill arithmetic refers to the conflicting row (b.*). Takes up to `count` whole tokens, as
 * many as the bucket holds (a process leases several and spends them locally, rate-limit.ts);
 * a take that finds less than one token grants none and floors the balance at -1, so a client
 * that keeps hammering recovers within one token's time once it stops.
 *
 * A bucket is throwaway state, so its commit need not wait for the WAL flush: the statement
 * turns synchronous_commit off for its own implicit transaction (set_config(…, true)), and a
 * crash forgets at most the last few takes. With the flush, every signed request paid an
 * fsync while holding the bucket's row lock, which capped one key at one request per flush.
 * It stays a single statement so the row lock is never held across a client round trip.
 */
export async function takeRateLimitTokens(
  db: Db,
  bucket: string,
  count: number,
  ratePerSecond: number,
  burst: number,
  now: Date,
): Promise<{ granted: number; left: number }> {
  const refilled = sql`least(${burst}::float8,
    b.tokens + greatest(0, extract(epoch from (${now}::timestamptz - b.refilled_at))) * ${ratePerSecond}::float8)`
  const grant = sql`(case when ${refilled} >= 1 then least(${count}::int, floor(${refilled})::int) else 0 end)`
  const result = await sql<{ tokens: number; granted: number }>`
    insert into rate_limit_buckets as b (bucket, tokens, refilled_at, granted)
    select ${bucket}::text, ${burst}::float8 - least(${count}::int, floor(${burst}::float8)::int),
      ${now}::timestamptz, least(${count}::int, floor(${burst}::float8)::int)
    from (select set_config('synchronous_commit', 'off', true)) as async_commit
    on conflict (bucket) do update set
      tokens = case when ${refilled} >= 1 then ${refilled} - ${grant} else greatest(-1, ${refilled} - 1) end,
      granted = ${grant},
      refilled_at = greatest(b.refilled_at, ${now}::timestamptz)
    returning tokens, granted`.execute(db)
  const row = result.rows[0]
  return row ? { granted: row.granted, left: row.tokens } : { granted: 0, left: -1 }
}

/**
 * Records an accepted signature; true when it is the first (or its earlier record had expired
 * and is taken over). Committed without waiting for the WAL flush, as the idempotency claim:
 * whatever the request then commits is a synchronous commit later in the WAL, which makes
 * this row durable with it, so a crash can only forget a signature whose request left nothing.
 */
export async function insertAcceptedSignature(
  db: Db,
  signature: Buffer,
  idempotencyKey: string | null,
  now: Date,
  expiresAt: Date,
): Promise<boolean> {
  const result = await sql<{ first: number }>`
    insert into accepted_signatures as s (signature, idempotency_key, expires_at)
    select ${signature}::bytea, ${idempotencyKey}::text, ${expiresAt}::timestamptz
    from (select set_config('synchronous_commit', 'off', true)) as async_commit
    on conflict (signature) do update
      set idempotency_key = excluded.idempotency_key, expires_at = excluded.expires_at
      where s.expires_at <= ${now}::timestamptz
    returning 1 as first`.execute(db)
  return result.rows.length === 1
}

export function findAcceptedSignature(
  db: Db,
  signature: Buffer,
): Promise<{ idempotency_key: string | null } | undefined> {
  return db
    .selectFrom('accepted_signatures')
    .select('idempotency_key')
    .where('signature', '=', signature)
    .executeTakeFirst()
}

export async function deleteExpiredAcceptedSignatures(
  db: Db,
  now: Date,
  limit: number,
): Promise<number> {
  const result = await db
    .deleteFrom('accepted_signatures')
    .where(
      'signature',
      'in',
      db
        .selectFrom('accepted_signatures')
        .select('signature')
        .where('expires_at', '<=', now)
        .limit(limit),
    )
    .executeTakeFirst()
  return Number(result.numDeletedRows)
}
