import { sql, type Kysely } from 'kysely'

// Owned by modules/merchants (dashboard_users). Frozen in time.
// The merchant dashboard's team: a role per user (the user made with the merchant is its
// owner) and TOTP two-factor. The TOTP secret is sealed under the master key (AES-GCM, AAD =
// user id) because checking a code needs the secret itself; `totp_last_counter` is the time
// step of the last code accepted, so a code cannot be replayed (RFC 6238 §5.2).
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table dashboard_users
    add column role text not null default 'owner'
      check (role in ('owner', 'admin', 'developer', 'finance', 'support', 'viewer')),
    add column totp_secret_enc text,
    add column totp_enabled_at timestamptz,
    add column totp_last_counter integer`.execute(db)
  await sql`create index dashboard_users_merchant_idx on dashboard_users (merchant_id, created_at)`.execute(
    db,
  )
}
