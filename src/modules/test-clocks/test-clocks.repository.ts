import type { Db, Tx } from '../../database.ts'
import type { TestClockRow } from './test-clocks.table.ts'

// SQL of the sandbox test clocks (docs/decisions/0031-test-clocks.md). Every lookup names
// the merchant, except the time read for an object that already names its clock.

export async function insertTestClock(tx: Tx, row: TestClockRow): Promise<void> {
  await tx.insertInto('test_clocks').values(row).execute()
}

export function findTestClock(
  db: Db,
  merchantId: string,
  id: string,
): Promise<TestClockRow | undefined> {
  return db
    .selectFrom('test_clocks')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .where('id', '=', id)
    .executeTakeFirst()
}

export function lockTestClock(
  tx: Tx,
  merchantId: string,
  id: string,
): Promise<TestClockRow | undefined> {
  return tx
    .selectFrom('test_clocks')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .where('id', '=', id)
    .forUpdate()
    .executeTakeFirst()
}

/** The time an object on this clock lives at; undefined once the clock is deleted. */
export async function findClockTime(db: Db, id: string): Promise<Date | undefined> {
  const row = await db
    .selectFrom('test_clocks')
    .select('frozen_time')
    .where('id', '=', id)
    .executeTakeFirst()
  return row?.frozen_time
}

export async function countTestClocks(db: Db, merchantId: string): Promise<number> {
  const row = await db
    .selectFrom('test_clocks')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('merchant_id', '=', merchantId)
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

/** Newest first; a merchant has at most TEST_CLOCKS_MAX of them, so one page holds all. */
export function findTestClocks(db: Db, merchantId: string, limit: number): Promise<TestClockRow[]> {
  return db
    .selectFrom('test_clocks')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute()
}

export async function updateTestClock(
  db: Db,
  id: string,
  patch: { frozen_time?: Date; status?: TestClockRow['status']; updated_at: Date },
): Promise<void> {
  await db.updateTable('test_clocks').set(patch).where('id', '=', id).execute()
}

export async function deleteTestClock(tx: Tx, id: string): Promise<void> {
  await tx.deleteFrom('test_clocks').where('id', '=', id).execute()
}
