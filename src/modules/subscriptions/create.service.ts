import { randomBytes } from 'node:crypto'
import type { Deps, Tx } from '../../database.ts'
import { assert } from '../../platform/assert.ts'
import { transact } from '../../platform/db/transaction.ts'
import { validationError } from '../../platform/errors.ts'
import type { RecordAnswer } from '../../platform/http/idempotent-answer.ts'
import { checkMetadata } from '../../platform/metadata.ts'
import { newId } from '../../platform/ids.ts'
import { getCustomer, getDefaultCard } from '../customers/index.ts'
import { getStore } from '../merchants/index.ts'
import { testClockTime } from '../test-clocks/index.ts'
import { getCardToken } from '../vault/index.ts'
import { INTERVAL_COUNT_MAX } from './calendar.ts'
import { subscriptionsError } from './subscriptions.errors.ts'
import * as repo from './subscriptions.repository.ts'
import { publicHashDigest } from './subscriptions.service.ts'
import type { IntervalUnit } from './subscriptions.table.ts'
import {
  emitSubscriptionEvent,
  subscriptionRowToSubscription,
  type Subscription,
} from './subscription-view.ts'

// Creating a subscription: the input's bounds, the card it charges, its first cycle.

export const AMOUNT_MIN_MINOR = 100
export const AMOUNT_MAX_MINOR = 10_000_000_000
/** A trial may run up to two years. */
const TRIAL_MS_MAX = 730 * 24 * 60 * 60 * 1000

export interface CreateSubscriptionInput {
  storeId: string
  customerId: string
  amountMinor: number
  currency: 'TRY'
  intervalCount: number
  intervalUnit: IntervalUnit
  cardToken?: string | undefined
  trialEndAt?: Date | undefined
  generateInvoices?: boolean | undefined
  description?: string | undefined
  metadata?: Record<string, string> | undefined
  /** Sandbox: the test clock whose time the subscription lives on (decision 0031). */
  testClockId?: string | undefined
}

interface CardChoice {
  cardToken: string
  last4: string
  brand: string
}

/**
 * The card to charge: the given token, which must be one of this customer's cards (bound to
 * the customer in the vault, as attaching it does), or else the customer's default card.
 */
async function chooseCard(
  deps: Deps,
  merchantId: string,
  customerId: string,
  cardToken: string | undefined,
): Promise<CardChoice> {
  if (cardToken === undefined) {
    const card = await getDefaultCard(deps, merchantId, customerId)
    if (!card) {
      throw validationError('cardToken', 'is required: the customer has no default card')
    }
    return { cardToken: card.cardToken, last4: card.last4, brand: card.brand }
  }
  const token = await getCardToken(deps, merchantId, cardToken)
  if (token.customerId !== customerId) {
    throw validationError('cardToken', 'is not a card of this customer (attach it first)')
  }
  if (token.status !== 'active') throw subscriptionsError('card_token_revoked')
  return { cardToken: token.cardToken, last4: token.last4, brand: token.brand }
}

function checkCreateInput(input: CreateSubscriptionInput, now: Date): void {
  if (input.amountMinor < AMOUNT_MIN_MINOR || input.amountMinor > AMOUNT_MAX_MINOR) {
    throw validationError(
      'amountMinor',
      `must be between ${AMOUNT_MIN_MINOR} and ${AMOUNT_MAX_MINOR} kuruş`,
    )
  }
  const max = INTERVAL_COUNT_MAX[input.intervalUnit]
  if (input.intervalCount < 1 || input.intervalCount > max) {
    throw validationError('intervalCount', `must be 1..${max} for ${input.intervalUnit}`)
  }
  const trial = input.trialEndAt
  if (trial !== undefined) {
    if (trial.getTime() <= now.getTime())
      throw validationError('trialEndAt', 'must be in the future')
    if (trial.getTime() - now.getTime() > TRIAL_MS_MAX) {
      throw validationError('trialEndAt', 'must be within two years')
    }
  }
}

/** Now, for a new subscription: its test clock's time when it is created on one. */
async function creationTime(
  deps: Deps,
  merchantId: string,
  testClockId: string | undefined,
): Promise<Date> {
  if (testClockId === undefined) return deps.clock.now()
  return testClockTime(deps, merchantId, testClockId)
}

/**
 * Creates a subscription: `trialing` until trialEndAt when given, else `active` with its
 * first cycle due at once (charged at the renewal engine's next tick). cycleNumber starts
 * at 0. The returned publicHash is the buyer portal's bearer: 128 random bits, returned
 * here only and stored as its SHA-256.
 */
export async function createSubscription(
  deps: Deps,
  merchantId: string,
  input: CreateSubscriptionInput,
  record?: RecordAnswer<Tx, { subscription: Subscription; publicHash: string }>,
): Promise<{ subscription: Subscription; publicHash: string }> {
  const now = await creationTime(deps, merchantId, input.testClockId)
  checkCreateInput(input, now)
  checkMetadata(input.metadata ?? {})
  await getStore(deps, merchantId, input.storeId)
  await getCustomer(deps, merchantId, input.customerId)
  const card = await chooseCard(deps, merchantId, input.customerId, input.cardToken)
  const publicHash = randomBytes(16).toString('base64url')
  const id = newId('sub')
  const firstDue = input.trialEndAt ?? now
  const row = await transact(deps.db, async (tx) => {
    await repo.insertSubscription(tx, {
      id,
      merchant_id: merchantId,
      store_id: input.storeId,
      customer_id: input.customerId,
      public_hash_sha256: publicHashDigest(publicHash),
      status: input.trialEndAt ? 'trialing' : 'active',
      amount_minor: input.amountMinor,
      currency: 'TRY',
      interval_count: input.intervalCount,
      interval_unit: input.intervalUnit,
      cycle_number: 0,
      next_charge_at: firstDue,
      anchor_at: firstDue,
      anchor_cycle: 1,
      failed_attempts: 0,
      charge_from: null,
      charge_kind: null,
      claim_id: null,
      charging_since: null,
      charge_started_at: null,
      awaiting_payment_id: null,
      cancel_at_period_end: false,
      cancel_reason: null,
      cancelled_by: null,
      card_token: card.cardToken,
      card_last4: card.last4,
      card_brand: card.brand,
      card_session_seq: 0,
      card_synced_seq: 0,
      trial_end_at: input.trialEndAt ?? null,
      generate_invoices: input.generateInvoices ?? false,
      description: input.description ?? null,
      metadata: JSON.stringify(input.metadata ?? {}),
      created_at: now,
      updated_at: now,
      cancelled_at: null,
      ended_at: null,
      test_clock_id: input.testClockId ?? null,
    })
    const inserted = await repo.lockSubscription(tx, merchantId, id)
    assert(inserted !== undefined, 'inserted subscription is readable')
    await emitSubscriptionEvent(tx, inserted, 'subscription.created', now)
    // The API's answer commits with the subscription (decision 0035): a retry never makes a
    // second one, which would charge the card twice a period.
    await record?.(tx, { subscription: subscriptionRowToSubscription(inserted), publicHash })
    return inserted
  })
  return { subscription: subscriptionRowToSubscription(row), publicHash }
}
