import { sql, type Kysely } from 'kysely'

// Owned by modules/dashboard. Frozen in time.
// Wrong TOTP codes counted per user, not per session (decision 0036): 5 within 15 minutes lock
// that user's second factor for 15 minutes, whatever the session or the door (web, API).
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table dashboard_second_factor_throttles (
      user_id text primary key,
      failures jsonb not null default '[]'::jsonb,
      locked_until timestamptz
    )`.execute(db)
}
