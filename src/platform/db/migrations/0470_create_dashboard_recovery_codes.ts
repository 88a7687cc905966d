import { sql, type Kysely } from 'kysely'

// Owned by modules/dashboard. Frozen in time.
// Two-factor recovery codes (issue 36, CONTRACT § "Dashboard sign-in everywhere"): ten per user,
// made at enrolment and on regeneration (which replaces the whole set), stored as SHA-256 of
// the user id and the code (80 random bits each, so a hash is no shortcut to the code), spent
// once (`used_at`). The session row keeps a freshly made set sealed under the master key until
// the page has shown it once.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table dashboard_recovery_codes (
      user_id text not null,
      code_hash text not null,
      created_at timestamptz not null,
      used_at timestamptz,
      primary key (user_id, code_hash)
    )`.execute(db)
  await sql`alter table dashboard_sessions add column recovery_codes_enc text`.execute(db)
}
