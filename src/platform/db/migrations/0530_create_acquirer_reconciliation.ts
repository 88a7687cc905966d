import { sql, type Kysely } from 'kysely'

// Owned by modules/acquirer. Frozen in time.
// Daily reconciliation per bank POS (issue 39): one run per POS and Istanbul bank day, and the
// differences it found between the bank's transactions and ours, each once (the unique key
// makes a re-run add only what is new, and raise `reconciliation.mismatch` only for that).
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create table acquirer_reconciliation_runs (
    pos_account_id text not null,
    bank_date text not null,
    method text not null check (method in ('list','inquiry')),
    checked_orders integer not null,
    mismatches integer not null,
    ran_at timestamptz not null,
    primary key (pos_account_id, bank_date)
  )`.execute(db)
  await sql`create table acquirer_reconciliation_items (
    id text primary key,
    pos_account_id text not null,
    bank_date text not null,
    order_id text not null,
    payment_id text,
    merchant_id text,
    kind text not null check (kind in ('missing_at_bank','missing_at_us','amount_differs','status_differs')),
    field text not null,
    ours jsonb,
    bank jsonb,
    created_at timestamptz not null,
    unique (pos_account_id, bank_date, order_id, kind, field)
  )`.execute(db)
}
