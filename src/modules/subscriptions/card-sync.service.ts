import type { Deps } from '../../database.ts'
import { transact } from '../../platform/db/transaction.ts'
import { isNotFound } from '../../platform/errors.ts'
import { getDefaultCard, type CustomerCard } from '../customers/index.ts'
import { getSessionByTransactionId } from '../payments/index.ts'
import * as repo from './subscriptions.repository.ts'
import type { SubscriptionPatch, SubscriptionRow } from './subscriptions.table.ts'
import { emitSubscriptionEvent } from './subscription-view.ts'

// How a subscription picks up the card its buyer entered on the portal. The portal mints a
// `card_update_only` session `<subscriptionId>:card:<n>`; when the hosted checkout completes
// it, the new card is attached to the customer as the default card. The subscription notices
// lazily — on every read of it (merchant GET, portal), before each charge, and in the renewal
// reconciler's sweep — by looking at session n once it is no longer active:
// completed → take the customer's default card; expired or cancelled → nothing to take.
// Either way session n is then synced and never looked at again.

export function cardSessionTransactionId(subscriptionId: string, n: number): string {
  return `${subscriptionId}:card:${n}`
}

async function defaultCardOf(deps: Deps, row: SubscriptionRow): Promise<CustomerCard | undefined> {
  try {
    return await getDefaultCard(deps, row.merchant_id, row.customer_id)
  } catch (error) {
    // A deleted customer has no cards to take (its tokens were revoked with it).
    if (isNotFound(error)) return undefined
    throw error
  }
}

/** The row with its latest finished update-card session taken in (the row itself if none). */
export async function syncSubscriptionCard(
  deps: Deps,
  row: SubscriptionRow,
): Promise<SubscriptionRow> {
  const seq = row.card_session_seq
  if (seq <= row.card_synced_seq) return row
  const session = await getSessionByTransactionId(
    deps,
    row.merchant_id,
    cardSessionTransactionId(row.id, seq),
  )
  if (session?.status === 'active') return row
  const card = session?.status === 'completed' ? await defaultCardOf(deps, row) : undefined
  const now = deps.clock.now()
  return transact(deps.db, async (tx) => {
    const changed = card !== undefined && card.cardToken !== row.card_token
    const patch: SubscriptionPatch = { card_synced_seq: seq, updated_at: now }
    if (changed) {
      patch.card_token = card.cardToken
      patch.card_last4 = card.last4
      patch.card_brand = card.brand
    }
    // Conditional on session n being still unsynced: of two concurrent syncs one writes.
    const updated = await repo.updateSubscriptionCard(tx, row.id, seq, patch)
    if (!updated) return (await repo.findSubscriptionById(tx, row.merchant_id, row.id)) ?? row
    if (!changed) return updated
    // A subscription in dunning retries with the new card at the next tick instead of
    // waiting out the retry delay: the old card is why it is past due.
    const current =
      updated.status === 'past_due'
        ? await repo.updateSubscription(tx, updated.id, updated.status, { next_charge_at: now })
        : updated
    await emitSubscriptionEvent(tx, current, 'subscription.card_updated', now, {
      sessionId: session?.id ?? null,
    })
    return current
  })
}

/** The reconciler's sweep: subscriptions whose update-card session finished unnoticed. */
export async function syncPendingCards(deps: Deps, limit = 200): Promise<number> {
  const rows = await repo.findCardSyncCandidates(deps.db, limit)
  let synced = 0
  for (const row of rows) {
    const after = await syncSubscriptionCard(deps, row)
    if (after.card_synced_seq > row.card_synced_seq) synced++
  }
  return synced
}
