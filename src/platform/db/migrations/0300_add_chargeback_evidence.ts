import { sql, type Kysely } from 'kysely'

// Owned by modules/disputes: dispute evidence (CONTRACT.md "Dispute evidence"). Chargebacks
// store their deadline, how they were closed, the evidence draft and submission, and when the
// deadline reminder went out. Existing rows get the default 7 days. Frozen in time.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table chargebacks drop constraint chargebacks_status_check`.execute(db)
  await sql`alter table chargebacks add constraint chargebacks_status_check
    check (status in ('received','under_review','accepted','reversed'))`.execute(db)
  await sql`alter table chargebacks
    add column evidence_due_by timestamptz,
    add column resolution text
      check (resolution in ('accepted','reversed','won','lost','expired')),
    add column evidence jsonb not null default '{}'::jsonb,
    add column evidence_file_id text,
    add column evidence_submitted_at timestamptz,
    add column reminder_sent_at timestamptz`.execute(db)
  await sql`update chargebacks set evidence_due_by = received_at + interval '7 days'`.execute(db)
  await sql`alter table chargebacks alter column evidence_due_by set not null`.execute(db)
  // The deadline reconcilers' scans: open chargebacks by deadline, across merchants.
  await sql`create index chargebacks_open_due_idx on chargebacks (evidence_due_by)
    where status = 'received'`.execute(db)
  // The dashboard's open chargebacks now include those under review (replaces 0233's index).
  await sql`create index if not exists chargebacks_merchant_unresolved_idx on chargebacks (merchant_id)
    where status in ('received','under_review')`.execute(db)
  await sql`drop index if exists chargebacks_merchant_open_idx`.execute(db)
  // The sandbox bank's decisions: submissions under review.
  await sql`create index chargebacks_under_review_idx on chargebacks (evidence_submitted_at)
    where status = 'under_review'`.execute(db)
}
