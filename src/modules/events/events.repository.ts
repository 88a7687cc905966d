import type { Insertable } from 'kysely'
import type { Db, Tx } from '../../database.ts'
import type { EventRow, EventsTable } from './events.table.ts'

export async function findLastSequence(tx: Tx, resourceId: string): Promise<number> {
  const row = await tx
    .selectFrom('events')
    .select((eb) => eb.fn.max('sequence').as('seq'))
    .where('resource_id', '=', resourceId)
    .executeTakeFirst()
  return row?.seq ?? 0
}

export async function insertEvent(tx: Tx, row: Insertable<EventsTable>): Promise<void> {
  await tx.insertInto('events').values(row).execute()
}

export function findEventsByResource(
  db: Db,
  merchantId: string,
  resourceId: string,
): Promise<EventRow[]> {
  return db
    .selectFrom('events')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .where('resource_id', '=', resourceId)
    .orderBy('sequence')
    .execute()
}
