import { sql, type Kysely } from 'kysely'

// Owned by modules/transactions (the payments table is payments', the read paths are ours):
// indexes for GET /v1/transactions and exports, which page by keyset on
// (created_at desc, id desc) within one merchant. The unfiltered list and the from/to range
// use payments_merchant_created_idx (0040) scanned backwards. Each filter that narrows the
// rows a lot gets an index whose leading equality columns put the matching rows in keyset
// order, so a page reads `limit` index entries instead of the merchant's whole history.
// Amount ranges are a filter on those scans when they match many rows; a narrow range (or
// one that matches nothing, which would otherwise walk the merchant's whole history) is
// answered from (merchant_id, amount) and the few rows sorted.
// `if not exists`: on a large live table an operator creates these beforehand with
// CREATE INDEX CONCURRENTLY under the same names (docs/transactions.md), and this is a no-op.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create index if not exists payments_merchant_status_created_idx
    on payments (merchant_id, status, created_at desc, id desc)`.execute(db)
  await sql`create index if not exists payments_merchant_store_created_idx
    on payments (merchant_id, store_id, created_at desc, id desc)`.execute(db)
  await sql`create index if not exists payments_merchant_customer_created_idx
    on payments (merchant_id, customer_id, created_at desc, id desc)
    where customer_id is not null`.execute(db)
  await sql`create index if not exists payments_merchant_amount_idx
    on payments (merchant_id, amount)`.execute(db)
  // QR payments are the rare method: a small partial index finds them without walking every
  // card payment. `method=card` is nearly every row and is served by the main index.
  await sql`create index if not exists payments_merchant_qr_created_idx
    on payments (merchant_id, created_at desc, id desc)
    where method = 'qr'`.execute(db)
}
