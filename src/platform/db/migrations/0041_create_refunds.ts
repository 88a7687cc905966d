import { sql, type Kysely } from 'kysely'

// Owned by modules/payments: refund records. Frozen in time.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table refunds (
      id text primary key,
      merchant_id text not null,
      payment_id text not null references payments(id),
      amount bigint not null check (amount > 0),
      commission_refund bigint check (commission_refund >= 0),
      status text not null check (status in ('pending','completed','failed')),
      reason text check (char_length(reason) <= 500),
      idempotency_key text,
      bank_refund_id text,
      created_at timestamptz not null,
      completed_at timestamptz,
      updated_at timestamptz not null
    )`.execute(db)
  // A retry with the same Idempotency-Key finds its refund instead of making a second one.
  await sql`create unique index refunds_idempotency on refunds (payment_id, idempotency_key)
    where idempotency_key is not null`.execute(db)
  await sql`create index refunds_payment_idx on refunds (merchant_id, payment_id, created_at)`.execute(
    db,
  )
  await sql`create index refunds_pending_idx on refunds (updated_at) where status = 'pending'`.execute(
    db,
  )
}
