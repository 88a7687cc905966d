import { sql, type Kysely } from 'kysely'

// Owned by modules/files. Frozen in time.
// The name the uploader's file had (issue 41): staff see "kargo-teslim.png", not `file_…`.
// Only shown to the merchant's own staff; the type is still read from the bytes, never from
// this name. Files stored before have none.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table files add column name text`.execute(db)
}
