import { sql, type Kysely } from 'kysely'

// Sandbox test clocks reach payments and chargebacks (docs/decisions/0031-test-clocks.md):
// a renewal payment of a subscription on a clock names the clock (owned by modules/payments),
// and so does a chargeback of such a payment (modules/disputes), whose deadline then passes
// only when the clock does. Frozen in time.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table payments add column test_clock_id text`.execute(db)
  await sql`alter table chargebacks add column test_clock_id text`.execute(db)
  // An advance's scan: the clock's open chargebacks by deadline.
  await sql`create index chargebacks_test_clock_due_idx on chargebacks
    (test_clock_id, evidence_due_by)
    where test_clock_id is not null and status = 'received'`.execute(db)
}
