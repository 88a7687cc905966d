import { sql, type Kysely } from 'kysely'

// The merchant's API request log (docs/decisions/0032-request-log.md), owned by
// modules/request-logs: one row per signed request, written in batches off the request path,
// purged after the retention (7 days by default). Only metadata: never a body, a card number
// or a secret. Frozen in time.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table request_logs (
      id text primary key,
      merchant_id text not null,
      submerchant_id text,
      api_key_id text not null,
      key_prefix text not null,
      mode text not null check (mode in ('demo','live')),
      request_id text not null,
      method text not null,
      path text not null,
      route text,
      status integer not null,
      error_code text,
      duration_ms integer not null check (duration_ms >= 0),
      idempotency_key text,
      created_at timestamptz not null
    )`.execute(db)
  // The merchant's list, newest first (keyset on (created_at, id)).
  await sql`create index request_logs_merchant_idx on request_logs
    (merchant_id, created_at desc, id desc)`.execute(db)
  // The retention purge: oldest rows first, across merchants.
  await sql`create index request_logs_created_idx on request_logs (created_at)`.execute(db)
}
