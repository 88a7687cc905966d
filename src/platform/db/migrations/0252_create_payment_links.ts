import { sql, type Kysely } from 'kysely'

// Owned by modules/payment-links (the table) and modules/payments (one column each on
// payment_sessions and payments): payment links (CONTRACT.md "Payment links"). Frozen in time.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table payment_links (
      id text primary key,
      merchant_id text not null,
      store_id text not null,
      -- the public page's path segment /l/{public_hash}: random, unguessable, unique
      public_hash text not null unique,
      amount bigint not null check (amount > 0),
      currency text not null default 'TRY' check (currency = 'TRY'),
      description text not null,
      max_payments integer check (max_payments is null or max_payments > 0),
      expires_at timestamptz,
      metadata jsonb not null default '{}'::jsonb,
      installments boolean not null default false,
      collect jsonb not null default '{}'::jsonb,
      return_url text,
      active boolean not null default true,
      deactivated_at timestamptz,
      -- checkout sessions made so far: session n has transactionId '<id>:<n>'
      session_seq integer not null default 0,
      created_at timestamptz not null,
      updated_at timestamptz not null
    )`.execute(db)
  await sql`create index payment_links_merchant_created_idx
    on payment_links (merchant_id, created_at desc, id desc)`.execute(db)

  // The link a session and the payment made from it belong to (null for everything else).
  await sql`alter table payment_sessions add column payment_link_id text`.execute(db)
  await sql`alter table payments add column payment_link_id text`.execute(db)
  await sql`create index payment_sessions_payment_link_idx on payment_sessions (payment_link_id)
    where payment_link_id is not null`.execute(db)
  await sql`create index payments_payment_link_idx on payments (payment_link_id)
    where payment_link_id is not null`.execute(db)
}
