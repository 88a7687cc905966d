import type { ColumnType, Generated, Insertable, Selectable } from 'kysely'

export type KycStatus = 'none' | 'pending' | 'approved' | 'rejected' | 'suspended' | 'expired'
export type SubjectScope = 'merchant' | 'submerchant'

export interface Pricing {
  /** Commission rate in basis points by installment count; index 0 is 1 installment. */
  rateBpsByInstallment: number[]
  fixedMinor: number
}

export interface MerchantsTable {
  id: string
  name: string
  kyc_status: KycStatus
  kyc_decided_at: Date | null
  kyc_subject_id: string
  kyc_session_id: string | null
  pricing: ColumnType<Pricing, string, string>
  settlement_delay_seconds: number
  created_at: Date
}

export interface StoresTable {
  id: string
  merchant_id: string
  name: string
  webhook_url: string | null
  /** The merchant pages (origins) that may take cards with Kuruş.js (migration 0431). */
  allowed_origins: ColumnType<string[], string | undefined, string>
  created_at: Date
}

export interface SubmerchantsTable {
  id: string
  merchant_id: string
  name: string
  iban: string
  holder_name: string
  payout_min_minor: number
  payout_max_minor: number
  payout_daily_max_minor: number
  settlement_delay_seconds: number
  created_at: Date
}

export interface ApiKeysTable {
  id: string
  merchant_id: string
  store_id: string | null
  submerchant_id: string | null
  subject_scope: SubjectScope
  env: 'demo' | 'live'
  public_key: string
  secret_enc: string
  status: 'active' | 'revoked'
  expires_at: Date | null
  rolled_to: string | null
  created_at: Date
  revoked_at: Date | null
}

export type DashboardRole = 'owner' | 'admin' | 'developer' | 'finance' | 'support' | 'viewer'

export interface DashboardUsersTable {
  id: string
  merchant_id: string
  email: string
  password_hash: string
  created_at: Date
  /** Migration 0230: the user made with the merchant is its owner (the column's default). */
  role: Generated<DashboardRole>
  /** TOTP secret sealed under the master key (AAD: the user id); null until enrolled. */
  totp_secret_enc: Generated<string | null>
  totp_enabled_at: Generated<Date | null>
  /** Time step of the last accepted code: a code is good once (RFC 6238 §5.2). */
  totp_last_counter: Generated<number | null>
}

/** Sign-in lockout state per attempted email (keyed hash), known or not. */
export interface DashboardLoginThrottlesTable {
  email_key: string
  /** Epoch ms of the failed (or still running) attempts inside the window, oldest first. */
  failures: ColumnType<number[], string, string>
  locked_until: Date | null
  /** When the row no longer matters (window and lock both over): it may be deleted. */
  expires_at: Date
}

export interface MerchantsTables {
  merchants: MerchantsTable
  stores: StoresTable
  submerchants: SubmerchantsTable
  api_keys: ApiKeysTable
  dashboard_users: DashboardUsersTable
  dashboard_login_throttles: DashboardLoginThrottlesTable
}

export type MerchantRow = Selectable<MerchantsTable>
export type StoreRow = Selectable<StoresTable>
export type SubmerchantRow = Selectable<SubmerchantsTable>
export type ApiKeyRow = Selectable<ApiKeysTable>
export type NewApiKey = Insertable<ApiKeysTable>
export type DashboardUserRow = Selectable<DashboardUsersTable>
