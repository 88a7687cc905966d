import { sql, type Kysely } from 'kysely'

// Refused requests reach the merchant's request log (docs/decisions/0038): a 401 for a usable
// key of the merchant's (a bad signature, a skewed clock, a missing header) is kept with why it
// was refused, in words that never hold a secret, a body or its hash. Frozen in time.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table request_logs add column reason text`.execute(db)
}
