import { sql, type Kysely } from 'kysely'

// Owned by modules/risk. Frozen in time.
// Who closed a review (decision 0036): `review` (approve/reject), `capture` or `void` (the
// payment was captured or voided directly, and the review closed with it), `expiry`.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table risk_reviews add column closed_by text
    check (closed_by in ('review', 'capture', 'void', 'expiry'))`.execute(db)
}
