import { sql, type Kysely } from 'kysely'

// Owned by modules/dashboard. Frozen in time.
// Server-side sessions of the dashboard's web pages: the cookie holds a random id, the table
// its SHA-256 (a copy of the table opens no session). `stage`: `second_factor` (password
// right, TOTP code still due), `enrol` (must set up TOTP before anything else), `active`.
// Idle timeout from last_seen_at, absolute timeout at expires_at; sign-out sets ended_at.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table dashboard_sessions (
      id_hash text primary key,
      user_id text not null,
      merchant_id text not null references merchants(id),
      stage text not null check (stage in ('second_factor', 'enrol', 'active')),
      totp_pending_enc text,
      second_factor_failures integer not null default 0,
      created_at timestamptz not null,
      last_seen_at timestamptz not null,
      expires_at timestamptz not null,
      ended_at timestamptz
    )`.execute(db)
  await sql`create index dashboard_sessions_user_idx on dashboard_sessions (user_id)
    where ended_at is null`.execute(db)
  await sql`create index dashboard_sessions_expiry_idx on dashboard_sessions (expires_at)`.execute(
    db,
  )

  // Invitations to the team: a single-use link (its token hashed here) valid for 72 hours.
  await sql`
    create table dashboard_invitations (
      id text primary key,
      merchant_id text not null references merchants(id),
      email text not null,
      role text not null
        check (role in ('owner', 'admin', 'developer', 'finance', 'support', 'viewer')),
      token_hash text not null unique,
      invited_by text not null,
      created_at timestamptz not null,
      expires_at timestamptz not null,
      accepted_at timestamptz,
      revoked_at timestamptz
    )`.execute(db)
  await sql`create index dashboard_invitations_merchant_idx
    on dashboard_invitations (merchant_id, created_at desc)`.execute(db)

  // Per-merchant dashboard settings: two-factor required for owners and admins.
  await sql`
    create table dashboard_settings (
      merchant_id text primary key references merchants(id),
      two_factor_required boolean not null default false,
      updated_at timestamptz not null
    )`.execute(db)
}
