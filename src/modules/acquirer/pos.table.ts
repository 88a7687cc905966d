import type { ColumnType, Selectable } from 'kysely'

export type PosProvider = 'est_v3' | 'garanti' | 'posnet'
export type PosEnvironment = 'test' | 'production'

type Json<T> = ColumnType<T, string, string>

export interface PosEndpoints {
  api: string
  threeDGate: string
}

export interface AcquirerPosAccountsTable {
  id: string
  /** null: a platform-owned contract, offered to every merchant. */
  merchant_id: string | null
  provider: PosProvider
  bank: string
  name: string
  environment: PosEnvironment
  /** AES-GCM envelope (platform/crypto.ts) of the credentials' JSON, bound to the id. */
  credentials_enc: string
  /** demo only: a bank simulator's URLs instead of the bank's built-in ones. */
  endpoints: Json<PosEndpoints | null> | null
  installment_programs: Json<string[]>
  enabled: boolean
  deleted_at: Date | null
  created_at: Date
  updated_at: Date
}

export type PosAttemptOutcome = 'approved' | 'declined' | 'not_sent' | 'unknown' | 'not_found'

export interface PosAttempt {
  posAccountId: string
  outcome: PosAttemptOutcome
  bankCode: string | null
}

export type PosPaymentState = 'sending' | 'unknown' | 'approved' | 'declined' | 'failed'

export interface AcquirerPosPaymentsTable {
  payment_id: string
  merchant_id: string
  /** The POS the last attempt went to (the one that holds the authorization when approved). */
  pos_account_id: string | null
  provider: PosProvider | null
  bank: string | null
  state: PosPaymentState
  amount: number
  pre_auth: boolean
  installment_count: number
  auth_code: string | null
  host_reference: string | null
  decline_code: string | null
  captured: ColumnType<number, number | undefined, number>
  voided: ColumnType<boolean, boolean | undefined, boolean>
  attempts: Json<PosAttempt[]>
  /** The order went through the bank's 3D gate (migration 0520; PosNet names it TDSC…). */
  three_d: ColumnType<boolean, boolean | undefined, boolean>
  created_at: Date
  updated_at: Date
}

export interface AcquirerPosRefundsTable {
  refund_id: string
  payment_id: string
  kind: 'void' | 'credit'
  amount: number
  state: 'sending' | 'completed' | 'failed' | 'unknown'
  bank_code: string | null
  created_at: Date
  updated_at: Date
}

export interface AcquirerRoutingTable {
  merchant_id: string
  rules: Json<{ condition: unknown; posAccountIds: string[] }[]>
  default_order: Json<string[]>
  updated_at: Date
}

export interface PosTables {
  acquirer_pos_accounts: AcquirerPosAccountsTable
  acquirer_pos_payments: AcquirerPosPaymentsTable
  acquirer_pos_refunds: AcquirerPosRefundsTable
  acquirer_routing: AcquirerRoutingTable
}

export type PosAccountRow = Selectable<AcquirerPosAccountsTable>
export type PosPaymentRow = Selectable<AcquirerPosPaymentsTable>
export type PosRefundRow = Selectable<AcquirerPosRefundsTable>
export type RoutingRow = Selectable<AcquirerRoutingTable>
