import { sql, type Kysely } from 'kysely'

// Owned by modules/dashboard. Frozen in time.
// Single-use links of a dashboard account (issues 36 and 41, CONTRACT § "Dashboard sign-in
// everywhere"): a password reset (30 minutes) and an email change confirmed from the new
// address (`new_email`). Only the SHA-256 of the link's 32 random bytes is kept; `used_at`
// spends a link once (a conditional update), and a newer link of the same purpose voids the
// older ones.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table dashboard_account_links (
      token_hash text primary key,
      user_id text not null,
      merchant_id text not null,
      purpose text not null check (purpose in ('password_reset', 'email_change')),
      new_email text,
      created_at timestamptz not null,
      expires_at timestamptz not null,
      used_at timestamptz
    )`.execute(db)
  await sql`
    create index dashboard_account_links_user
      on dashboard_account_links (user_id, purpose, created_at)`.execute(db)
}
