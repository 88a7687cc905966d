import type { GeneratedAlways, Insertable, Selectable } from 'kysely'

export type OwnerType = 'platform' | 'merchant' | 'submerchant'
export type AccountType =
  | 'buyer_pending'
  | 'merchant_reserve'
  | 'merchant_available'
  | 'platform_commission'
  | 'payout_clearing'
  | 'bank_settlement'
export type Direction = 'DEBIT' | 'CREDIT'
export type EntryKind =
  | 'capture'
  | 'refund'
  | 'chargeback'
  | 'chargeback_reversal'
  | 'settlement'
  | 'payout_created'
  | 'payout_paid'
  | 'payout_failed'

export interface LedgerAccountsTable {
  /** Deterministic: `<owner_type>:<owner_id>:<account_type>` (see ledger.postings.ts). */
  id: string
  owner_type: OwnerType
  owner_id: string
  /** The tenant; null only for the platform's own accounts. */
  merchant_id: string | null
  account_type: AccountType
  currency: 'TRY'
  created_at: Date
}

export interface LedgerEntriesTable {
  id: string
  merchant_id: string
  kind: EntryKind
  reference: string
  payment_id: string | null
  created_at: Date
}

export interface LedgerLegsTable {
  id: GeneratedAlways<number>
  entry_id: string
  merchant_id: string
  payment_id: string | null
  account_id: string
  owner_type: OwnerType
  owner_id: string
  account_type: AccountType
  direction: Direction
  amount: number
  currency: 'TRY'
  created_at: Date
}

/**
 * The settlement work list (migration 0090): one row per owner per entry that credited the
 * owner's merchant_reserve. Mutable, unlike the tables above: settled_* are written once.
 */
export interface LedgerReserveCreditsTable {
  entry_id: string
  merchant_id: string
  owner_type: 'merchant' | 'submerchant'
  owner_id: string
  source_reference: string
  amount: number
  credited_at: Date
  settled_at: Date | null
  settled_minor: number | null
  settlement_entry_id: string | null
}

export interface LedgerTables {
  ledger_accounts: LedgerAccountsTable
  ledger_entries: LedgerEntriesTable
  ledger_legs: LedgerLegsTable
  ledger_reserve_credits: LedgerReserveCreditsTable
}

export type LedgerEntryRow = Selectable<LedgerEntriesTable>
export type NewLedgerAccount = Insertable<LedgerAccountsTable>
export type NewLedgerEntry = Insertable<LedgerEntriesTable>
export type NewLedgerLeg = Insertable<LedgerLegsTable>
export type LedgerReserveCreditRow = Selectable<LedgerReserveCreditsTable>
export type NewLedgerReserveCredit = Insertable<LedgerReserveCreditsTable>
