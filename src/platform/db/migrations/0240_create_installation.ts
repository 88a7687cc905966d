import { sql, type Kysely } from 'kysely'

// Owned by platform/db (installation.ts). Frozen in time.
// One row: the KURUS_ENV that first started on this database. A live process refuses a
// database the demo has used (its demo merchant has a password printed on the banner and
// its keys in the demo's data directory), and a demo process refuses a live database (the
// demo seeds a merchant and prints keys). The data-directory check in config.ts covers
// PGlite's files; this covers a PostgreSQL database shared by both by mistake.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table installation (
      singleton boolean primary key default true check (singleton),
      env text not null check (env in ('demo', 'live')),
      created_at timestamptz not null default now()
    )`.execute(db)
}
