import { sql, type Kysely } from 'kysely'

// A take may hand out several tokens at once (a process leases them and spends them without a
// round trip, docs/performance.md). How many the last take granted is kept on the row so that
// the one statement that refills and spends can return it: PostgreSQL 15's RETURNING sees
// only the new row, and the grant depends on the old one. Frozen in time.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table rate_limit_buckets add column granted integer not null default 0`.execute(
    db,
  )
}
