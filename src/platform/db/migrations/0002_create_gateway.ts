import { sql, type Kysely } from 'kysely'

// Owned by modules/gateway. Frozen in time.
export async function up(db: Kysely<unknown>): Promise<void> {
  // One row per (API key, endpoint, Idempotency-Key). The endpoint is the method and the
  // concrete path, so the same key on two different payments' refund routes is two records.
  await sql`
    create table idempotency_keys (
      api_key_id text not null,
      endpoint text not null,
      idempotency_key uuid not null,
      fingerprint text not null,
      state text not null check (state in ('processing','done','retryable')),
      locked_at timestamptz,
      response_status integer,
      response_body text,
      response_content_type text,
      request_id text not null,
      created_at timestamptz not null,
      expires_at timestamptz not null,
      primary key (api_key_id, endpoint, idempotency_key)
    )`.execute(db)
  await sql`create index idempotency_keys_expires_idx on idempotency_keys (expires_at)`.execute(db)
  await sql`
    create table rate_limit_buckets (
      bucket text primary key,
      tokens double precision not null,
      refilled_at timestamptz not null
    )`.execute(db)
}
