import { stateMachine } from '../../platform/state-machine.ts'
import type { ColumnType, Insertable, Selectable } from 'kysely'

export type ExportFormat = 'csv' | 'pdf'
export type ExportStatus = 'queued' | 'processing' | 'ready' | 'failed' | 'expired'

/**
 * The export state machine: a worker claims a queued export (processing), builds it (ready,
 * or failed once its retries are spent; a queued one fails when no worker ever takes it),
 * and a ready file expires after its retention.
 */
export const EXPORTS = stateMachine<ExportStatus>({
  queued: ['processing', 'failed'],
  processing: ['ready', 'failed'],
  ready: ['expired'],
  failed: [],
  expired: [],
})
/** What a row builds: a statement (POST /v1/transactions/exports) or a report (POST /v1/reports). */
export type ExportKind = 'statement' | ReportType
export type ReportType = 'balance_summary' | 'payout_reconciliation'

/**
 * What the merchant asked to export; every key optional, as in POST /v1/transactions/exports.
 * `Status` is payments' status type: a table file imports no other module (database.ts would
 * close a cycle through it), so the stored JSON holds a string the service narrows on read.
 */
export interface ExportFilters<Status extends string = string> {
  storeId?: string
  status?: Status
  from?: string
  to?: string
  amountMin?: number
  amountMax?: number
  customerId?: string
  paymentId?: string
  /** The dashboard's search box (payments' PaymentSearchFilter.q): id, transactionId, last4. */
  q?: string
}

type Json<T> = ColumnType<T, string, string>
type Defaulted<T> = ColumnType<T, T | undefined, T>

export interface TransactionExportsTable {
  id: string
  merchant_id: string
  kind: Defaulted<ExportKind>
  format: ExportFormat
  filters: Json<ExportFilters>
  status: ExportStatus
  snapshot_at: Date
  row_count: Defaulted<number>
  byte_size: Defaulted<number>
  chunk_count: Defaulted<number>
  attempt: Defaulted<number>
  /** The build job that owns the current attempt, by the export id it was enqueued for. */
  claimed_by: ColumnType<string | null, string | null | undefined, string | null>
  error: string | null
  idempotency_key: string | null
  created_at: Date
  started_at: Date | null
  completed_at: Date | null
  expires_at: Date | null
  updated_at: Date
}

export interface TransactionExportChunksTable {
  export_id: string
  attempt: number
  seq: number
  /** pg returns a Buffer, PGlite a Uint8Array. */
  data: ColumnType<Uint8Array, Uint8Array, never>
}

export interface TransactionsTables {
  transaction_exports: TransactionExportsTable
  transaction_export_chunks: TransactionExportChunksTable
}

export type ExportRow = Selectable<TransactionExportsTable>
export type NewExport = Insertable<TransactionExportsTable>
