import { sql, type Kysely } from 'kysely'

// Owned by modules/payouts. Frozen in time.
// A payout keeps the Idempotency-Key it was created with, as a refund does: if the process
// dies after the payout commits but before the gateway records the response, the retry
// finds this payout instead of paying the submerchant a second time.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table payouts add column idempotency_key text`.execute(db)
  await sql`create unique index payouts_idempotency on payouts (merchant_id, idempotency_key)
    where idempotency_key is not null`.execute(db)
}
