import type { Tx } from '../../database.ts'
import { recordEvent } from '../events/index.ts'
import type {
  IntervalUnit,
  SubscriptionChargeRow,
  SubscriptionRow,
  SubscriptionStatus,
} from './subscriptions.table.ts'

// The subscription as use cases return it, and the outbox events of its transitions.

/** The pg-boss job that runs a charge-now (defined in subscriptions.jobs.ts). */
export const CHARGE_NOW_JOB = 'subscriptions.charge_now'

export interface Subscription {
  id: string
  merchantId: string
  storeId: string
  customerId: string
  status: SubscriptionStatus
  amountMinor: number
  currency: 'TRY'
  intervalCount: number
  intervalUnit: IntervalUnit
  cycleNumber: number
  nextChargeAt: Date | null
  cardLast4: string
  cardBrand: string
  cancelAtPeriodEnd: boolean
  trialEndAt: Date | null
  description: string | null
  generateInvoices: boolean
  metadata: Record<string, string>
  /** Failed attempts at the unpaid cycle (dunning); 0 unless past due. */
  failedAttempts: number
  cancelledAt: Date | null
  createdAt: Date
  /** Sandbox: the test clock whose time it lives on, or null. */
  testClockId: string | null
}

export interface SubscriptionCharge {
  cycleNumber: number
  attempt: number
  paymentId: string | null
  status: 'captured' | 'failed'
  amountMinor: number
  declineCode: string | null
  chargedAt: Date
}

export function subscriptionRowToSubscription(row: SubscriptionRow): Subscription {
  return {
    id: row.id,
    merchantId: row.merchant_id,
    storeId: row.store_id,
    customerId: row.customer_id,
    status: row.status,
    amountMinor: row.amount_minor,
    currency: row.currency,
    intervalCount: row.interval_count,
    intervalUnit: row.interval_unit,
    cycleNumber: row.cycle_number,
    nextChargeAt: row.next_charge_at,
    cardLast4: row.card_last4,
    cardBrand: row.card_brand,
    cancelAtPeriodEnd: row.cancel_at_period_end,
    trialEndAt: row.trial_end_at,
    description: row.description,
    generateInvoices: row.generate_invoices,
    metadata: row.metadata,
    failedAttempts: row.failed_attempts,
    cancelledAt: row.cancelled_at,
    createdAt: row.created_at,
    testClockId: row.test_clock_id,
  }
}

export function chargeRowToCharge(row: SubscriptionChargeRow): SubscriptionCharge {
  return {
    cycleNumber: row.cycle_number,
    attempt: row.attempt,
    paymentId: row.payment_id,
    status: row.status,
    amountMinor: row.amount_minor,
    declineCode: row.decline_code,
    chargedAt: row.charged_at,
  }
}

export type SubscriptionEventType =
  | 'subscription.created'
  | 'subscription.renewed'
  | 'subscription.charge_failed'
  | 'subscription.past_due'
  | 'subscription.expired'
  | 'subscription.paused'
  | 'subscription.resumed'
  | 'subscription.cancel_scheduled'
  | 'subscription.cancelled'
  | 'subscription.card_updated'

/**
 * Records a transition in the outbox inside the transaction that made it (the caller holds
 * the row lock, as recordEvent needs). The payload is the subscription as the API shows it
 * (never the portal bearer), plus what the transition adds (payment id, decline code…).
 */
export async function emitSubscriptionEvent(
  tx: Tx,
  row: SubscriptionRow,
  type: SubscriptionEventType,
  at: Date,
  extra: Record<string, unknown> = {},
): Promise<void> {
  await recordEvent(tx, {
    merchantId: row.merchant_id,
    storeId: row.store_id,
    type,
    resourceType: 'subscription',
    resourceId: row.id,
    data: {
      id: row.id,
      storeId: row.store_id,
      customerId: row.customer_id,
      status: row.status,
      amountMinor: row.amount_minor,
      currency: row.currency,
      intervalCount: row.interval_count,
      intervalUnit: row.interval_unit,
      cycleNumber: row.cycle_number,
      nextChargeAt: row.next_charge_at?.toISOString() ?? null,
      cancelAtPeriodEnd: row.cancel_at_period_end,
      cardLast4: row.card_last4,
      cardBrand: row.card_brand,
      metadata: row.metadata,
      // Only on a sandbox test clock's subscriptions (decision 0031).
      ...(row.test_clock_id === null ? {} : { testClockId: row.test_clock_id }),
      ...extra,
    },
    at,
  })
}
