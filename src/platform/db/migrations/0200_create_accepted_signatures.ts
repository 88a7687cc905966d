import { sql, type Kysely } from 'kysely'

// Owned by modules/gateway. Frozen in time.
export async function up(db: Kysely<unknown>): Promise<void> {
  // One row per accepted signature of a state-changing signed request, kept while its
  // timestamp is inside the ±5 minute window (plus a margin): a byte-identical replay finds
  // it and is refused, unless it carries the Idempotency-Key the original carried. Used when
  // REDIS_URL is not set (and while Redis does not answer); rows past expires_at are swept.
  await sql`
    create table accepted_signatures (
      signature bytea primary key,
      idempotency_key text,
      expires_at timestamptz not null
    )`.execute(db)
  await sql`create index accepted_signatures_expires_idx on accepted_signatures (expires_at)`.execute(
    db,
  )
}
