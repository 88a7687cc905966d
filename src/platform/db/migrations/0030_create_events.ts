import { sql, type Kysely } from 'kysely'

// Owned by modules/events: the transactional outbox. Frozen in time.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table events (
      id text primary key,
      merchant_id text not null,
      store_id text,
      type text not null,
      resource_type text not null,
      resource_id text not null,
      sequence integer not null check (sequence > 0),
      data jsonb not null,
      callback_url text,
      created_at timestamptz not null,
      unique (resource_id, sequence)
    )`.execute(db)
  await sql`create index events_merchant_created_idx on events (merchant_id, created_at, id)`.execute(
    db,
  )
}
