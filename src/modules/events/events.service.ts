import type { Db, Deps, Tx } from '../../database.ts'
import { assert } from '../../platform/assert.ts'
import { byCreatedAt, keysetCursor } from '../../platform/cursor.ts'
import { notFound } from '../../platform/errors.ts'
import { newId } from '../../platform/ids.ts'
import type { QueryRunner } from '../../platform/jobs/queue.ts'
import * as repo from './events.repository.ts'
import type { EventRow } from './events.table.ts'

/**
 * The job a recorded event may enqueue so it is fanned out at once (the webhooks module
 * defines its handler). Without it the webhooks dispatcher finds the event on its next
 * tick: `events.dispatched_at` is the durable mark either way.
 */
export const EVENT_DISPATCH_JOB = 'webhooks.dispatch_event'

/** Anything that can enqueue a job inside the caller's transaction (deps.jobs). */
export interface EventJobs {
  enqueue(runner: QueryRunner, name: string, data: object): Promise<void>
}

export interface NewEvent {
  merchantId: string
  storeId: string | null
  /** e.g. payment.captured */
  type: string
  resourceType: string
  resourceId: string
  data: Record<string, unknown>
  /** A session's callbackUrl overrides the store's webhook URL for this resource's events. */
  callbackUrl?: string | null
  at: Date
}

export interface DomainEvent {
  id: string
  type: string
  resourceType: string
  resourceId: string
  sequence: number
  data: Record<string, unknown>
  createdAt: Date
}

/**
 * Writes an event into the outbox inside the caller's transaction, so the event exists if
 * and only if the state change commits. The caller holds the resource's row lock, which
 * makes the per-resource sequence (max + 1) race-free; the unique index backs it up.
 */
export async function recordEvent(
  tx: Tx,
  event: NewEvent,
  options: { jobs?: EventJobs } = {},
): Promise<string> {
  const id = newId('evt')
  await repo.insertNextEvent(tx, {
    id,
    merchant_id: event.merchantId,
    store_id: event.storeId,
    type: event.type,
    resource_type: event.resourceType,
    resource_id: event.resourceId,
    data: JSON.stringify(event.data),
    callback_url: event.callbackUrl ?? null,
    created_at: event.at,
  })
  if (options.jobs) await options.jobs.enqueue(tx, EVENT_DISPATCH_JOB, { eventId: id })
  return id
}

export async function eventsForResource(
  db: Db,
  merchantId: string,
  resourceId: string,
): Promise<DomainEvent[]> {
  const rows = await repo.findEventsByResource(db, merchantId, resourceId)
  return rows.map(eventRowToEvent)
}

function eventRowToEvent(r: EventRow): DomainEvent {
  return {
    id: r.id,
    type: r.type,
    resourceType: r.resource_type,
    resourceId: r.resource_id,
    sequence: r.sequence,
    data: r.data,
    createdAt: r.created_at,
  }
}

export async function getEvent(deps: Deps, merchantId: string, eventId: string) {
  const row = await repo.findEventById(deps.db, merchantId, eventId)
  if (!row) throw notFound('event')
  return eventRowToEvent(row)
}

export const EVENTS_LIMIT_MAX = 100

// The list's cursor: signed with a key of its own, names its merchant.
const EVENTS_CURSOR = keysetCursor('events', 'kurus/events/cursor')

/** The merchant's events, newest first; filters by type and resource; signed keyset cursors. */
export async function listEvents(
  deps: Deps,
  merchantId: string,
  q: { type?: string; resourceId?: string; limit: number; cursor?: string },
): Promise<{ items: DomainEvent[]; nextCursor: string | null }> {
  assert(Number.isInteger(q.limit) && q.limit >= 1 && q.limit <= EVENTS_LIMIT_MAX, 'limit')
  return EVENTS_CURSOR.page(deps.config.masterKey, merchantId, q, {
    fetch: (before, limit) =>
      repo.findEventsPage(deps.readDb, {
        merchantId,
        type: q.type,
        resourceId: q.resourceId,
        before,
        limit,
      }),
    view: (rows) => rows.map(eventRowToEvent),
    position: byCreatedAt,
  })
}

/** An event with what the dispatcher needs to route it. */
export interface DispatchableEvent extends DomainEvent {
  merchantId: string
  storeId: string | null
  callbackUrl: string | null
}

function eventRowToDispatchable(r: EventRow): DispatchableEvent {
  return {
    ...eventRowToEvent(r),
    merchantId: r.merchant_id,
    storeId: r.store_id,
    callbackUrl: r.callback_url,
  }
}

/**
 * Takes up to `limit` events not yet fanned out and marks them dispatched, inside the
 * caller's transaction: the caller writes their deliveries in the same transaction, so a
 * crash before commit leaves the events undispatched for the next run (none is lost), and
 * a commit means every delivery exists (none is fanned out twice).
 */
export async function claimEventsForDispatch(
  tx: Tx,
  limit: number,
  at: Date,
): Promise<DispatchableEvent[]> {
  const rows = await repo.lockUndispatchedEvents(tx, limit)
  await repo.markEventsDispatched(
    tx,
    rows.map((r) => r.id),
    at,
  )
  return rows.map(eventRowToDispatchable)
}

/** The same for one event (the fast path after recordEvent); undefined if already taken. */
export async function claimEventForDispatch(
  tx: Tx,
  eventId: string,
  at: Date,
): Promise<DispatchableEvent | undefined> {
  const row = await repo.lockUndispatchedEventById(tx, eventId)
  if (!row) return undefined
  await repo.markEventsDispatched(tx, [row.id], at)
  return eventRowToDispatchable(row)
}

/** Per resource id, the number of its events of each type (for the audit). */
export async function eventTypeCounts(
  db: Db,
  resourceIds: readonly string[],
): Promise<Map<string, Record<string, number>>> {
  const out = new Map<string, Record<string, number>>()
  for (const row of await repo.countEventsByResource(db, resourceIds)) {
    const counts = out.get(row.resource_id) ?? {}
    counts[row.type] = row.count
    out.set(row.resource_id, counts)
  }
  return out
}

/** When the oldest event still waiting for the dispatcher was recorded (null: none waits). */
export async function oldestUndispatchedEventAt(db: Db): Promise<Date | null> {
  return (await repo.findOldestUndispatchedEvent(db))?.created_at ?? null
}
