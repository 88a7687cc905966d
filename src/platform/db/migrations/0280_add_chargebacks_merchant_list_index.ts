import { sql, type Kysely } from 'kysely'

// The merchant's chargebacks, newest first (the dashboard's Chargebacks list, keyset pages).
// Owned by modules/disputes. Frozen in time. `if not exists`: an operator may build it
// beforehand CONCURRENTLY.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create index if not exists chargebacks_merchant_received_idx
    on chargebacks (merchant_id, received_at desc, id desc)`.execute(db)
}
