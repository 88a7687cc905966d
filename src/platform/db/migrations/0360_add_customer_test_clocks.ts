import { sql, type Kysely } from 'kysely'

// Sandbox test clocks reach customers (docs/decisions/0031-test-clocks.md, "Customers on a
// clock"): a customer created on a clock names it (owned by modules/customers), and a card
// charge for that customer carries it to payments.test_clock_id (migration 0321), so that its
// authorization expires only when the clock is advanced. Frozen in time.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table customers add column test_clock_id text`.execute(db)
  // An advance's scan: the clock's open authorizations by age. The real-time expiry's scan
  // (payments_open_authorizations_idx) adds "test_clock_id is null", which that index serves.
  await sql`create index payments_test_clock_open_idx on payments (test_clock_id, authorized_at)
    where test_clock_id is not null and status in ('authorized','partially_captured')`.execute(db)
}
