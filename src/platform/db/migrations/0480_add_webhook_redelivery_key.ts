import { sql, type Kysely } from 'kysely'

// Owned by modules/webhooks. Frozen in time.
// The Idempotency-Key of a delivery's last redelivery (issue 35, decision 0035): the dashboard
// API keeps no idempotency records, so a retry of `redeliver` with the same key finds it here,
// in the row its first attempt rescheduled, and sends nothing more.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table webhook_deliveries add column redelivery_key text`.execute(db)
}
