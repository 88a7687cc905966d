import { stateMachine } from '../../platform/state-machine.ts'
import type { ColumnType, Insertable, Selectable } from 'kysely'

export type ChargebackStatus = 'received' | 'under_review' | 'accepted' | 'reversed'

/**
 * How a closed chargeback was closed: by the merchant (`accepted`, `reversed` through the
 * API), by the bank's decision on submitted evidence (`won`, `lost`), or by the deadline
 * passing unanswered (`expired`).
 */
export type ChargebackResolution = 'accepted' | 'reversed' | 'won' | 'lost' | 'expired'

/** The merchant's evidence draft: what it will submit (texts and file ids). */
export interface EvidenceDraft {
  productDescription?: string
  customerCommunication?: string
  shippingTrackingNumber?: string
  refundPolicy?: string
  uncategorizedText?: string
  fileIds?: string[]
}

type Json<T> = ColumnType<T, string | undefined, string>

export interface ChargebacksTable {
  id: string
  merchant_id: string
  payment_id: string
  amount: number
  status: ChargebackStatus
  reason_code: string
  bank_chargeback_id: string
  received_at: Date
  resolved_at: Date | null
  /** received_at + KURUS_EVIDENCE_DAYS (migration 0300). */
  evidence_due_by: Date
  resolution: ColumnType<ChargebackResolution | null, ChargebackResolution | null | undefined>
  evidence: Json<EvidenceDraft>
  /** The rendered evidence PDF (a `file_…` of modules/files), once submitted. */
  evidence_file_id: ColumnType<string | null, string | null | undefined>
  evidence_submitted_at: ColumnType<Date | null, Date | null | undefined>
  /** When the deadline reminder went to the merchant's owners (sent once). */
  reminder_sent_at: ColumnType<Date | null, Date | null | undefined>
  /**
   * Sandbox: the test clock of its payment (migration 0321). Its deadline passes when that
   * clock does, never by wall time; no reminder is mailed for it.
   */
  test_clock_id: ColumnType<string | null, string | null | undefined, string | null>
}

export interface DisputesTables {
  chargebacks: ChargebacksTable
}

export type ChargebackRow = Selectable<ChargebacksTable>
export type NewChargeback = Insertable<ChargebacksTable>

/**
 * The chargeback state machine, in one place: which status may follow which. Every write is
 * conditional on the `from` status it read (repository `moveChargeback`), so of two
 * concurrent moves one wins and the other gets 409.
 * - received → under_review (evidence submitted), accepted (merchant accepts, or the deadline
 *   passes), reversed (the merchant reverses it: representment won outside the API);
 * - under_review → reversed (the bank decides for the merchant) or accepted (against).
 */
export const CHARGEBACKS = stateMachine<ChargebackStatus>({
  received: ['under_review', 'accepted', 'reversed'],
  under_review: ['reversed', 'accepted'],
  accepted: [],
  reversed: [],
})
