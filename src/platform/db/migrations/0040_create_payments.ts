import { sql, type Kysely } from 'kysely'

// Owned by modules/payments: checkout sessions and payments. Frozen in time.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table payment_sessions (
      id uuid primary key,
      merchant_id text not null,
      store_id text not null,
      transaction_id text not null,
      mode text not null check (mode in ('payment','card_update_only','qr')),
      amount bigint check (amount is null or amount > 0),
      currency text not null check (currency = 'TRY'),
      description text,
      return_url text not null,
      callback_url text,
      installment_enabled boolean not null,
      customer_id text,
      splits jsonb not null,
      metadata jsonb not null,
      status text not null check (status in ('active','completed','expired','cancelled')),
      fingerprint text not null,
      failed_attempts integer not null default 0,
      expires_at timestamptz not null,
      created_at timestamptz not null,
      completed_at timestamptz,
      unique (merchant_id, transaction_id)
    )`.execute(db)
  await sql`create index payment_sessions_expiry_idx on payment_sessions (expires_at)
    where status = 'active'`.execute(db)
  await sql`
    create table payments (
      id text primary key,
      merchant_id text not null,
      store_id text not null,
      session_id uuid,
      transaction_id text not null,
      method text not null check (method in ('card','qr')),
      status text not null check (status in
        ('pending','pending_3ds','authorized','captured','voided','failed','refunded')),
      amount bigint not null check (amount > 0),
      currency text not null check (currency = 'TRY'),
      commission bigint not null check (commission >= 0 and commission <= amount),
      installment_count integer not null check (installment_count between 1 and 12),
      card_token text,
      card_mask text,
      card_brand text,
      card_type text,
      bin text,
      three_d_secure boolean not null,
      capture_requested boolean not null,
      auth_code text,
      acquirer_reference text,
      decline_code text,
      correlation_id text,
      customer_id text,
      save_card boolean not null default false,
      callback_url text,
      shares jsonb not null,
      metadata jsonb not null,
      fingerprint text not null,
      void_reason text,
      outcome_unknown boolean not null default false,
      action_in_flight text check (action_in_flight in ('capture','void')),
      refund_reserved_minor bigint not null default 0 check (refund_reserved_minor >= 0),
      refund_completed_minor bigint not null default 0 check (refund_completed_minor >= 0),
      commission_refunded_minor bigint not null default 0 check (commission_refunded_minor >= 0),
      chargeback_open_minor bigint not null default 0 check (chargeback_open_minor >= 0),
      chargeback_total_minor bigint not null default 0 check (chargeback_total_minor >= 0),
      created_at timestamptz not null,
      authorized_at timestamptz,
      completed_at timestamptz,
      updated_at timestamptz not null,
      check (refund_reserved_minor + chargeback_open_minor <= amount)
    )`.execute(db)
  // The transactionId fence: at most one payment per merchant transaction that is not failed.
  await sql`create unique index payments_transaction_fence on payments (merchant_id, transaction_id)
    where status <> 'failed'`.execute(db)
  await sql`create index payments_merchant_created_idx on payments (merchant_id, created_at, id)`.execute(
    db,
  )
  await sql`create index payments_session_idx on payments (session_id)`.execute(db)
  await sql`create index payments_reconcile_idx on payments (status, updated_at)
    where status in ('pending','pending_3ds','authorized')`.execute(db)
}
