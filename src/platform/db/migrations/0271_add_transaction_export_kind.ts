import { sql, type Kysely } from 'kysely'

// Owned by modules/transactions: finance reports (issue 27) are built by the statement
// exports' machinery (queue cap, fair claim, chunks, expiry), so they are rows of the same
// table with a kind of their own. Frozen in time.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table transaction_exports add column kind text not null default 'statement'
    check (kind in ('statement', 'balance_summary', 'payout_reconciliation'))`.execute(db)
  // The dashboard's "recent reports": a merchant's reports newest first.
  await sql`create index transaction_exports_merchant_reports_idx
    on transaction_exports (merchant_id, created_at desc, id desc)
    where kind <> 'statement'`.execute(db)
}
