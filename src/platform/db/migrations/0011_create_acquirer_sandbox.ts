import { sql, type Kysely } from 'kysely'

// Owned by modules/acquirer: the sandbox bank's own books. Frozen in time.
// The bank keeps only bin and last4 of a card, never the number.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table acquirer_sandbox_operations (
      id text primary key,
      op text not null check (op in ('authorize','capture','void','refund')),
      payment_id text not null,
      refund_id text,
      merchant_id text not null,
      card_token text,
      bin text check (bin ~ '^[0-9]{6}$'),
      last4 text check (last4 ~ '^[0-9]{4}$'),
      amount bigint not null check (amount > 0),
      installment_count integer check (installment_count between 1 and 12),
      capture boolean,
      status text not null
        check (status in ('approved','declined','pending','completed','failed')),
      decline_code text,
      auth_code text,
      reference text,
      bank_refund_id text,
      refund_mode text not null default 'sync'
        check (refund_mode in ('sync','async_completes','async_fails')),
      response_lost boolean not null default false,
      created_at timestamptz not null,
      updated_at timestamptz not null,
      check ((op = 'refund') = (refund_id is not null))
    )`.execute(db)
  // The idempotency of the bank: one authorization, one capture and one void per payment,
  // one refund per refund id, whatever the caller retries.
  await sql`create unique index acquirer_sandbox_operations_authorize_uq
    on acquirer_sandbox_operations (payment_id) where op = 'authorize'`.execute(db)
  await sql`create unique index acquirer_sandbox_operations_capture_uq
    on acquirer_sandbox_operations (payment_id) where op = 'capture'`.execute(db)
  await sql`create unique index acquirer_sandbox_operations_void_uq
    on acquirer_sandbox_operations (payment_id) where op = 'void'`.execute(db)
  await sql`create unique index acquirer_sandbox_operations_refund_uq
    on acquirer_sandbox_operations (refund_id) where op = 'refund'`.execute(db)
  await sql`create index acquirer_sandbox_operations_payment_idx
    on acquirer_sandbox_operations (payment_id)`.execute(db)

  // The ACS's record of each 3-D Secure authentication, one per payment.
  await sql`
    create table acquirer_sandbox_3ds (
      correlation_id text primary key,
      payment_id text not null unique,
      merchant_id text not null,
      card_token text not null,
      kind text not null check (kind in ('frictionless','challenge')),
      challenge_passes boolean not null,
      result text check (result in ('Y','N')),
      amount bigint not null check (amount > 0),
      created_at timestamptz not null,
      completed_at timestamptz
    )`.execute(db)
}
