import { sql, type Insertable } from 'kysely'
import type { Db, Tx } from '../../database.ts'
import type { EventRow, EventsTable } from './events.table.ts'

/** Inserts the event as its resource's next in sequence: one statement, no read first. */
export async function insertNextEvent(
  tx: Tx,
  row: Omit<Insertable<EventsTable>, 'sequence'>,
): Promise<void> {
  await sql`
    insert into events (id, merchant_id, store_id, type, resource_type, resource_id, sequence,
      data, callback_url, created_at)
    select ${row.id}, ${row.merchant_id}, ${row.store_id}, ${row.type}, ${row.resource_type},
      ${row.resource_id}, coalesce(max(sequence), 0) + 1, ${row.data}::jsonb,
      ${row.callback_url ?? null}, ${row.created_at}::timestamptz
    from events where resource_id = ${row.resource_id}`.execute(tx)
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

export function findEventById(
  db: Db,
  merchantId: string,
  eventId: string,
): Promise<EventRow | undefined> {
  return db
    .selectFrom('events')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .where('id', '=', eventId)
    .executeTakeFirst()
}

export interface EventPageQuery {
  merchantId: string
  type: string | undefined
  resourceId: string | undefined
  before: { createdAt: Date; id: string } | undefined
  limit: number
}

/** Newest first; the keyset (created_at, id) continues after `before`. */
export function findEventsPage(db: Db, q: EventPageQuery): Promise<EventRow[]> {
  let query = db.selectFrom('events').selectAll().where('merchant_id', '=', q.merchantId)
  if (q.type !== undefined) query = query.where('type', '=', q.type)
  if (q.resourceId !== undefined) query = query.where('resource_id', '=', q.resourceId)
  const before = q.before
  if (before) {
    query = query.where((eb) =>
      eb(eb.refTuple('created_at', 'id'), '<', eb.tuple(before.createdAt, before.id)),
    )
  }
  return query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(q.limit).execute()
}

/**
 * Locks up to `limit` events not yet fanned out, oldest first. SKIP LOCKED lets several
 * dispatchers (worker processes) share the backlog without waiting on each other.
 */
export function lockUndispatchedEvents(tx: Tx, limit: number): Promise<EventRow[]> {
  return tx
    .selectFrom('events')
    .selectAll()
    .where('dispatched_at', 'is', null)
    .orderBy('created_at')
    .orderBy('id')
    .limit(limit)
    .forUpdate()
    .skipLocked()
    .execute()
}

export function lockUndispatchedEventById(tx: Tx, eventId: string): Promise<EventRow | undefined> {
  return tx
    .selectFrom('events')
    .selectAll()
    .where('id', '=', eventId)
    .where('dispatched_at', 'is', null)
    .forUpdate()
    .skipLocked()
    .executeTakeFirst()
}

export async function markEventsDispatched(tx: Tx, ids: string[], at: Date): Promise<void> {
  if (ids.length === 0) return
  await tx.updateTable('events').set({ dispatched_at: at }).where('id', 'in', ids).execute()
}

/** How many events of each type each resource has (the audit; whole-table, not a request). */
export function countEventsByResource(db: Db, resourceIds: readonly string[]) {
  if (resourceIds.length === 0) return Promise.resolve([])
  return db
    .selectFrom('events')
    .select(['resource_id', 'type', (eb) => eb.fn.countAll<number>().as('count')])
    .where('resource_id', 'in', resourceIds)
    .groupBy(['resource_id', 'type'])
    .execute()
}

/** The oldest event not yet fanned out (events_undispatched_idx), for /metrics. */
export function findOldestUndispatchedEvent(db: Db): Promise<{ created_at: Date } | undefined> {
  return db
    .selectFrom('events')
    .select('created_at')
    .where('dispatched_at', 'is', null)
    .orderBy('created_at')
    .limit(1)
    .executeTakeFirst()
}
