import type { Db, Deps } from '../../database.ts'
import { findClockTime } from './test-clocks.repository.ts'

/**
 * The Deps a subscription's use cases run with: for one on a sandbox test clock, a clock
 * that answers the test clock's frozen time, so its charge, payment, ledger entries and
 * events are dated as if that time had come (docs/decisions/0031-test-clocks.md). Once the
 * clock is deleted its subscriptions have ended; anything later runs at wall time.
 */
export async function depsOnClock(deps: Deps, testClockId: string | null): Promise<Deps> {
  if (testClockId === null) return deps
  const at = await findClockTime(deps.db, testClockId)
  if (at === undefined) return deps
  return { ...deps, clock: { now: () => new Date(at) } }
}

/** The same time inside a transaction (`db` is the transaction: PGlite has one session). */
export async function nowOnClock(db: Db, testClockId: string | null, wall: Date): Promise<Date> {
  if (testClockId === null) return wall
  return (await findClockTime(db, testClockId)) ?? wall
}
