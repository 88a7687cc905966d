import { sql, type Kysely } from 'kysely'

// Owned by modules/payouts: settlement to the merchant's own bank account (issue 40,
// decision 0040). Frozen in time.
export async function up(db: Kysely<unknown>): Promise<void> {
  // One bank account per merchant. The IBAN is the payout destination (never echoed; the API
  // shows its last four). `payouts_hold_until`: in live, no settlement payout before it (24 h
  // after a change, CONTRACT.md).
  await sql`create table merchant_bank_accounts (
    merchant_id text primary key references merchants (id),
    iban text not null check (iban ~ '^TR[0-9]{24}$'),
    holder_name text not null check (length(holder_name) between 1 and 140),
    payouts_hold_until timestamptz,
    created_at timestamptz not null,
    updated_at timestamptz not null
  )`.execute(db)
  // The payout schedule; no row = the default (daily, minimum 0).
  await sql`create table payout_schedules (
    merchant_id text primary key references merchants (id),
    interval text not null check (interval in ('daily','weekly','monthly','manual')),
    anchor text,
    minimum_minor bigint not null default 0 check (minimum_minor >= 0),
    updated_at timestamptz not null
  )`.execute(db)
  // One row per merchant per scheduled run (Istanbul date): the claim two workers meet on, so
  // a run makes at most one payout. `outcome`: paid (a payout was made), below_minimum,
  // nothing_available (zero or negative: netted from later runs).
  await sql`create table payout_runs (
    merchant_id text not null references merchants (id),
    run_date text not null check (run_date ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}$'),
    outcome text not null check (outcome in ('paid','below_minimum','nothing_available')),
    payout_id uuid,
    available_minor bigint not null,
    created_at timestamptz not null,
    primary key (merchant_id, run_date)
  )`.execute(db)
  // Every payout says what it is: a submerchant payout, a draft's row, or a settlement of the
  // merchant's own balance. Existing rows are one of the first two.
  await sql`alter table payouts
    add column kind text not null default 'submerchant'
      check (kind in ('submerchant','draft','settlement')),
    add column run_date text check (run_date ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}$'),
    add column arrival_date text check (arrival_date ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}$')`.execute(db)
  await sql`update payouts set kind = 'draft' where draft_id is not null`.execute(db)
  // One settlement payout per merchant per scheduled run, whatever the number of workers.
  await sql`create unique index payouts_settlement_run_idx on payouts (merchant_id, run_date)
    where kind = 'settlement'`.execute(db)
  // The previous settlement payout of a merchant (a payout's window starts after it).
  await sql`create index payouts_settlement_created_idx on payouts (merchant_id, created_at)
    where kind = 'settlement'`.execute(db)
}
