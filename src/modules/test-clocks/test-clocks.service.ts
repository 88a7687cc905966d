import type { Db, Deps, Tx } from '../../database.ts'
import { transact } from '../../platform/db/transaction.ts'
import { validationError } from '../../platform/errors.ts'
import { newId } from '../../platform/ids.ts'
import { testClocksError } from './test-clocks.errors.ts'
import * as repo from './test-clocks.repository.ts'
import type { TestClockRow, TestClockStatus } from './test-clocks.table.ts'

// Sandbox test clocks (docs/decisions/0031-test-clocks.md), after Stripe's: a clock holds a
// frozen time, and the objects created on it (subscriptions, their payments and chargebacks)
// live at that time. This module owns the clocks and their time; the advance itself — what
// runs as the clock passes — is driven by subscriptions (advanceTestClock), which calls the
// modules whose objects are on the clock.

const DAY_MS = 24 * 60 * 60 * 1000
/** At most this many clocks per merchant: a list is then one page. */
export const TEST_CLOCKS_MAX = 100
/** One advance moves at most two years (a yearly subscription's two renewals). */
export const ADVANCE_MS_MAX = 731 * DAY_MS
/**
 * An advance whose process died leaves the clock `advancing`; each step touches updated_at,
 * so one untouched this long (wall time) is over and the clock may move again.
 */
const ADVANCE_STALE_MS = 5 * 60 * 1000

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

function isAdvancing(deps: Deps, row: TestClockRow): boolean {
  return (
    row.status === 'advancing' &&
    deps.clock.now().getTime() - row.updated_at.getTime() < ADVANCE_STALE_MS
  )
}

export async function createTestClock(
  deps: Deps,
  merchantId: string,
  input: { frozenTime: Date; name?: string | undefined },
): Promise<TestClock> {
  if ((await repo.countTestClocks(deps.db, merchantId)) >= TEST_CLOCKS_MAX) {
    throw testClocksError('test_clocks_limit')
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
  if (!row) throw testClocksError('test_clock_not_found')
  return toTestClock(row)
}

export async function listTestClocks(deps: Deps, merchantId: string): Promise<TestClock[]> {
  return (await repo.findTestClocks(deps.db, merchantId, TEST_CLOCKS_MAX)).map(toTestClock)
}

/**
 * Deleting, step 1 (inside the caller's transaction): the clock locked, 404 when it is not
 * the merchant's, 409 while it advances. The caller ends what lives on it at the returned
 * time, then calls removeTestClock in the same transaction.
 */
export async function lockTestClockForDelete(
  tx: Tx,
  deps: Deps,
  merchantId: string,
  id: string,
): Promise<TestClock> {
  const clock = await repo.lockTestClock(tx, merchantId, id)
  if (!clock) throw testClocksError('test_clock_not_found')
  if (isAdvancing(deps, clock)) throw testClocksError('test_clock_advancing')
  return toTestClock(clock)
}

export function removeTestClock(tx: Tx, id: string): Promise<void> {
  return repo.deleteTestClock(tx, id)
}

/** Advancing, step 1: checks the move (forward, at most ADVANCE_MS_MAX) and marks it. */
export async function startTestClockAdvance(
  deps: Deps,
  merchantId: string,
  id: string,
  to: Date,
): Promise<TestClock> {
  return transact(deps.db, async (tx) => {
    const clock = await repo.lockTestClock(tx, merchantId, id)
    if (!clock) throw testClocksError('test_clock_not_found')
    if (isAdvancing(deps, clock)) throw testClocksError('test_clock_advancing')
    const from = clock.frozen_time.getTime()
    if (to.getTime() <= from) {
      throw validationError('frozenTime', "must be after the clock's frozenTime")
    }
    if (to.getTime() - from > ADVANCE_MS_MAX) {
      throw validationError('frozenTime', 'must be at most two years after the clock')
    }
    const now = deps.clock.now()
    await repo.updateTestClock(tx, id, { status: 'advancing', updated_at: now })
    return toTestClock({ ...clock, status: 'advancing', updated_at: now })
  })
}

/** Advancing, each step: the clock now reads `at` (what runs next runs at that time). */
export function setTestClockTime(deps: Deps, id: string, at: Date): Promise<void> {
  return repo.updateTestClock(deps.db, id, { frozen_time: at, updated_at: deps.clock.now() })
}

/** Advancing, the end: the clock at `at`, ready again. */
export async function finishTestClockAdvance(
  deps: Deps,
  merchantId: string,
  id: string,
  at: Date,
): Promise<TestClock> {
  await repo.updateTestClock(deps.db, id, {
    frozen_time: at,
    status: 'ready',
    updated_at: deps.clock.now(),
  })
  return getTestClock(deps, merchantId, id)
}

/** The clock of `merchantId`'s that a new object is created on: its time (404 if not theirs). */
export async function testClockTime(deps: Deps, merchantId: string, id: string): Promise<Date> {
  return (await getTestClock(deps, merchantId, id)).frozenTime
}

/**
 * The Deps an object's use cases run with: for one on a test clock, a clock that answers the
 * test clock's time, so its charges, ledger entries and events are dated as if that time had
 * come. Once the clock is deleted its objects have ended; anything later runs at wall time.
 */
export async function depsOnClock(deps: Deps, testClockId: string | null): Promise<Deps> {
  if (testClockId === null) return deps
  const at = await repo.findClockTime(deps.db, testClockId)
  if (at === undefined) return deps
  return { ...deps, clock: { now: () => new Date(at) } }
}

/** The same time inside a transaction (`db` is the transaction: PGlite has one session). */
export async function nowOnClock(db: Db, testClockId: string | null, wall: Date): Promise<Date> {
  if (testClockId === null) return wall
  return (await repo.findClockTime(db, testClockId)) ?? wall
}
