import { sql, type Kysely } from 'kysely'

// Owned by modules/merchants. Frozen in time.
// Dashboard sign-in lockout (issue 22 §4): one row per attempted email, whether or not an
// account has it, so an unknown email counts and locks exactly like a known one. The email is
// kept only as a keyed hash: attempted addresses (typos, a password typed into the email
// field) are not stored. Every process shares the rows, so the lock holds across processes.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table dashboard_login_throttles (
      email_key text primary key,
      failures jsonb not null default '[]'::jsonb,
      locked_until timestamptz,
      expires_at timestamptz not null
    )`.execute(db)
  // Rows past their window and lock are deleted a few at a time by later sign-ins.
  await sql`create index dashboard_login_throttles_expires_idx
    on dashboard_login_throttles (expires_at)`.execute(db)
}
