import { sql, type Kysely } from 'kysely'

// Bank virtual POS accounts, routing and what each POS did for a payment (decision 0039).
// merchant_id null: a platform-owned contract offered to every merchant. Credentials are an
// AES-GCM envelope under the master key bound to the row id; never stored in clear.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create table acquirer_pos_accounts (
    id text primary key,
    merchant_id text,
    provider text not null,
    bank text not null,
    name text not null,
    environment text not null check (environment in ('test','production')),
    credentials_enc text not null,
    endpoints jsonb,
    installment_programs jsonb not null default '[]',
    enabled boolean not null default true,
    deleted_at timestamptz,
    created_at timestamptz not null,
    updated_at timestamptz not null
  )`.execute(db)
  await sql`create index acquirer_pos_accounts_merchant_idx
    on acquirer_pos_accounts (merchant_id, created_at)`.execute(db)
  await sql`create table acquirer_routing (
    merchant_id text primary key,
    rules jsonb not null,
    default_order jsonb not null,
    updated_at timestamptz not null
  )`.execute(db)
  // One row per payment that went to a bank POS: the POS that holds it and every attempt.
  await sql`create table acquirer_pos_payments (
    payment_id text primary key,
    merchant_id text not null,
    pos_account_id text,
    provider text,
    bank text,
    state text not null check (state in ('sending','unknown','approved','declined','failed')),
    amount bigint not null,
    pre_auth boolean not null,
    installment_count integer not null,
    auth_code text,
    host_reference text,
    decline_code text,
    captured bigint not null default 0,
    voided boolean not null default false,
    attempts jsonb not null default '[]',
    created_at timestamptz not null,
    updated_at timestamptz not null
  )`.execute(db)
  await sql`create table acquirer_pos_refunds (
    refund_id text primary key,
    payment_id text not null,
    kind text not null check (kind in ('void','credit')),
    amount bigint not null,
    state text not null check (state in ('sending','completed','failed','unknown')),
    bank_code text,
    created_at timestamptz not null,
    updated_at timestamptz not null
  )`.execute(db)
  await sql`create index acquirer_pos_refunds_payment_idx on acquirer_pos_refunds (payment_id)`.execute(
    db,
  )
}
