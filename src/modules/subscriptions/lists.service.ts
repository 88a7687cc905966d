import type { Deps } from '../../database.ts'
import { assert } from '../../platform/assert.ts'
import { byCreatedAt, keysetCursor, signedCursor } from '../../platform/cursor.ts'
import * as repo from './subscriptions.repository.ts'
import { loadRow } from './subscriptions.service.ts'
import type { SubscriptionStatus } from './subscriptions.table.ts'
import {
  chargeRowToCharge,
  subscriptionRowToSubscription,
  type Subscription,
  type SubscriptionCharge,
} from './subscription-view.ts'

// The merchant's lists: subscriptions, and the charge attempts of one.

export const SUBSCRIPTIONS_LIMIT_MAX = 100
export const CHARGES_LIMIT_MAX = 100

// The list's cursor: signed with a key of its own, names its merchant.
const SUBSCRIPTIONS_CURSOR = keysetCursor('subscriptions', 'kurus/subscriptions/list')

export interface SubscriptionListQuery {
  storeId?: string | undefined
  customerId?: string | undefined
  status?: SubscriptionStatus | undefined
  from?: Date | undefined
  to?: Date | undefined
  limit: number
  cursor?: string | undefined
}

/** The merchant's subscriptions, newest first, in pages of `limit` (keyset, signed cursor). */
export async function listSubscriptions(
  deps: Deps,
  merchantId: string,
  q: SubscriptionListQuery,
): Promise<{ items: Subscription[]; nextCursor: string | null }> {
  assert(Number.isInteger(q.limit) && q.limit >= 1 && q.limit <= SUBSCRIPTIONS_LIMIT_MAX, 'limit')
  return SUBSCRIPTIONS_CURSOR.page(deps.config.masterKey, merchantId, q, {
    // A list: the read pool.
    fetch: (before, limit) =>
      repo.findSubscriptionPage(deps.readDb, {
        merchantId,
        storeId: q.storeId,
        customerId: q.customerId,
        status: q.status,
        from: q.from,
        to: q.to,
        before,
        limit,
      }),
    view: (rows) => rows.map(subscriptionRowToSubscription),
    position: byCreatedAt,
  })
}

// Charges are ordered by (cycle, attempt) within one subscription: the cursor names the
// subscription (its id is the merchant's alone) and that position.
const CHARGES_CURSOR = signedCursor<{ cycle: number; attempt: number }>(
  'subscription-charges',
  'kurus/subscriptions/charges',
  {
    write: (at) => ({ c: at.cycle, a: at.attempt }),
    read: ({ c, a }) =>
      typeof c === 'number' &&
      typeof a === 'number' &&
      Number.isSafeInteger(c) &&
      Number.isSafeInteger(a)
        ? { cycle: c, attempt: a }
        : undefined,
  },
)

/** Every charge attempt of the subscription, newest first (cycle, then attempt). */
export async function listSubscriptionCharges(
  deps: Deps,
  merchantId: string,
  subscriptionId: string,
  q: { limit: number; cursor?: string | undefined },
): Promise<{ items: SubscriptionCharge[]; nextCursor: string | null }> {
  assert(Number.isInteger(q.limit) && q.limit >= 1 && q.limit <= CHARGES_LIMIT_MAX, 'limit')
  await loadRow(deps, merchantId, subscriptionId)
  return CHARGES_CURSOR.page(deps.config.masterKey, { s: subscriptionId }, q, {
    fetch: (before, limit) =>
      repo.findChargePage(deps.db, { merchantId, subscriptionId, before, limit }),
    view: (rows) => rows.map(chargeRowToCharge),
    position: (row) => ({ cycle: row.cycle_number, attempt: row.attempt }),
  })
}
