import type { Deps } from '../../database.ts'
import { assert } from '../../platform/assert.ts'
import { transact } from '../../platform/db/transaction.ts'
import { failpoint } from '../../platform/failpoints.ts'
import { recordEvent } from '../events/index.ts'
import { postPayoutFailed, postPayoutPaid } from '../ledger/index.ts'
import * as repo from './payouts.repository.ts'
import type { PayoutRow, PayoutStatus } from './payouts.table.ts'
import { sandboxRail, type PayoutRailPort } from './sandbox-rail.ts'
import { eventData } from './payouts.service.ts'

// Payout processing: one payout through the rail (pending → processing → paid | failed, each
// step a conditional update), and the reconciler that finishes payouts whose job was lost.

/**
 * Takes one payout through the rail: pending → processing (commit) → send → paid | failed
 * (commit, with its ledger legs and event). Each step is a conditional update under the row
 * lock, so a retried job or a second worker finds the step done and moves on; the rail is
 * keyed by the payout id, so sending twice is answered the same. Returns the final status.
 */
export async function processPayout(
  deps: Deps,
  merchantId: string,
  payoutId: string,
  rail: PayoutRailPort = sandboxRail,
): Promise<PayoutStatus | undefined> {
  const started = await transact(deps.db, async (tx) => {
    const row = await repo.lockPayoutById(tx, merchantId, payoutId)
    if (row?.status !== 'pending') return row
    const now = deps.clock.now()
    return repo.transitionPayout(tx, payoutId, 'pending', {
      status: 'processing',
      processing_at: now,
      updated_at: now,
    })
  })
  if (started?.status !== 'processing') return started?.status
  // No transaction is open across the rail call (ARCHITECTURE.md: no network I/O in a tx).
  failpoint('payout.before_rail')
  const outcome = await rail.send({
    payoutId,
    rail: started.rail,
    dest: started.dest,
    amountMinor: started.amount_minor,
  })
  failpoint('payout.after_rail')
  return transact(deps.db, async (tx) => {
    const row = await repo.lockPayoutById(tx, merchantId, payoutId)
    if (row?.status !== 'processing') return row?.status
    const now = deps.clock.now()
    let done: PayoutRow | undefined
    if (outcome.status === 'paid') {
      await postPayoutPaid(tx, { merchantId, payoutId, at: now })
      done = await repo.transitionPayout(tx, payoutId, 'processing', {
        status: 'paid',
        paid_at: now,
        rail_reference: outcome.railReference,
        updated_at: now,
      })
    } else {
      // The money goes back to the owner's available balance.
      await postPayoutFailed(tx, { merchantId, payoutId, at: now })
      done = await repo.transitionPayout(tx, payoutId, 'processing', {
        status: 'failed',
        failed_at: now,
        failure_code: outcome.failureCode,
        rail_reference: outcome.railReference,
        updated_at: now,
      })
    }
    assert(done, `payout ${payoutId} left processing under its lock`)
    await recordEvent(tx, {
      merchantId,
      storeId: done.store_id,
      type: `payout.${done.status}`,
      resourceType: 'payout',
      resourceId: payoutId,
      data: eventData(done),
      at: now,
    })
    return done.status
  })
}

// A payout whose job should long have run (pg-boss retries for minutes) was dropped.
const STALE_AFTER_MS = 10 * 60 * 1000
const STALE_BATCH = 100

/** Finishes payouts left pending or processing (a crash, a job out of retries). */
export async function reconcileStalePayouts(deps: Deps): Promise<number> {
  const before = new Date(deps.clock.now().getTime() - STALE_AFTER_MS)
  const rows = await repo.findStalePayouts(deps.db, before, STALE_BATCH)
  let moved = 0
  for (const row of rows) {
    const status = await processPayout(deps, row.merchant_id, row.id)
    if (status === 'paid' || status === 'failed') moved++
  }
  return moved
}
