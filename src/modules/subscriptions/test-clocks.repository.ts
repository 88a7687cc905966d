import type { Db, Tx } from '../../database.ts'
import { SUBSCRIPTIONS, type SubscriptionRow } from './subscriptions.table.ts'

// The subscriptions side of the sandbox test clocks (docs/decisions/0031-test-clocks.md):
// the clock's subscriptions, found by the clock's id (its owner checked by the test-clocks
// module first).

const CHARGEABLE = SUBSCRIPTIONS.sourcesOf('charging')

/** The earliest moment at or before `upTo` when a subscription on the clock is due. */
export async function findNextClockDue(
  db: Db,
  clockId: string,
  upTo: Date,
): Promise<Date | undefined> {
  const row = await db
    .selectFrom('subscriptions')
    .select('next_charge_at')
    .where('test_clock_id', '=', clockId)
    .where('status', 'in', CHARGEABLE)
    .where('next_charge_at', '<=', upTo)
    .orderBy('next_charge_at')
    .limit(1)
    .executeTakeFirst()
  return row?.next_charge_at ?? undefined
}

/** The clock's subscriptions that have not ended, locked (deleting the clock ends them). */
export function lockLiveClockSubscriptions(tx: Tx, clockId: string): Promise<SubscriptionRow[]> {
  return tx
    .selectFrom('subscriptions')
    .selectAll()
    .where('test_clock_id', '=', clockId)
    .where('status', 'not in', ['cancelled', 'expired'])
    .orderBy('id')
    .forUpdate()
    .execute()
}
