import type { Db, Tx } from '../../database.ts'
import { newId } from '../../platform/ids.ts'
import * as repo from './events.repository.ts'

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
export async function recordEvent(tx: Tx, event: NewEvent): Promise<string> {
  const id = newId('evt')
  const sequence = (await repo.findLastSequence(tx, event.resourceId)) + 1
  await repo.insertEvent(tx, {
    id,
    merchant_id: event.merchantId,
    store_id: event.storeId,
    type: event.type,
    resource_type: event.resourceType,
    resource_id: event.resourceId,
    sequence,
    data: JSON.stringify(event.data),
    callback_url: event.callbackUrl ?? null,
    created_at: event.at,
  })
  return id
}

export async function eventsForResource(
  db: Db,
  merchantId: string,
  resourceId: string,
): Promise<DomainEvent[]> {
  const rows = await repo.findEventsByResource(db, merchantId, resourceId)
  return rows.map((r) => ({
    id: r.id,
    type: r.type,
    resourceType: r.resource_type,
    resourceId: r.resource_id,
    sequence: r.sequence,
    data: r.data,
    createdAt: r.created_at,
  }))
}
