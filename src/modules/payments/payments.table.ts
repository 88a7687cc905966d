import { stateMachine } from '../../platform/state-machine.ts'
import type { ColumnType, Insertable, Selectable } from 'kysely'
import type { RiskAssessment, RiskFacts } from './risk-types.ts'

export type SessionMode = 'payment' | 'card_update_only' | 'qr'
export type SessionStatus = 'active' | 'completed' | 'expired' | 'cancelled'

/** A checkout session is used once: it completes, expires or is cancelled, each final. */
export const SESSIONS = stateMachine<SessionStatus>({
  active: ['completed', 'expired', 'cancelled'],
  completed: [],
  expired: [],
  cancelled: [],
})
export type PaymentStatus =
  | 'pending'
  | 'pending_3ds'
  | 'authorized'
  | 'partially_captured'
  | 'captured'
  | 'voided'
  | 'failed'
  | 'refunded'

/**
 * The payment state machine, in one place (platform/state-machine.ts): every status write is
 * the conditional UPDATE of `transitionPayment`, whose `WHERE status IN (…)` comes from here.
 * - pending → pending_3ds (challenge), authorized / captured (the bank's answer), failed;
 * - pending_3ds → pending (challenge passed, authorizing), failed;
 * - authorized / partially_captured → partially_captured, captured (captures), voided
 *   (nothing captured yet); a void after a partial capture releases the rest and leaves the
 *   payment captured (or refunded, when all it captured was refunded meanwhile);
 * - captured → refunded once refunds complete for everything captured.
 */
export const PAYMENTS = stateMachine<PaymentStatus>({
  pending: ['pending_3ds', 'authorized', 'captured', 'failed'],
  pending_3ds: ['pending', 'failed'],
  authorized: ['partially_captured', 'captured', 'voided'],
  partially_captured: ['partially_captured', 'captured', 'refunded'],
  captured: ['refunded'],
  voided: [],
  failed: [],
  refunded: [],
})

export interface SplitRow {
  submerchantId: string
  amountMinor: number
}

export interface ShareRow {
  ownerType: 'merchant' | 'submerchant'
  ownerId: string
  grossMinor: number
}

type Json<T> = ColumnType<T, string, string>

export interface PaymentSessionsTable {
  id: string
  merchant_id: string
  store_id: string
  transaction_id: string
  mode: SessionMode
  amount: number | null
  currency: 'TRY'
  description: string | null
  return_url: string
  callback_url: string | null
  installment_enabled: boolean
  customer_id: string | null
  splits: Json<SplitRow[]>
  metadata: Json<Record<string, string>>
  /** The payment link the session was made for (migration 0252). */
  payment_link_id: ColumnType<string | null, string | null | undefined, string | null>
  status: SessionStatus
  fingerprint: string
  failed_attempts: ColumnType<number, number | undefined, number>
  expires_at: Date
  created_at: Date
  completed_at: Date | null
}

export interface PaymentsTable {
  id: string
  merchant_id: string
  store_id: string
  session_id: string | null
  transaction_id: string
  method: 'card' | 'qr'
  status: PaymentStatus
  amount: number
  currency: 'TRY'
  commission: number
  installment_count: number
  card_token: string | null
  card_mask: string | null
  card_brand: string | null
  card_type: string | null
  bin: string | null
  three_d_secure: boolean
  capture_requested: boolean
  auth_code: string | null
  acquirer_reference: string | null
  decline_code: string | null
  correlation_id: string | null
  customer_id: string | null
  save_card: boolean
  callback_url: string | null
  shares: Json<ShareRow[]>
  metadata: Json<Record<string, string>>
  fingerprint: string
  void_reason: string | null
  /** The acquirer did not answer an authorization: the reconciler must ask it. */
  outcome_unknown: ColumnType<boolean, boolean | undefined, boolean>
  /** A capture or void whose acquirer call is under way: serialises them per payment. */
  action_in_flight: ColumnType<
    'capture' | 'void' | null,
    'capture' | 'void' | null | undefined,
    'capture' | 'void' | null
  >
  refund_reserved_minor: ColumnType<number, number | undefined, number>
  refund_completed_minor: ColumnType<number, number | undefined, number>
  commission_refunded_minor: ColumnType<number, number | undefined, number>
  chargeback_open_minor: ColumnType<number, number | undefined, number>
  chargeback_total_minor: ColumnType<number, number | undefined, number>
  /** The sum of the completed captures (migration 0250). */
  captured_minor: ColumnType<number, number | undefined, number>
  /** The payment link the payment was made through: its session's (migration 0252). */
  payment_link_id: ColumnType<string | null, string | null | undefined, string | null>
  /** The vault token's fingerprint (migration 0290): velocity counts and block lists. */
  card_fingerprint: ColumnType<string | null, string | null | undefined, string | null>
  /** The buyer's IP when known (the hosted page's client, or the charge's `ip`). */
  client_ip: ColumnType<string | null, string | null | undefined, string | null>
  /** The risk check's decision (risk-port.ts RiskAssessment), null before it ran. */
  risk: ColumnType<RiskAssessment | null, string | null | undefined, string | null>
  /** The facts the risk check saw: the backtest replays rules over them. */
  risk_facts: ColumnType<RiskFacts | null, string | null | undefined, string | null>
  created_at: Date
  authorized_at: Date | null
  completed_at: Date | null
  updated_at: Date
  /** Sandbox: the test clock the payment was made on (a renewal of a subscription on it). */
  test_clock_id: ColumnType<string | null, string | null | undefined, string | null>
  /** The subscription a renewal payment renews, and which cycle (migration 0471). */
  subscription_id: ColumnType<string | null, string | null | undefined, string | null>
  subscription_cycle: ColumnType<number | null, number | null | undefined, number | null>
}

export type RefundStatus = 'pending' | 'completed' | 'failed'

/** A refund waits for the bank, then completes or fails; either is final. */
export const REFUNDS = stateMachine<RefundStatus>({
  pending: ['completed', 'failed'],
  completed: [],
  failed: [],
})

export interface RefundsTable {
  id: string
  merchant_id: string
  payment_id: string
  amount: number
  commission_refund: number | null
  status: RefundStatus
  reason: string | null
  idempotency_key: string | null
  bank_refund_id: string | null
  metadata: ColumnType<Record<string, string>, string | undefined, string>
  created_at: Date
  completed_at: Date | null
  updated_at: Date
}

export type CaptureStatus = 'pending' | 'completed' | 'failed'

/** A capture row waits for the bank, then completes or fails; either is final. */
export const CAPTURES = stateMachine<CaptureStatus>({
  pending: ['completed', 'failed'],
  completed: [],
  failed: [],
})

/**
 * One capture of a payment. `pending` while its bank call is under way (at most one per
 * payment); `failed` when the bank refused it (nothing was captured).
 */
export interface CapturesTable {
  id: string
  merchant_id: string
  payment_id: string
  amount: number
  commission: number
  final: boolean
  status: CaptureStatus
  created_at: Date
  completed_at: Date | null
}

export interface PaymentsTables {
  payment_sessions: PaymentSessionsTable
  payments: PaymentsTable
  refunds: RefundsTable
  captures: CapturesTable
}

export type CaptureRow = Selectable<CapturesTable>
export type NewCapture = Insertable<CapturesTable>

export type RefundRow = Selectable<RefundsTable>
export type NewRefund = Insertable<RefundsTable>

export type SessionRow = Selectable<PaymentSessionsTable>
export type NewSession = Insertable<PaymentSessionsTable>
export type PaymentRow = Selectable<PaymentsTable>
export type NewPayment = Insertable<PaymentsTable>

/**
 * The payment's columns GET /v1/payments/{id} answers from (payment-view.ts, paymentViewOf):
 * the read selects these, not the whole row (issue 43).
 */
export const PAYMENT_VIEW_COLUMNS = [
  'id',
  'merchant_id',
  'store_id',
  'transaction_id',
  'method',
  'status',
  'amount',
  'currency',
  'commission',
  'captured_minor',
  'refund_reserved_minor',
  'chargeback_open_minor',
  'installment_count',
  'card_mask',
  'card_brand',
  'card_type',
  'bin',
  'card_fingerprint',
  'risk',
  'three_d_secure',
  'auth_code',
  'decline_code',
  'customer_id',
  'metadata',
  'payment_link_id',
  'subscription_id',
  'subscription_cycle',
  'created_at',
  'completed_at',
] as const satisfies readonly (keyof PaymentRow)[]

export type PaymentViewRow = Pick<PaymentRow, (typeof PAYMENT_VIEW_COLUMNS)[number]>
