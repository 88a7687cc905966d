import { sql, type Kysely } from 'kysely'

// Owned by modules/transactions: fair export building and the per-merchant export cap (issue 22
// §4). Frozen in time.
export async function up(db: Kysely<unknown>): Promise<void> {
  // Build jobs no longer build the export they were enqueued for: each takes the fairest
  // queued export of any merchant. The job (named by the export id it was enqueued for) that
  // claimed an export owns its attempts, so pg-boss's retry of that job resumes it.
  await sql`alter table transaction_exports add column claimed_by text`.execute(db)
  await sql`create index transaction_exports_claimed_by_idx on transaction_exports (claimed_by)
    where status = 'processing'`.execute(db)
  // The cap (unfinished exports of one merchant) and the claim's "fewest running" count.
  await sql`create index transaction_exports_merchant_unfinished_idx
    on transaction_exports (merchant_id, status) where status in ('queued','processing')`.execute(
    db,
  )
  // The claim's "least recently served": the merchant's latest build start, one index probe.
  await sql`create index transaction_exports_merchant_started_idx
    on transaction_exports (merchant_id, started_at) where started_at is not null`.execute(db)
}
