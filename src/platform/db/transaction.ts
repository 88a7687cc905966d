import { AsyncLocalStorage } from 'node:async_hooks'
import { sql, type Kysely, type Transaction } from 'kysely'

const RETRYABLE = new Set(['40001', '40P01']) // serialization_failure, deadlock_detected
const ATTEMPTS_MAX = 3

function sqlState(error: unknown): string | undefined {
  if (typeof error === 'object' && error !== null && 'code' in error) {
    const code = error.code
    return typeof code === 'string' ? code : undefined
  }
  return undefined
}

export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  if (sqlState(error) !== '23505') return false
  if (!constraint) return true
  return (error as { constraint?: string }).constraint === constraint
}

/**
 * A write that must commit with an action's own transaction (an audit entry: decision 0036):
 * `withRider` runs the action with it pending, and the first transaction the action opens
 * through `transact` writes it before its commit. Platform knows nothing of what is written;
 * the door that calls the action (dashboard pages, dashboard API, operator API) says.
 */
interface Rider {
  write: (tx: Transaction<unknown>) => Promise<void>
  committed: boolean
}
const riders = new AsyncLocalStorage<Rider>()

/**
 * Runs `action` with `write` riding on its first transaction. Whether it rode: `committed`
 * is false when the action opened none (a single-statement write, or nothing changed): the
 * caller then writes it itself.
 */
export async function withRider<T>(
  write: (tx: Transaction<unknown>) => Promise<void>,
  action: () => Promise<T>,
): Promise<{ value: T; committed: boolean }> {
  const rider: Rider = { write, committed: false }
  const value = await riders.run(rider, action)
  return { value, committed: rider.committed }
}

/**
 * Runs `work` with no rider: what an action does first that is not the action (a lazy expiry,
 * a captured payment taken in, a session cancelled before its invoice) commits on its own,
 * and the rider waits for the action's own transaction.
 */
export function withoutRider<T>(work: () => Promise<T>): Promise<T> {
  if (!riders.getStore()) return work()
  return riders.run({ write: async () => {}, committed: true }, work)
}

/**
 * The one way services open a transaction. A deadlock or serialization failure is retried
 * (at most 3 attempts) because the whole callback is re-run from a clean state; any other
 * error rolls back and propagates.
 */
export async function transact<DB, T>(db: Kysely<DB>, fn: (tx: Transaction<DB>) => Promise<T>) {
  const rider = riders.getStore()
  for (let attempt = 1; ; attempt++) {
    try {
      if (!rider || rider.committed) return await db.transaction().execute(fn)
      const result = await db.transaction().execute(async (tx) => {
        const value = await fn(tx)
        await rider.write(tx as Transaction<unknown>)
        return value
      })
      rider.committed = true
      return result
    } catch (error) {
      const state = sqlState(error)
      if (attempt >= ATTEMPTS_MAX || state === undefined || !RETRYABLE.has(state)) throw error
    }
  }
}

/**
 * Add to a single statement's RETURNING (`.returning(ASYNC_COMMIT)`) so that its own implicit
 * transaction commits without waiting for the WAL flush: `set_config(…, true)` is evaluated
 * while the statement runs and the setting is read at its commit. Only for a write that a
 * later synchronous commit is certain to flush before anything outside the database acts on
 * it — the WAL is written in order, so that commit makes this one durable too — and whose loss
 * in a server crash before then leaves nothing acted upon (docs/performance.md names each use).
 */
export const ASYNC_COMMIT = sql<string>`set_config('synchronous_commit', 'off', true)`.as(
  'async_commit',
)
