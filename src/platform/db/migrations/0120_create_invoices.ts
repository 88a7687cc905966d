import { sql, type Kysely } from 'kysely'

// Owned by modules/invoices: invoices with their line items and public link. Frozen in time.
export async function up(db: Kysely<unknown>): Promise<void> {
  // The public link's bearer is looked up by its SHA-256 (public_hash_sha256); the bearer
  // itself is kept only encrypted under a key derived from the master key
  // (public_hash_enc), because the service must put it into the email it sends later.
  // session_seq is the n of the latest checkout session `<id>:<n>` the invoice minted.
  // email_next_at is the email outbox: set when the invoice is sent, it is when the next
  // delivery attempt is due (or a claimed attempt's lease ends); null once delivered.
  await sql`
    create table invoices (
      id text primary key,
      merchant_id text not null references merchants(id),
      store_id text not null,
      customer_id text,
      public_hash_sha256 text not null unique,
      public_hash_enc text not null,
      status text not null check (status in
        ('draft','sent','activated','viewed','paid','expired','cancelled')),
      amount_minor bigint not null check (amount_minor between 100 and 10000000000),
      currency text not null check (currency = 'TRY'),
      line_items jsonb not null,
      buyer_email text,
      buyer_name text,
      due_date timestamptz,
      expires_at timestamptz,
      notes text,
      session_seq integer not null default 0 check (session_seq >= 0),
      session_id uuid,
      session_minted_at timestamptz,
      payment_id text,
      subscription_id text,
      cycle_number integer,
      email_sent_at timestamptz,
      email_attempts integer not null default 0 check (email_attempts >= 0),
      email_next_at timestamptz,
      created_at timestamptz not null,
      updated_at timestamptz not null,
      sent_at timestamptz,
      activated_at timestamptz,
      viewed_at timestamptz,
      paid_at timestamptz,
      expired_at timestamptz,
      cancelled_at timestamptz,
      check ((status = 'paid') = (paid_at is not null)),
      check ((subscription_id is null) = (cycle_number is null))
    )`.execute(db)
  // The merchant's list: newest first, keyset on (created_at, id).
  await sql`create index invoices_list_idx on invoices
    (merchant_id, created_at desc, id desc)`.execute(db)
  // The expiry sweep: open invoices with a link expiry, soonest first.
  await sql`create index invoices_expiry_idx on invoices (expires_at, id)
    where status in ('draft','sent','activated','viewed') and expires_at is not null`.execute(db)
  // The payment sweep: open invoices by when they last minted a checkout session.
  await sql`create index invoices_open_sessions_idx on invoices (session_minted_at, id)
    where status in ('sent','activated','viewed') and session_seq > 0`.execute(db)
  // The email outbox: invoices whose email is due (first try, retry, or a lapsed lease).
  await sql`create index invoices_email_due_idx on invoices (email_next_at)
    where email_next_at is not null`.execute(db)
  // A subscription's renewal invoice exists once per cycle.
  await sql`create unique index invoices_subscription_cycle_key on invoices
    (subscription_id, cycle_number) where subscription_id is not null`.execute(db)
}
