import { sql, type Kysely } from 'kysely'

// Owned by modules/transactions: asynchronous statement exports and their files. Frozen in time.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table transaction_exports (
      id text primary key,
      merchant_id text not null,
      format text not null check (format in ('csv','pdf')),
      filters jsonb not null,
      status text not null check (status in ('queued','processing','ready','failed','expired')),
      -- The export lists payments created before this instant, so rows that arrive while it
      -- is being built do not shift its pages and a retry produces the same file.
      snapshot_at timestamptz not null,
      row_count integer not null default 0 check (row_count >= 0),
      byte_size bigint not null default 0 check (byte_size >= 0),
      chunk_count integer not null default 0 check (chunk_count >= 0),
      -- Which build attempt owns the chunks; a retry starts a new attempt.
      attempt integer not null default 0 check (attempt >= 0),
      error text,
      -- The request's Idempotency-Key: the gateway re-runs a 202 on retry (the work is still
      -- in flight), so the retry must find this export instead of starting another one.
      idempotency_key text,
      created_at timestamptz not null,
      started_at timestamptz,
      completed_at timestamptz,
      expires_at timestamptz,
      updated_at timestamptz not null,
      check (status <> 'ready' or (completed_at is not null and expires_at is not null))
    )`.execute(db)
  await sql`create index transaction_exports_merchant_idx
    on transaction_exports (merchant_id, created_at)`.execute(db)
  await sql`create unique index transaction_exports_idempotency
    on transaction_exports (merchant_id, idempotency_key)
    where idempotency_key is not null`.execute(db)
  await sql`create index transaction_exports_expiry_idx on transaction_exports (expires_at)
    where status = 'ready'`.execute(db)
  await sql`create index transaction_exports_unfinished_idx on transaction_exports (updated_at)
    where status in ('queued','processing')`.execute(db)
  // The file, in order, as chunks of at most 512 KiB: written while the export streams out of
  // the renderer and read back one chunk at a time by the download, so neither side ever
  // holds a whole 100,000-row file in memory (a single bytea value would have to be).
  await sql`
    create table transaction_export_chunks (
      export_id text not null references transaction_exports(id) on delete cascade,
      attempt integer not null,
      seq integer not null check (seq >= 0),
      data bytea not null,
      primary key (export_id, attempt, seq)
    )`.execute(db)
}
