import { sql, type Kysely } from 'kysely'

// Owned by modules/dashboard. Frozen in time.
// The dashboard API's bearer tokens become server-side sessions in the same table as the web's
// (decision 0036): `kind` tells them apart. A token is then ended by the same things that end a
// web session (30 idle minutes, sign-out, removal, a new password), and its two-factor step is
// a session in stage `second_factor` like the web's.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table dashboard_sessions
    add column kind text not null default 'web' check (kind in ('web', 'api'))`.execute(db)
}
