import type { ColumnType, Generated, Selectable } from 'kysely'

export type SessionStage = 'second_factor' | 'enrol' | 'active'
/** `web`: the pages' cookie; `api`: a dashboard API bearer token (migration 0410). */
export type SessionKind = 'web' | 'api'

/** Server-side sessions of the dashboard's web pages (migration 0231). */
export interface DashboardSessionsTable {
  /** SHA-256 (hex) of the random id in the cookie. */
  id_hash: string
  user_id: string
  merchant_id: string
  stage: SessionStage
  kind: Generated<SessionKind>
  /** A TOTP secret being enrolled, sealed under the master key, until a code confirms it. */
  totp_pending_enc: Generated<string | null>
  /** Recovery codes just made, sealed under the master key, until the page shows them once. */
  recovery_codes_enc: Generated<string | null>
  /** Wrong codes at the second-factor step; the session ends at the limit. */
  second_factor_failures: Generated<number>
  created_at: Date
  last_seen_at: Date
  /** The absolute end (created_at + 12 h). */
  expires_at: Date
  ended_at: Generated<Date | null>
}

/** Invitations to a merchant's team: a single-use link, valid 72 hours. */
export interface DashboardInvitationsTable {
  id: string
  merchant_id: string
  email: string
  /**
   * One of merchants' DashboardRole values (migration 0231 checks the same list). Spelled out
   * because a table file imports no other module (database.ts would close an import cycle);
   * team.service.ts writes and reads it as a DashboardRole, so tsc catches a divergence.
   */
  role: 'owner' | 'admin' | 'developer' | 'finance' | 'support' | 'viewer'
  token_hash: string
  invited_by: string
  created_at: Date
  expires_at: Date
  accepted_at: Generated<Date | null>
  revoked_at: Generated<Date | null>
}

/** Per-merchant dashboard settings. */
export interface DashboardSettingsTable {
  merchant_id: string
  two_factor_required: boolean
  updated_at: Date
}

/** Wrong second-factor codes per user (migration 0411). */
export interface DashboardSecondFactorThrottlesTable {
  user_id: string
  /** Epoch ms of the wrong (or still being checked) codes inside the window, oldest first. */
  failures: ColumnType<number[], string, string>
  locked_until: Date | null
}

/** Two-factor recovery codes (migration 0470): hashes only, each spent once. */
export interface DashboardRecoveryCodesTable {
  user_id: string
  /** SHA-256 (hex) of the user id and the normalised code. */
  code_hash: string
  created_at: Date
  used_at: Generated<Date | null>
}

/** Single-use links of an account (migration 0490): password reset, email change. */
export interface DashboardAccountLinksTable {
  /** SHA-256 (hex) of the link's random token. */
  token_hash: string
  user_id: string
  merchant_id: string
  purpose: 'password_reset' | 'email_change'
  /** The address an email change moves to (null for a reset). */
  new_email: string | null
  created_at: Date
  expires_at: Date
  used_at: Generated<Date | null>
}

export interface DashboardTables {
  dashboard_account_links: DashboardAccountLinksTable
  dashboard_recovery_codes: DashboardRecoveryCodesTable
  dashboard_second_factor_throttles: DashboardSecondFactorThrottlesTable
  dashboard_sessions: DashboardSessionsTable
  dashboard_invitations: DashboardInvitationsTable
  dashboard_settings: DashboardSettingsTable
}

export type DashboardSessionRow = Selectable<DashboardSessionsTable>
export type DashboardInvitationRow = Selectable<DashboardInvitationsTable>
export type DashboardAccountLinkRow = Selectable<DashboardAccountLinksTable>
