import { sql, type Kysely } from 'kysely'

// Owned by modules/disputes. Frozen in time.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table chargebacks (
      id text primary key,
      merchant_id text not null,
      payment_id text not null,
      amount bigint not null check (amount > 0),
      status text not null check (status in ('received','accepted','reversed')),
      reason_code text not null,
      bank_chargeback_id text not null,
      received_at timestamptz not null,
      resolved_at timestamptz,
      unique (merchant_id, bank_chargeback_id)
    )`.execute(db)
  await sql`create index chargebacks_payment_idx on chargebacks (merchant_id, payment_id, received_at)`.execute(
    db,
  )
}
