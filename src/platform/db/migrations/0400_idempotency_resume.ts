import { sql, type Kysely } from 'kysely'

// Exactly once under faults (decision 0035). An idempotency record names what its request's
// claim phase made (`resource_id`: a payment, a capture, a void), so a retry after a crash
// resumes that object instead of making another; and which API process holds the claim
// (`owner`), so a retry can tell a claim whose process died (its lease in `process_leases`
// lapsed) from one still running, and take it over within seconds. Frozen in time.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table idempotency_keys add column resource_id text,
            add column owner text`.execute(db)
  await sql`create table process_leases (
    owner text primary key,
    expires_at timestamptz not null
  )`.execute(db)
}
