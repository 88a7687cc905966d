import { sql, type Kysely } from 'kysely'

// Owned by modules/webhooks: endpoints, their deliveries, and each store's callback signing
// secret; plus the outbox's dispatch mark on modules/events' table. Frozen in time.
export async function up(db: Kysely<unknown>): Promise<void> {
  // An event is fanned out into deliveries exactly once: the dispatcher sets dispatched_at
  // in the same transaction that inserts the deliveries. Events older than webhooks had no
  // subscribers, so they count as dispatched.
  await sql`alter table events add column dispatched_at timestamptz`.execute(db)
  await sql`update events set dispatched_at = created_at`.execute(db)
  await sql`create index events_undispatched_idx on events (created_at, id)
    where dispatched_at is null`.execute(db)

  await sql`
    create table webhook_endpoints (
      id text primary key,
      merchant_id text not null,
      store_id text not null,
      url text not null,
      event_types jsonb,
      status text not null check (status in ('enabled','disabled','deleted')),
      secret_enc text not null,
      previous_secret_enc text,
      previous_secret_expires_at timestamptz,
      failing_since timestamptz,
      disabled_at timestamptz,
      created_at timestamptz not null,
      updated_at timestamptz not null
    )`.execute(db)
  await sql`create index webhook_endpoints_store_idx on webhook_endpoints (merchant_id, store_id)
    where status <> 'deleted'`.execute(db)

  await sql`
    create table webhook_store_secrets (
      store_id text primary key,
      merchant_id text not null,
      secret_enc text not null,
      created_at timestamptz not null
    )`.execute(db)

  await sql`
    create table webhook_deliveries (
      id text primary key,
      merchant_id text not null,
      store_id text not null,
      event_id text not null references events(id),
      event_type text not null,
      endpoint_id text references webhook_endpoints(id),
      url text not null,
      status text not null check (status in ('pending','delivered','failed')),
      attempt_count integer not null default 0 check (attempt_count >= 0),
      next_attempt_at timestamptz,
      retry_until timestamptz not null,
      last_attempt_at timestamptz,
      last_status_code integer,
      last_error text,
      delivered_at timestamptz,
      created_at timestamptz not null,
      updated_at timestamptz not null,
      check ((status = 'pending') = (next_attempt_at is not null))
    )`.execute(db)
  // One delivery per (event, endpoint), and one to the event's callback URL.
  await sql`create unique index webhook_deliveries_endpoint_uq on webhook_deliveries
    (event_id, endpoint_id) where endpoint_id is not null`.execute(db)
  await sql`create unique index webhook_deliveries_callback_uq on webhook_deliveries (event_id)
    where endpoint_id is null`.execute(db)
  await sql`create index webhook_deliveries_due_idx on webhook_deliveries (next_attempt_at)
    where status = 'pending'`.execute(db)
  await sql`create index webhook_deliveries_store_idx on webhook_deliveries
    (merchant_id, store_id, created_at, id)`.execute(db)
}
