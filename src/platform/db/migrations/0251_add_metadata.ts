import { sql, type Kysely } from 'kysely'

// Owned by modules/payments, subscriptions, invoices and payouts (one column each):
// merchant metadata on every resource CONTRACT.md names. Frozen in time.
// Payments and sessions have had `metadata` since 0040.
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const table of ['refunds', 'subscriptions', 'invoices', 'payouts']) {
    await sql`alter table ${sql.table(table)}
      add column metadata jsonb not null default '{}'::jsonb`.execute(db)
  }
  // GET /v1/transactions?metadata.<key>=<value> is `metadata @> {"key":"value"}`: a GIN index
  // with jsonb_path_ops (hashes of key paths with their values; smaller and faster for @>
  // than the default jsonb_ops, which also serves key-existence operators we never use).
  // `if not exists`: an operator creates it beforehand with CREATE INDEX CONCURRENTLY on a
  // large live table (docs/payments.md), and this is then a no-op.
  await sql`create index if not exists payments_metadata_idx
    on payments using gin (metadata jsonb_path_ops)`.execute(db)
}
