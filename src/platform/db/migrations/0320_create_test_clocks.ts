import { sql, type Kysely } from 'kysely'

// Sandbox test clocks (docs/decisions/0031-test-clocks.md): the table is owned by
// modules/test-clocks, subscriptions.test_clock_id by modules/subscriptions. A subscription
// created on a clock lives at the clock's time; the real-time renewal engine never claims it,
// only advancing its clock does. Frozen in time.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table test_clocks (
      id text primary key,
      merchant_id text not null,
      name text check (name is null or length(name) between 1 and 200),
      frozen_time timestamptz not null,
      status text not null check (status in ('ready','advancing')),
      created_at timestamptz not null,
      updated_at timestamptz not null
    )`.execute(db)
  await sql`create index test_clocks_merchant_idx on test_clocks
    (merchant_id, created_at desc, id desc)`.execute(db)
  await sql`alter table subscriptions add column test_clock_id text`.execute(db)
  // An advance's scan: the clock's due rows, oldest due first. The real-time engine's scan
  // (subscriptions_due_idx) adds "test_clock_id is null", which that index still serves.
  await sql`create index subscriptions_test_clock_due_idx on subscriptions
    (test_clock_id, next_charge_at, id)
    where test_clock_id is not null and status in ('trialing','active','past_due')`.execute(db)
}
