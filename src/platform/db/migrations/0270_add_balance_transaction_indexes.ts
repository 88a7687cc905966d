import { sql, type Kysely } from 'kysely'

// Owned by modules/ledger: the read paths of balance transactions and finance reports
// (issue 27, docs/reports.md). Frozen in time. `if not exists`: an operator may build them
// beforehand CONCURRENTLY on a large ledger.
export async function up(db: Kysely<unknown>): Promise<void> {
  // GET /v1/balance-transactions and the balance summary: one owner's reserve and available
  // legs in (created_at, entry_id) order, so a page is an index range read grouped by entry
  // and stopped at the limit, and a period's sum is one index-only range scan.
  await sql`create index if not exists ledger_legs_owner_movements_idx
    on ledger_legs (merchant_id, owner_type, owner_id, created_at, entry_id)
    include (account_type, direction, amount)
    where account_type in ('merchant_reserve','merchant_available')`.execute(db)
  // Payout reconciliation: one owner's available legs in posting order (the running balance
  // that payouts draw from, first in, first out).
  await sql`create index if not exists ledger_legs_owner_available_idx
    on ledger_legs (merchant_id, owner_type, owner_id, id)
    include (entry_id, direction, amount)
    where account_type = 'merchant_available'`.execute(db)
  // A settlement entry back to the reserve credit (capture, chargeback reversal) it released.
  await sql`create index if not exists ledger_reserve_credits_settlement_idx
    on ledger_reserve_credits (settlement_entry_id)
    where settlement_entry_id is not null`.execute(db)
  // The status of a page's credits is a primary-key lookup (entry_id, owner_type, owner_id).
}
