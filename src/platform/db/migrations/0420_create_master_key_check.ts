import { sql, type Kysely } from 'kysely'

// Owned by platform/master-key-check.ts. Frozen in time.
// One row: a known text sealed under the master key the database was first started with (and
// re-sealed under the new one by `kurus rotate-master-key`). A process whose KURUS_MASTER_KEY
// (or KURUS_MASTER_KEY_PREVIOUS) cannot open it holds another key than the one the stored
// cards and secrets are under, and `live` refuses to start rather than fail on every read.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table master_key_check (
      singleton boolean primary key default true check (singleton),
      sealed text not null,
      created_at timestamptz not null default now(),
      resealed_at timestamptz
    )`.execute(db)
}
