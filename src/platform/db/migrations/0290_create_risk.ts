import { sql, type Kysely } from 'kysely'

// Owned by modules/risk (risk_list_items, risk_rules, risk_reviews) and modules/payments (the
// columns on payments): risk rules, block lists and reviews (CONTRACT.md "Risk: rules, lists,
// reviews"). Frozen in time.
export async function up(db: Kysely<unknown>): Promise<void> {
  // What the risk check saw and decided, kept with each card payment: the backtest replays
  // rules over risk_facts; card_fingerprint and client_ip feed the velocity counts.
  await sql`alter table payments add column card_fingerprint text`.execute(db)
  await sql`alter table payments add column client_ip text`.execute(db)
  await sql`alter table payments add column risk jsonb`.execute(db)
  await sql`alter table payments add column risk_facts jsonb`.execute(db)
  // Velocity facts are index range counts over the last hour / day, never scans.
  await sql`create index payments_merchant_fingerprint_created_idx
    on payments (merchant_id, card_fingerprint, created_at)
    where card_fingerprint is not null`.execute(db)
  await sql`create index payments_merchant_ip_created_idx
    on payments (merchant_id, client_ip, created_at)
    where client_ip is not null`.execute(db)
  // (merchant_id, customer_id, created_at) is payments_merchant_customer_idx (0061).

  // Saved cards carry their token's fingerprint (modules/customers), filled from the vault.
  await sql`alter table customer_cards add column card_fingerprint text`.execute(db)
  await sql`update customer_cards c set card_fingerprint = v.fingerprint
    from vault_card_tokens v where v.id = c.card_token`.execute(db)

  await sql`
    create table risk_list_items (
      id text primary key,
      merchant_id text not null,
      list text not null check (list in ('card_fingerprint', 'email', 'ip', 'bin', 'customer_id')),
      value text not null,
      note text,
      created_at timestamptz not null,
      unique (merchant_id, list, value)
    )`.execute(db)
  await sql`create index risk_list_items_merchant_list_created_idx
    on risk_list_items (merchant_id, list, created_at desc, id desc)`.execute(db)

  await sql`
    create table risk_rules (
      id text primary key,
      merchant_id text not null,
      name text not null,
      action text not null check (action in ('block', 'review', 'require_3ds')),
      condition jsonb not null,
      enabled boolean not null default true,
      created_at timestamptz not null,
      updated_at timestamptz not null
    )`.execute(db)
  await sql`create index risk_rules_merchant_created_idx
    on risk_rules (merchant_id, created_at, id)`.execute(db)

  await sql`
    create table risk_reviews (
      id text primary key,
      merchant_id text not null,
      payment_id text not null unique,
      status text not null check (status in ('open', 'closed')),
      closed_reason text check (closed_reason in ('approved', 'rejected', 'expired')),
      reasons jsonb not null default '[]'::jsonb,
      created_at timestamptz not null,
      closed_at timestamptz
    )`.execute(db)
  // The expiry sweep: open reviews older than the authorization TTL.
  await sql`create index risk_reviews_open_created_idx on risk_reviews (created_at)
    where status = 'open'`.execute(db)
  await sql`create index risk_reviews_merchant_status_created_idx
    on risk_reviews (merchant_id, status, created_at desc, id desc)`.execute(db)
}
