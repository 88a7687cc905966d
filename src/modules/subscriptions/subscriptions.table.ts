import { stateMachine } from '../../platform/state-machine.ts'
import type { ColumnType, Insertable, Selectable, Updateable } from 'kysely'

export type SubscriptionStatus =
  'trialing' | 'active' | 'past_due' | 'paused' | 'cancelled' | 'expired' | 'charging'

/** The statuses a charge may start from (what `charge_from` remembers while charging). */
export type ChargeableStatus = 'trialing' | 'active' | 'past_due'

/**
 * The subscription state machine. A charge claims the row (`charging`, remembering where it
 * came from) and leaves it renewed (`active`), in dunning (`past_due`), ended (`expired`,
 * or `cancelled` at period end), or where it was (a charge deferred for KYC). Pausing is for
 * a subscription in good standing; cancelling ends any live one.
 */
export const SUBSCRIPTIONS = stateMachine<SubscriptionStatus>({
  trialing: ['charging', 'paused', 'cancelled'],
  active: ['charging', 'paused', 'cancelled'],
  past_due: ['charging', 'cancelled'],
  paused: ['active', 'cancelled'],
  charging: ['trialing', 'active', 'past_due', 'cancelled', 'expired'],
  cancelled: [],
  expired: [],
})
export type ChargeKind = 'renewal' | 'retry' | 'charge_now'
export type IntervalUnit = 'day' | 'week' | 'month' | 'year'

export interface SubscriptionsTable {
  id: string
  merchant_id: string
  store_id: string
  customer_id: string
  public_hash_sha256: string
  status: SubscriptionStatus
  amount_minor: number
  currency: 'TRY'
  interval_count: number
  interval_unit: IntervalUnit
  cycle_number: number
  /** When the engine next acts: the due date, a dunning retry, or null (paused, terminal). */
  next_charge_at: Date | null
  /** Cycle `anchor_cycle` is due at `anchor_at`; later cycles by calendar interval from it. */
  anchor_at: Date
  anchor_cycle: number
  /** Consecutive failed attempts for the unpaid cycle (0 when it is not past due). */
  failed_attempts: number
  charge_from: ChargeableStatus | null
  charge_kind: ChargeKind | null
  /** The worker that holds the charge; null while a charge-now waits for its job. */
  claim_id: string | null
  charging_since: Date | null
  /** When this charge's first claim was taken: attempts made after it belong to it. */
  charge_started_at: Date | null
  /** The payment whose outcome the acquirer has not told yet. */
  awaiting_payment_id: string | null
  cancel_at_period_end: boolean
  cancel_reason: string | null
  cancelled_by: 'merchant' | 'buyer' | null
  card_token: string
  card_last4: string
  card_brand: string
  /** The n of the latest update-card session `<id>:card:<n>`; 0 when none was minted. */
  card_session_seq: number
  /** The latest n whose outcome was taken into the subscription. */
  card_synced_seq: number
  trial_end_at: Date | null
  generate_invoices: boolean
  description: string | null
  /** jsonb (migration 0251): written as its JSON text, read back parsed. */
  metadata: ColumnType<Record<string, string>, string | undefined, string>
  created_at: Date
  updated_at: Date
  cancelled_at: Date | null
  ended_at: Date | null
  /** The sandbox test clock whose time this subscription lives on (migration 0320). */
  test_clock_id: ColumnType<string | null, string | null | undefined, string | null>
}

export interface SubscriptionChargesTable {
  subscription_id: string
  merchant_id: string
  cycle_number: number
  attempt: number
  payment_id: string | null
  status: 'captured' | 'failed'
  amount_minor: number
  decline_code: string | null
  charged_at: Date
}

export interface SubscriptionsTables {
  subscriptions: SubscriptionsTable
  subscription_charges: SubscriptionChargesTable
}

export type SubscriptionRow = Selectable<SubscriptionsTable>
export type NewSubscription = Insertable<SubscriptionsTable>
export type SubscriptionPatch = Updateable<SubscriptionsTable>
export type SubscriptionChargeRow = Selectable<SubscriptionChargesTable>
export type NewSubscriptionCharge = Insertable<SubscriptionChargesTable>
