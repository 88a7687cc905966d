import { sql, type Kysely } from 'kysely'

// Owned by modules/files: uploaded files (dispute evidence) and files the platform renders
// (the evidence PDF), in the merchant's scope. The bytes live in the row: at most 5 MiB each,
// written once, read rarely (docs/decisions/0027-file-uploads.md). Frozen in time.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table files (
      id text primary key,
      merchant_id text not null,
      purpose text not null check (purpose in ('dispute_evidence','dispute_evidence_submission')),
      type text not null check (type in ('pdf','png','jpeg')),
      size integer not null check (size > 0 and size <= 5242880),
      sha256 text not null,
      content bytea not null,
      created_at timestamptz not null
    )`.execute(db)
  await sql`create index files_merchant_idx on files (merchant_id, created_at desc)`.execute(db)
}
