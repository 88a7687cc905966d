import type { Deps } from '../../database.ts'
import { assert } from '../../platform/assert.ts'
import { transact } from '../../platform/db/transaction.ts'
import { validationError } from '../../platform/errors.ts'
import { newId } from '../../platform/ids.ts'
import { renewClockDueSubscriptions, STALE_CLAIM_MS } from './renewals.service.ts'
import { subscriptionsError } from './subscriptions.errors.ts'
import { cancelRow } from './subscriptions.service.ts'
import type { TestClockRow, TestClockStatus } from './subscriptions.table.ts'
import * as repo from './test-clocks.repository.ts'

// Sandbox test clocks (docs/decisions/0031-test-clocks.md), after Stripe's: a clock holds a
// frozen time; subscriptions created on it live at that time; advancing it runs, in the
// order they fall due, every renewal and dunning retry up to the new time, each at the
// clock time of its due moment. The real-time engine never claims a subscription on a clock.

const DAY_MS = 24 * 60 * 60 * 1000
/** At most this many clocks per merchant: a list is then one page. */
export const TEST_CLOCKS_MAX = 100
/** One advance moves at most two years (a yearly subscription's two renewals). */
export const ADVANCE_MS_MAX = 731 * DAY_MS
/**
 * Due moments one advance runs at most (a daily subscription over two years is 731). An
 * advance that reaches the bound stops there: the clock's frozenTime says where it got to.
 */
export const ADVANCE_STEPS_MAX = 2000

export interface TestClock {
  id: string
  merchantId: string
  name: string | null
  frozenTime: Date
  status: TestClockStatus
  createdAt: Date
}

function toTestClock(row: TestClockRow): TestClock {
  return {
    id: row.id,
    merchantId: row.merchant_id,
    name: row.name,
    frozenTime: row.frozen_time,
    status: row.status,
    createdAt: row.created_at,
  }
}

/**
 * An advance whose process died leaves the clock `advancing`; each step touches updated_at,
 * so one untouched for STALE_CLAIM_MS of wall time is over and the clock may move again.
 */
function isAdvancing(deps: Deps, row: TestClockRow): boolean {
  return (
    row.status === 'advancing' &&
    deps.clock.now().getTime() - row.updated_at.getTime() < STALE_CLAIM_MS
  )
}

export async function createTestClock(
  deps: Deps,
  merchantId: string,
  input: { frozenTime: Date; name?: string | undefined },
): Promise<TestClock> {
  if ((await repo.countTestClocks(deps.db, merchantId)) >= TEST_CLOCKS_MAX) {
    throw subscriptionsError('test_clocks_limit')
  }
  const now = deps.clock.now()
  const row: TestClockRow = {
    id: newId('clk'),
    merchant_id: merchantId,
    name: input.name ?? null,
    frozen_time: input.frozenTime,
    status: 'ready',
    created_at: now,
    updated_at: now,
  }
  await transact(deps.db, (tx) => repo.insertTestClock(tx, row))
  return toTestClock(row)
}

export async function getTestClock(deps: Deps, merchantId: string, id: string): Promise<TestClock> {
  const row = await repo.findTestClock(deps.db, merchantId, id)
  if (!row) throw subscriptionsError('test_clock_not_found')
  return toTestClock(row)
}

export async function listTestClocks(deps: Deps, merchantId: string): Promise<TestClock[]> {
  return (await repo.findTestClocks(deps.db, merchantId, TEST_CLOCKS_MAX)).map(toTestClock)
}

/**
 * Deletes the clock and ends what lives on it, as Stripe does: its subscriptions that have
 * not ended are cancelled now (at the clock's time, `subscription.cancelled`), in the same
 * transaction. 409 while it advances or while one of its charges is at the acquirer.
 */
export async function deleteTestClock(deps: Deps, merchantId: string, id: string): Promise<void> {
  await transact(deps.db, async (tx) => {
    const clock = await repo.lockTestClock(tx, merchantId, id)
    if (!clock) throw subscriptionsError('test_clock_not_found')
    if (isAdvancing(deps, clock)) throw subscriptionsError('test_clock_advancing')
    for (const row of await repo.lockLiveClockSubscriptions(tx, id)) {
      await cancelRow(
        tx,
        row,
        { atPeriodEnd: false, reason: 'test clock deleted', by: 'merchant' },
        clock.frozen_time,
      )
    }
    await repo.deleteTestClock(tx, id)
  })
}

/** Marks the clock `advancing` after checking the move: forward, at most ADVANCE_MS_MAX. */
async function startAdvance(
  deps: Deps,
  merchantId: string,
  id: string,
  to: Date,
): Promise<TestClockRow> {
  return transact(deps.db, async (tx) => {
    const clock = await repo.lockTestClock(tx, merchantId, id)
    if (!clock) throw subscriptionsError('test_clock_not_found')
    if (isAdvancing(deps, clock)) throw subscriptionsError('test_clock_advancing')
    const from = clock.frozen_time.getTime()
    if (to.getTime() <= from) {
      throw validationError('frozenTime', "must be after the clock's frozenTime")
    }
    if (to.getTime() - from > ADVANCE_MS_MAX) {
      throw validationError('frozenTime', 'must be at most two years after the clock')
    }
    const now = deps.clock.now()
    await repo.updateTestClock(tx, id, { status: 'advancing', updated_at: now })
    return { ...clock, status: 'advancing', updated_at: now }
  })
}

/**
 * Moves the clock forward to `to`. Each due moment in order: the clock is set to it, then
 * the clock's subscriptions due by then are charged (renewal or dunning retry) exactly as
 * the real-time engine would, at that time — their next due dates and retries are measured
 * from it, so they come round again within the same advance. The request returns when the
 * clock is `ready` at `to` (or where an error or ADVANCE_STEPS_MAX stopped it).
 */
export async function advanceTestClock(
  deps: Deps,
  merchantId: string,
  id: string,
  to: Date,
): Promise<TestClock> {
  const clock = await startAdvance(deps, merchantId, id, to)
  let at = clock.frozen_time
  try {
    for (let step = 0; ; step++) {
      const due = await repo.findNextClockDue(deps.db, id, to)
      if (due === undefined) {
        at = to
        break
      }
      if (step >= ADVANCE_STEPS_MAX) break
      if (due.getTime() > at.getTime()) at = due
      await repo.updateTestClock(deps.db, id, { frozen_time: at, updated_at: deps.clock.now() })
      await renewClockDueSubscriptions(deps, id, at)
    }
  } finally {
    await repo.updateTestClock(deps.db, id, {
      frozen_time: at,
      status: 'ready',
      updated_at: deps.clock.now(),
    })
  }
  const after = await repo.findTestClock(deps.db, merchantId, id)
  assert(after !== undefined, 'an advancing clock is not deleted')
  return toTestClock(after)
}
