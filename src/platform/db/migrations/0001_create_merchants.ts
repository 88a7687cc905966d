import { sql, type Kysely } from 'kysely'

// Owned by modules/merchants. Frozen in time: never edit, add a new migration instead.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table merchants (
      id text primary key,
      name text not null,
      kyc_status text not null default 'none'
        check (kyc_status in ('none','pending','approved','rejected','suspended','expired')),
      kyc_decided_at timestamptz,
      kyc_subject_id text not null,
      kyc_session_id uuid,
      pricing jsonb not null,
      settlement_delay_seconds integer not null check (settlement_delay_seconds >= 0),
      created_at timestamptz not null
    )`.execute(db)
  await sql`
    create table stores (
      id text primary key,
      merchant_id text not null references merchants(id),
      name text not null,
      webhook_url text,
      created_at timestamptz not null
    )`.execute(db)
  await sql`create index stores_merchant_idx on stores (merchant_id)`.execute(db)
  await sql`
    create table submerchants (
      id text primary key,
      merchant_id text not null references merchants(id),
      name text not null,
      iban text not null,
      holder_name text not null,
      payout_min_minor bigint not null,
      payout_max_minor bigint not null,
      payout_daily_max_minor bigint not null,
      settlement_delay_seconds integer not null check (settlement_delay_seconds >= 0),
      created_at timestamptz not null
    )`.execute(db)
  await sql`create index submerchants_merchant_idx on submerchants (merchant_id)`.execute(db)
  await sql`
    create table api_keys (
      id text primary key,
      merchant_id text not null references merchants(id),
      store_id text references stores(id),
      submerchant_id text references submerchants(id),
      subject_scope text not null check (subject_scope in ('merchant','submerchant')),
      env text not null check (env in ('demo','live')),
      public_key text not null unique,
      secret_enc text not null,
      status text not null check (status in ('active','revoked')),
      expires_at timestamptz,
      rolled_to text,
      created_at timestamptz not null,
      revoked_at timestamptz,
      check ((subject_scope = 'merchant') = (submerchant_id is null))
    )`.execute(db)
  await sql`create index api_keys_merchant_idx on api_keys (merchant_id)`.execute(db)
  await sql`
    create table dashboard_users (
      id text primary key,
      merchant_id text not null references merchants(id),
      email text not null unique,
      password_hash text not null,
      created_at timestamptz not null
    )`.execute(db)
}
