import { stateMachine } from '../../platform/state-machine.ts'
import type { ColumnType, Insertable, Selectable } from 'kysely'

export type PayoutRail = 'fast' | 'eft' | 'card'
/** A submerchant payout, a draft's row, or a settlement of the merchant's own balance. */
export type PayoutKind = 'submerchant' | 'draft' | 'settlement'
export type PayoutInterval = 'daily' | 'weekly' | 'monthly' | 'manual'
export type DraftStatus = 'draft' | 'approved' | 'cancelled'
export type PayoutStatus = 'pending' | 'processing' | 'paid' | 'failed'

/** A payout draft is approved (its payouts created) or cancelled, once. */
export const DRAFTS = stateMachine<DraftStatus>({
  draft: ['approved', 'cancelled'],
  approved: [],
  cancelled: [],
})

/**
 * A payout is claimed by one worker (pending → processing), then the rail's answer is
 * recorded (paid or failed; a failed payout's money is back on the balance).
 */
export const PAYOUTS = stateMachine<PayoutStatus>({
  pending: ['processing'],
  processing: ['paid', 'failed'],
  paid: [],
  failed: [],
})

type Json<T> = ColumnType<T, string, string>

export interface PayoutDraftsTable {
  id: string
  merchant_id: string
  store_id: string
  status: DraftStatus
  row_count: number
  valid_count: number
  invalid_count: number
  valid_total_minor: number
  created_at: Date
  approved_at: Date | null
  cancelled_at: Date | null
  updated_at: Date
}

export interface PayoutDraftRowsTable {
  draft_id: string
  merchant_id: string
  /** 0-based position in the uploaded `rows` array. */
  idx: number
  valid: boolean
  errors: Json<string[]>
  /** As given when it is one of the rails, else null. */
  rail: PayoutRail | null
  holder_name: string | null
  amount_minor: number | null
  /** Normalised IBAN or card token; only kept for valid rows (never echoed). */
  dest: string | null
  dest_masked: string | null
}

export interface PayoutsTable {
  /** UUID (spec). */
  id: string
  merchant_id: string
  store_id: string | null
  draft_id: string | null
  draft_row_idx: number | null
  owner_type: 'merchant' | 'submerchant'
  owner_id: string
  submerchant_id: string | null
  rail: PayoutRail
  dest: string
  dest_masked: string
  holder_name: string
  amount_minor: number
  currency: 'TRY'
  status: PayoutStatus
  client_reference: string | null
  /** The Idempotency-Key of the request that created it (lower case), if it had one. */
  idempotency_key: string | null
  failure_code: string | null
  /** jsonb (migration 0251): written as its JSON text, read back parsed. */
  metadata: ColumnType<Record<string, string>, string | undefined, string>
  rail_reference: string | null
  /** Migration 0450. */
  kind: PayoutKind
  /** A settlement payout's scheduled run (Istanbul date, YYYY-MM-DD); unique per merchant. */
  run_date: string | null
  /** When the money reaches the bank account (Istanbul date); settlement payouts. */
  arrival_date: string | null
  created_at: Date
  processing_at: Date | null
  paid_at: Date | null
  failed_at: Date | null
  updated_at: Date
}

/** The merchant's own bank account, where settlement payouts go (migration 0450). */
export interface MerchantBankAccountsTable {
  merchant_id: string
  /** Normalised TR IBAN; never echoed. */
  iban: string
  holder_name: string
  /** In live, no settlement payout before this (24 h after a change). */
  payouts_hold_until: Date | null
  created_at: Date
  updated_at: Date
}

export interface PayoutSchedulesTable {
  merchant_id: string
  interval: PayoutInterval
  /** weekly: monday…sunday; monthly: 1…31 (as text); else null. */
  anchor: string | null
  minimum_minor: number
  updated_at: Date
}

/** One scheduled settlement run of a merchant (migration 0450). */
export interface PayoutRunsTable {
  merchant_id: string
  run_date: string
  outcome: 'paid' | 'below_minimum' | 'nothing_available'
  payout_id: string | null
  available_minor: number
  created_at: Date
}

export interface PayoutsTables {
  payout_runs: PayoutRunsTable
  payout_drafts: PayoutDraftsTable
  payout_draft_rows: PayoutDraftRowsTable
  payouts: PayoutsTable
  merchant_bank_accounts: MerchantBankAccountsTable
  payout_schedules: PayoutSchedulesTable
}

export type DraftRow = Selectable<PayoutDraftsTable>
export type DraftRowRow = Selectable<PayoutDraftRowsTable>
export type NewDraftRow = Insertable<PayoutDraftRowsTable>
export type PayoutRow = Selectable<PayoutsTable>
export type NewPayout = Insertable<PayoutsTable>
export type BankAccountRow = Selectable<MerchantBankAccountsTable>
export type ScheduleRow = Selectable<PayoutSchedulesTable>
