import { sql, type Kysely } from 'kysely'

// Owned by modules/payouts: payout drafts, their per-row report, and payouts. Frozen in time.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table payout_drafts (
      id text primary key,
      merchant_id text not null references merchants(id),
      store_id text not null references stores(id),
      status text not null check (status in ('draft','approved','cancelled')),
      row_count integer not null check (row_count between 1 and 1000),
      valid_count integer not null check (valid_count >= 0),
      invalid_count integer not null check (invalid_count >= 0),
      valid_total_minor bigint not null check (valid_total_minor >= 0),
      created_at timestamptz not null,
      approved_at timestamptz,
      cancelled_at timestamptz,
      updated_at timestamptz not null,
      check (valid_count + invalid_count = row_count),
      check ((status = 'approved') = (approved_at is not null)),
      check ((status = 'cancelled') = (cancelled_at is not null))
    )`.execute(db)
  await sql`create index payout_drafts_merchant_idx on payout_drafts (merchant_id, created_at)`.execute(
    db,
  )
  // dest is kept only for valid rows: an invalid one may be anything (even a card number
  // typed into the wrong column), so only its mask is stored.
  await sql`
    create table payout_draft_rows (
      draft_id text not null references payout_drafts(id),
      merchant_id text not null,
      idx integer not null check (idx between 0 and 999),
      valid boolean not null,
      errors jsonb not null,
      rail text check (rail in ('fast','eft','card')),
      holder_name text,
      amount_minor bigint,
      dest text,
      dest_masked text,
      primary key (draft_id, idx),
      check (not valid or (rail is not null and holder_name is not null
        and amount_minor > 0 and dest is not null)),
      check (valid or dest is null)
    )`.execute(db)
  await sql`
    create table payouts (
      id uuid primary key,
      merchant_id text not null references merchants(id),
      store_id text,
      draft_id text references payout_drafts(id),
      draft_row_idx integer,
      owner_type text not null check (owner_type in ('merchant','submerchant')),
      owner_id text not null,
      submerchant_id text,
      rail text not null check (rail in ('fast','eft','card')),
      dest text not null,
      dest_masked text not null,
      holder_name text not null,
      amount_minor bigint not null check (amount_minor > 0),
      currency text not null check (currency = 'TRY'),
      status text not null check (status in ('pending','processing','paid','failed')),
      client_reference text,
      failure_code text,
      rail_reference text,
      created_at timestamptz not null,
      processing_at timestamptz,
      paid_at timestamptz,
      failed_at timestamptz,
      updated_at timestamptz not null,
      check ((owner_type = 'submerchant') = (submerchant_id is not null)),
      check (owner_type <> 'submerchant' or owner_id = submerchant_id),
      check (owner_type <> 'merchant' or owner_id = merchant_id),
      check ((draft_id is null) = (draft_row_idx is null)),
      check ((status = 'paid') = (paid_at is not null)),
      check ((status = 'failed') = (failed_at is not null))
    )`.execute(db)
  // One payout per draft row: a second approval can never fan a row out twice.
  await sql`create unique index payouts_draft_row_idx on payouts (draft_id, draft_row_idx)
    where draft_id is not null`.execute(db)
  // Lists newest first, per merchant and per submerchant (keyset on created_at, id).
  await sql`create index payouts_merchant_created_idx on payouts (merchant_id, created_at, id)`.execute(
    db,
  )
  await sql`create index payouts_submerchant_created_idx
    on payouts (merchant_id, submerchant_id, created_at, id)
    where submerchant_id is not null`.execute(db)
  // The daily limit sums one owner's payouts of the day.
  await sql`create index payouts_owner_day_idx
    on payouts (merchant_id, owner_type, owner_id, created_at)
    include (amount_minor, status)`.execute(db)
  // The reconciler's scan of payouts a crash left in flight.
  await sql`create index payouts_in_flight_idx on payouts (updated_at)
    where status in ('pending','processing')`.execute(db)
}
