import type { Deps } from '../../database.ts'
import { AssertionError } from '../../platform/assert.ts'
import { transact } from '../../platform/db/transaction.ts'
import { getMerchant } from '../merchants/index.ts'
import { createSession, getSessionByTransactionId, type Session } from '../payments/index.ts'
import { cardSessionTransactionId, syncSubscriptionCard } from './card-sync.service.ts'
import { subscriptionsError } from './subscriptions.errors.ts'
import * as repo from './subscriptions.repository.ts'
import { cancelRow, publicHashDigest } from './subscriptions.service.ts'
import type { SubscriptionRow } from './subscriptions.table.ts'
import { subscriptionRowToSubscription, type Subscription } from './subscription-view.ts'

// The buyer's portal. The publicHash in the path is the bearer (as a payment id is for the
// public status): looked up by its SHA-256 across merchants, so a wrong or stale hash is a
// plain 404 that says nothing about which subscriptions exist.

export interface PortalView {
  publicHash: string
  merchantName: string
  subscription: Subscription
}

async function rowByHash(deps: Deps, publicHash: string): Promise<SubscriptionRow> {
  const row = await repo.findSubscriptionByHashDigest(deps.db, publicHashDigest(publicHash))
  if (!row) throw subscriptionsError('subscription_not_found')
  return row
}

/** What the buyer sees; a finished update-card session is taken in first. */
export async function getPortalView(deps: Deps, publicHash: string): Promise<PortalView> {
  const row = await syncSubscriptionCard(deps, await rowByHash(deps, publicHash))
  const merchant = await getMerchant(deps, row.merchant_id)
  return {
    publicHash,
    merchantName: merchant.name,
    subscription: subscriptionRowToSubscription(row),
  }
}

/** The buyer cancels; at the end of the paid period unless they ask for now. */
export async function cancelFromPortal(
  deps: Deps,
  publicHash: string,
  atPeriodEnd: boolean,
): Promise<Subscription> {
  const found = await rowByHash(deps, publicHash)
  const row = await transact(deps.db, async (tx) => {
    const current = await repo.lockSubscription(tx, found.merchant_id, found.id)
    if (!current) throw subscriptionsError('subscription_not_found')
    return cancelRow(tx, current, { atPeriodEnd, by: 'buyer' }, deps.clock.now())
  })
  return subscriptionRowToSubscription(row)
}

/**
 * A `card_update_only` checkout session for the subscription's customer: session n is
 * `<subscriptionId>:card:<n>` and returns to the portal page. While session n is active it
 * is handed out again (the session's transactionId fence makes concurrent mints return the
 * same one); once it has finished, its outcome is taken in and session n + 1 is minted.
 */
export async function mintUpdateCardSession(deps: Deps, publicHash: string): Promise<Session> {
  let row = await syncSubscriptionCard(deps, await rowByHash(deps, publicHash))
  if (row.status === 'cancelled' || row.status === 'expired') {
    throw subscriptionsError('subscription_ended')
  }
  const current = row.card_session_seq
  if (current > 0) {
    const open = await getSessionByTransactionId(
      deps,
      row.merchant_id,
      cardSessionTransactionId(row.id, current),
    )
    if (open?.status === 'active') return open
  }
  // Normally one round. More only when a session n was made but its number not recorded
  // (a crash in between): the fence then hands back that finished session, so it is taken
  // in and n + 1 is tried.
  for (let round = 0; round < 3; round++) {
    const n = row.card_session_seq + 1
    const { session } = await createSession(
      deps,
      { merchantId: row.merchant_id, storeId: row.store_id },
      {
        transactionId: cardSessionTransactionId(row.id, n),
        currency: 'TRY',
        mode: 'card_update_only',
        customerId: row.customer_id,
        returnUrl: `${deps.config.checkoutUrl}/subscription/${publicHash}`,
        metadata: { subscriptionId: row.id },
      },
    )
    await repo.raiseCardSessionSeq(deps.db, row.id, n)
    if (session.status === 'active') return session
    row = await syncSubscriptionCard(deps, await rowByHash(deps, publicHash))
  }
  throw new AssertionError('no update-card session could be minted in three rounds')
}
