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
  owner: string,
): Promise<boolean> {
  const result = await sql<{ claimed: number }>`
    insert into idempotency_keys (api_key_id, endpoint, idempotency_key, fingerprint, state,
      locked_at, request_id, created_at, expires_at, owner)
    select ${id.apiKeyId}, ${id.endpoint}, ${id.key}::uuid, ${fingerprint}, 'processing',
      ${now}::timestamptz, ${requestId}, ${now}::timestamptz, ${expiresAt}::timestamptz, ${owner}
    from (select set_config('synchronous_commit', 'off', true)) as async_commit
    on conflict (api_key_id, endpoint, idempotency_key) do nothing
    returning 1 as claimed`.execute(db)
  return result.rows.length === 1
}

/** What a claim needs to write its record (a deferred claim writes it in the use case's tx). */
export interface ClaimFields {
  fingerprint: string
  requestId: string
  now: Date
  expiresAt: Date
  owner: string
}

export function findIdempotencyKey(
  db: Db,
  id: IdempotencyIdentity,
): Promise<IdempotencyRow | undefined> {
  return db
    .selectFrom('idempotency_keys')
    .selectAll()
    .where('api_key_id', '=', id.apiKeyId)
    .where('endpoint', '=', id.endpoint)
    .where('idempotency_key', '=', id.key)
    .executeTakeFirst()
}

/**
 * Inside the use case's claim transaction: the key (a deferred claim is inserted here) and
 * what the claim made. False when another request holds the key (a concurrent first attempt
 * won the insert, or this request's claim was taken over).
 */
export async function claimIdempotencyResource(
  db: Db,
  id: IdempotencyIdentity,
  claim: ClaimFields,
  resourceId: string,
): Promise<boolean> {
  const result = await sql<{ claimed: number }>`
    insert into idempotency_keys as k (api_key_id, endpoint, idempotency_key, fingerprint, state,
      locked_at, request_id, created_at, expires_at, owner, resource_id)
    values (${id.apiKeyId}, ${id.endpoint}, ${id.key}::uuid, ${claim.fingerprint}, 'processing',
      ${claim.now}::timestamptz, ${claim.requestId}, ${claim.now}::timestamptz,
      ${claim.expiresAt}::timestamptz, ${claim.owner}, ${resourceId})
    on conflict (api_key_id, endpoint, idempotency_key) do update set resource_id = excluded.resource_id
      where k.request_id = excluded.request_id and k.state = 'processing'
    returning 1 as claimed`.execute(db)
  return result.rows.length === 1
}

/**
 * Inside the use case's outcome transaction: the final answer, kept for verbatim replay. A
 * deferred claim that made nothing before its answer (a refusal) is inserted done. False
 * when the key is not this request's to complete.
 */
export async function recordIdempotencyAnswer(
  db: Db,
  id: IdempotencyIdentity,
  claim: ClaimFields,
  answer: { status: number; body: string; contentType: string },
): Promise<boolean> {
  const result = await sql<{ recorded: number }>`
    insert into idempotency_keys as k (api_key_id, endpoint, idempotency_key, fingerprint, state,
      locked_at, request_id, created_at, expires_at, owner, response_status, response_body,
      response_content_type)
    values (${id.apiKeyId}, ${id.endpoint}, ${id.key}::uuid, ${claim.fingerprint}, 'done',
      null, ${claim.requestId}, ${claim.now}::timestamptz, ${claim.expiresAt}::timestamptz,
      ${claim.owner}, ${answer.status}, ${answer.body}, ${answer.contentType})
    on conflict (api_key_id, endpoint, idempotency_key) do update set state = 'done',
      locked_at = null, response_status = excluded.response_status,
      response_body = excluded.response_body,
      response_content_type = excluded.response_content_type
      where k.request_id = excluded.request_id and k.state = 'processing'
    returning 1 as recorded`.execute(db)
  return result.rows.length === 1
}

/**
 * Gives a claim back after a failure (5xx, shed): a key whose claim made nothing is deleted
 * (a retry starts afresh); one that made something is left `retryable`, so the retry resumes
 * it. Only the request holding the claim may.
 */
export async function releaseIdempotencyKey(
  db: Db,
  id: IdempotencyIdentity,
  requestId: string,
): Promise<void> {
  await sql`
    with released as (
      update idempotency_keys set state = 'retryable', locked_at = null
      where api_key_id = ${id.apiKeyId} and endpoint = ${id.endpoint}
        and idempotency_key = ${id.key}::uuid and request_id = ${requestId}
        and state = 'processing' and resource_id is not null
      returning 1)
    delete from idempotency_keys
    where api_key_id = ${id.apiKeyId} and endpoint = ${id.endpoint}
      and idempotency_key = ${id.key}::uuid and request_id = ${requestId}
      and state = 'processing' and resource_id is null`.execute(db)
}

/**
 * An API process's lease: renewed every second, without waiting for the WAL flush (a lease
 * lost in a crash is renewed a second later). A claim whose owner's lease lapsed belongs to
 * a dead process. Database time, so API processes' clocks (and test clocks) do not matter.
 */
export async function renewProcessLease(db: Db, owner: string, ttlSeconds: number) {
  await sql`
    insert into process_leases (owner, expires_at)
    select ${owner}, now() + make_interval(secs => ${ttlSeconds})
    from (select set_config('synchronous_commit', 'off', true)) as async_commit
    on conflict (owner) do update set expires_at = excluded.expires_at`.execute(db)
}

/** True when the owner holds a live lease, false when it lapsed, undefined when it has none. */
export async function processLeaseLive(db: Db, owner: string): Promise<boolean | undefined> {
  const { rows } = await sql<{ live: boolean }>`
    select expires_at > now() as live from process_leases where owner = ${owner}`.execute(db)
  return rows[0]?.live
}

export async function deleteLapsedProcessLeases(db: Db): Promise<void> {
  await sql`delete from process_leases where expires_at < now() - interval '1 day'`.execute(db)
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
  owner: string,
  /** Whether what the earlier claim made is kept (a takeover resumes it). */
  keepResource: boolean,
): Promise<void> {
  await tx
    .updateTable('idempotency_keys')
    .set({
      fingerprint,
      state: 'processing',
      locked_at: now,
      request_id: requestId,
      owner,
      ...(keepResource ? {} : { resource_id: null }),
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
