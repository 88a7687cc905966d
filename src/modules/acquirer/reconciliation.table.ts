import type { ColumnType, Selectable } from 'kysely'

type Json<T> = ColumnType<T, string | null, string | null>

/** What one side knows of an order on a POS: kuruş amounts and whether it was voided. */
export interface OrderFacts {
  authorized: number
  /** null: the bank's per-order inquiry does not say (est_v3, posnet). */
  captured: number | null
  refunded: number | null
  voided: boolean
}

export type MismatchField = 'authorized' | 'captured' | 'refunded' | 'voided'

export type MismatchKind = 'missing_at_bank' | 'missing_at_us' | 'amount_differs' | 'status_differs'

export interface AcquirerReconciliationRunsTable {
  pos_account_id: string
  /** The Istanbul calendar day, YYYY-MM-DD. */
  bank_date: string
  /** list: the bank's own day list (garanti); inquiry: one order inquiry per order of ours. */
  method: 'list' | 'inquiry'
  checked_orders: number
  mismatches: number
  ran_at: Date
}

export interface AcquirerReconciliationItemsTable {
  id: string
  pos_account_id: string
  bank_date: string
  order_id: string
  payment_id: string | null
  merchant_id: string | null
  kind: MismatchKind
  /** authorized, captured, refunded or voided for a difference; '' for a missing order. */
  field: MismatchField | ''
  ours: Json<OrderFacts | null>
  bank: Json<OrderFacts | null>
  created_at: Date
}

export interface ReconciliationTables {
  acquirer_reconciliation_runs: AcquirerReconciliationRunsTable
  acquirer_reconciliation_items: AcquirerReconciliationItemsTable
}

export type ReconciliationRunRow = Selectable<AcquirerReconciliationRunsTable>
export type ReconciliationItemRow = Selectable<AcquirerReconciliationItemsTable>
