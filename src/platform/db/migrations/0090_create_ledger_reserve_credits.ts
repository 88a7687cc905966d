import { sql, type Kysely } from 'kysely'

// Owned by modules/ledger (added with payouts). Frozen in time: never edit, add a new one.
// The settlement work list: one row per owner per entry that credited the owner's reserve
// (a capture's net share, a chargeback reversal handing reserve money back). The settlement
// reconciler visits the unsettled rows once the owner's settlement delay has passed and
// records here what it moved, so no scan over the whole ledger history is ever needed.
// Unlike the three ledger tables this one is mutable: settled_* are written once.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table ledger_reserve_credits (
      entry_id text not null references ledger_entries(id),
      merchant_id text not null,
      owner_type text not null check (owner_type in ('merchant','submerchant')),
      owner_id text not null,
      -- the crediting entry's reference (capture:<paymentId>, chargeback_reversal:<id>)
      source_reference text not null,
      amount bigint not null check (amount > 0),
      credited_at timestamptz not null,
      settled_at timestamptz,
      settled_minor bigint check (settled_minor >= 0),
      settlement_entry_id text references ledger_entries(id),
      primary key (entry_id, owner_type, owner_id),
      check ((settled_at is null) = (settled_minor is null)),
      check (settlement_entry_id is null or settled_minor > 0)
    )`.execute(db)
  // The reconciler's scan: oldest unsettled credits first.
  await sql`
    create index ledger_reserve_credits_due_idx
      on ledger_reserve_credits (credited_at, entry_id, owner_type, owner_id)
      where settled_at is null`.execute(db)
  // An owner's credits still inside the delay (kept back in the reserve when settling).
  await sql`
    create index ledger_reserve_credits_owner_idx
      on ledger_reserve_credits (merchant_id, owner_type, owner_id, credited_at)
      where settled_at is null`.execute(db)
  // Entries posted before this table existed.
  await sql`
    insert into ledger_reserve_credits
      (entry_id, merchant_id, owner_type, owner_id, source_reference, amount, credited_at)
    select e.id, e.merchant_id, l.owner_type, l.owner_id, e.reference, sum(l.amount), e.created_at
      from ledger_entries e
      join ledger_legs l on l.entry_id = e.id
     where e.kind in ('capture', 'chargeback_reversal')
       and l.account_type = 'merchant_reserve'
       and l.direction = 'CREDIT'
     group by e.id, e.merchant_id, l.owner_type, l.owner_id, e.reference, e.created_at`.execute(db)
}
