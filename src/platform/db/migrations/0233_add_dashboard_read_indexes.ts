import { sql, type Kysely } from 'kysely'

// Read paths of the merchant dashboard, on tables of modules/payments and modules/disputes.
// Frozen in time. `if not exists`: an operator may build them beforehand CONCURRENTLY.
export async function up(db: Kysely<unknown>): Promise<void> {
  // The search box's "card's last four digits": an expression index in keyset order, so the
  // search reads only the matching rows of one merchant.
  await sql`create index if not exists payments_merchant_last4_created_idx
    on payments (merchant_id, right(card_mask, 4), created_at desc, id desc)
    where card_mask is not null`.execute(db)
  // The overview's refunds of the last 30 days and open chargebacks.
  await sql`create index if not exists refunds_merchant_completed_idx
    on refunds (merchant_id, completed_at) where status = 'completed'`.execute(db)
  await sql`create index if not exists chargebacks_merchant_open_idx
    on chargebacks (merchant_id) where status = 'received'`.execute(db)
}
