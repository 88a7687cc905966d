import type { Deps } from '../../database.ts'
import { transact } from '../../platform/db/transaction.ts'
import { expireClockChargebacks, nextChargebackDeadlineOnClock } from '../disputes/index.ts'
import { expireClockAuthorizations, nextAuthorizationExpiryOnClock } from '../payments/index.ts'
import {
  finishTestClockAdvance,
  lockTestClockForDelete,
  removeTestClock,
  setTestClockTime,
  startTestClockAdvance,
  type TestClock,
} from '../test-clocks/index.ts'
import { renewClockDueSubscriptions, resumeClockCharges } from './renewals.service.ts'
import { cancelRow } from './subscriptions.service.ts'
import * as repo from './test-clocks.repository.ts'

// The advance of a sandbox test clock (docs/decisions/0031-test-clocks.md): the test-clocks
// module owns the clock and its time; this drives what happens as it passes, because the
// subscriptions are what lives on a clock (their payments and chargebacks with them).

/**
 * Due moments one advance runs at most (a daily subscription over two years is 731). An
 * advance that reaches the bound stops there: the clock's frozenTime says where it got to.
 */
export const ADVANCE_STEPS_MAX = 2000

/** Payments' authorizations the clock expires per step (a step repeats while any is due). */
const EXPIRY_BATCH = 200

function earliest(...moments: (Date | undefined)[]): Date | undefined {
  let first: Date | undefined
  for (const m of moments) {
    if (m !== undefined && (first === undefined || m.getTime() < first.getTime())) first = m
  }
  return first
}

/**
 * Moves the clock forward to `to`. Each due moment in order: the clock is set to it, then
 * the clock's subscriptions due by then are charged (renewal or dunning retry) exactly as
 * the real-time engine would, at that time — their next due dates and retries are measured
 * from it, so they come round again within the same advance — and the chargebacks of their
 * payments whose evidence deadline has come are closed as expired, and the clock's open
 * authorizations (charges of customers on the clock) past the TTL expire. Answers when the clock is
 * `ready` at `to` (or where an error or ADVANCE_STEPS_MAX stopped it).
 */
export async function advanceTestClock(
  deps: Deps,
  merchantId: string,
  id: string,
  to: Date,
): Promise<TestClock> {
  const clock = await startTestClockAdvance(deps, merchantId, id, to)
  let at = clock.frozenTime
  try {
    // What an earlier advance left unfinished (or awaiting the acquirer) ends first, at the
    // clock's time: every claim on the clock is older than this advance.
    await resumeClockCharges(deps, id, at, new Date(at.getTime() + 1))
    for (let step = 0; ; step++) {
      const due = earliest(
        await repo.findNextClockDue(deps.db, id, to),
        await nextChargebackDeadlineOnClock(deps, id, to),
        await nextAuthorizationExpiryOnClock(deps, id, to),
      )
      if (due === undefined) {
        at = to
        break
      }
      if (step >= ADVANCE_STEPS_MAX) break
      if (due.getTime() > at.getTime()) at = due
      await setTestClockTime(deps, id, at)
      await renewClockDueSubscriptions(deps, id, at)
      await expireClockChargebacks(deps, id, at)
      await expireClockAuthorizations(deps, id, at, EXPIRY_BATCH)
    }
  } catch (error) {
    // The clock is left ready where it got to, not `advancing`.
    await finishTestClockAdvance(deps, merchantId, id, at)
    throw error
  }
  return finishTestClockAdvance(deps, merchantId, id, at)
}

/**
 * Deletes the clock and ends what lives on it, as Stripe does: its subscriptions that have
 * not ended are cancelled now (at the clock's time, `subscription.cancelled`), in the same
 * transaction. 409 while it advances or while one of its charges is at the acquirer.
 */
export async function deleteTestClock(deps: Deps, merchantId: string, id: string): Promise<void> {
  await transact(deps.db, async (tx) => {
    const clock = await lockTestClockForDelete(tx, deps, merchantId, id)
    for (const row of await repo.lockLiveClockSubscriptions(tx, id)) {
      await cancelRow(
        tx,
        row,
        { atPeriodEnd: false, reason: 'test clock deleted', by: 'merchant' },
        clock.frozenTime,
      )
    }
    await removeTestClock(tx, id)
  })
}
