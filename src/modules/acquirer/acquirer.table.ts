import type { ColumnType, Generated, Insertable, Selectable } from 'kysely'
import type { Pos3dsTables } from './pos-3ds.table.ts'
import type { PosTables } from './pos.table.ts'
import type { ReconciliationTables } from './reconciliation.table.ts'

export type OperationKind = 'authorize' | 'capture' | 'void' | 'refund'
export type OperationStatus = 'approved' | 'declined' | 'pending' | 'completed' | 'failed'
/** How the bank settles refunds of the card: at once, or later to completed or failed. */
export type RefundMode = 'sync' | 'async_completes' | 'async_fails'

export interface AcquirerSandboxOperationsTable {
  id: string
  op: OperationKind
  payment_id: string
  refund_id: string | null
  /** Captures: our capture id (unique), and whether it released the rest. */
  capture_id: ColumnType<string | null, string | null | undefined, string | null>
  final: ColumnType<boolean | null, boolean | null | undefined, boolean | null>
  merchant_id: string
  card_token: string | null
  bin: string | null
  last4: string | null
  amount: number
  installment_count: number | null
  capture: boolean | null
  status: OperationStatus
  decline_code: string | null
  auth_code: string | null
  reference: string | null
  bank_refund_id: string | null
  refund_mode: RefundMode
  /** The bank approved but its answer never reached us (the timeout card). */
  response_lost: Generated<boolean>
  created_at: Date
  updated_at: Date
}

export interface AcquirerSandbox3dsTable {
  correlation_id: string
  payment_id: string
  merchant_id: string
  card_token: string
  kind: 'frictionless' | 'challenge'
  /** Whether the right OTP can pass this card's challenge at all. */
  challenge_passes: boolean
  result: 'Y' | 'N' | null
  amount: number
  created_at: Date
  completed_at: Date | null
}

export interface AcquirerTables extends PosTables, Pos3dsTables, ReconciliationTables {
  acquirer_sandbox_operations: AcquirerSandboxOperationsTable
  acquirer_sandbox_3ds: AcquirerSandbox3dsTable
}

export type OperationRow = Selectable<AcquirerSandboxOperationsTable>
export type NewOperation = Insertable<AcquirerSandboxOperationsTable>
export type ThreeDsRow = Selectable<AcquirerSandbox3dsTable>
export type NewThreeDs = Insertable<AcquirerSandbox3dsTable>
