import { sql, type Kysely } from 'kysely'

// Owned by modules/checkout: which payments the hosted checkout started (the ACS page
// finishes those itself) and the per-IP tokenization log of the card-testing guard.
// Frozen in time.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table checkout_attempts (
      payment_id text primary key,
      session_id uuid not null,
      merchant_id text not null,
      created_at timestamptz not null
    )`.execute(db)
  await sql`create index checkout_attempts_session_idx on checkout_attempts (session_id)`.execute(
    db,
  )
  await sql`
    create table checkout_tokenizations (
      id bigint generated always as identity primary key,
      ip_key text not null,
      created_at timestamptz not null
    )`.execute(db)
  await sql`create index checkout_tokenizations_ip_idx
    on checkout_tokenizations (ip_key, created_at)`.execute(db)
}
