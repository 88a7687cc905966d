import type { Deps, Tx } from '../../database.ts'
import { assert } from '../../platform/assert.ts'
import { encrypt } from '../../platform/crypto.ts'
import { byCreatedAt, keysetCursor } from '../../platform/cursor.ts'
import { transact } from '../../platform/db/transaction.ts'
import { validationError } from '../../platform/errors.ts'
import { newId } from '../../platform/ids.ts'
import { getStore } from '../merchants/index.ts'
import { scheduleRedelivery, warmQueueCache } from './delivery.service.ts'
import { endpointSecretAad, storeCallbackSecret } from './secrets.ts'
import { newWebhookSecret } from './signing.ts'
import { checkReceiverUrl } from './ssrf.ts'
import { webhooksError } from './webhooks.errors.ts'
import * as repo from './webhooks.repository.ts'
import type { DeliveryRow, DeliveryStatus, EndpointRow, EndpointStatus } from './webhooks.table.ts'

// Endpoint configuration (dashboard API) and the delivery log. Delivery itself is in
// delivery.service.ts.

export const ENDPOINTS_PER_STORE_MAX = 16
// A rotated-out secret keeps signing this long, so receivers can switch without a gap.
export const SECRET_ROTATION_GRACE_MS = 24 * 60 * 60 * 1000
const EVENT_TYPE = /^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$/

export interface Endpoint {
  id: string
  storeId: string
  url: string
  /** Null: every event type. */
  events: string[] | null
  status: EndpointStatus
  disabledAt: Date | null
  previousSecretExpiresAt: Date | null
  createdAt: Date
}

function endpointRowToEndpoint(row: EndpointRow, now: Date): Endpoint {
  const graceLive = row.previous_secret_expires_at !== null && row.previous_secret_expires_at > now
  return {
    id: row.id,
    storeId: row.store_id,
    url: row.url,
    events: row.event_types,
    status: row.status,
    disabledAt: row.disabled_at,
    previousSecretExpiresAt: graceLive ? row.previous_secret_expires_at : null,
    createdAt: row.created_at,
  }
}

async function assertReceiverAllowed(deps: Deps, url: string): Promise<void> {
  const verdict = await checkReceiverUrl(url, deps.config.env)
  if (!verdict.ok) {
    throw webhooksError('url_refused', `url: ${verdict.reason}`, [
      { field: 'url', reason: verdict.reason },
    ])
  }
}

function normalizeEventTypes(events: readonly string[] | undefined): string[] | null {
  if (events === undefined) return null
  for (const type of events) {
    if (!EVENT_TYPE.test(type)) {
      throw webhooksError('bad_event_type', `events: "${type}" is not an event type`, [
        { field: 'events', reason: `"${type}" is not an event type` },
      ])
    }
  }
  return [...new Set(events)].sort()
}

export async function createEndpoint(
  deps: Deps,
  merchantId: string,
  storeId: string,
  input: { url: string; events?: string[] },
): Promise<Endpoint & { secret: string }> {
  await getStore(deps, merchantId, storeId)
  // Checked before the transaction: the DNS lookup is network I/O.
  await assertReceiverAllowed(deps, input.url)
  const eventTypes = normalizeEventTypes(input.events)
  const secret = newWebhookSecret()
  const id = newId('whe')
  return transact(deps.db, async (tx) => {
    // Locking the store's endpoints serialises concurrent creates against the limit.
    const existing = await repo.lockStoreEndpoints(tx, merchantId, storeId)
    if (existing.length >= ENDPOINTS_PER_STORE_MAX) throw webhooksError('endpoint_limit_reached')
    const now = deps.clock.now()
    await repo.insertEndpoint(tx, {
      id,
      merchant_id: merchantId,
      store_id: storeId,
      url: input.url,
      event_types: eventTypes === null ? null : JSON.stringify(eventTypes),
      status: 'enabled',
      secret_enc: encrypt(deps.config.masterKey, secret, endpointSecretAad(id)),
      previous_secret_enc: null,
      previous_secret_expires_at: null,
      failing_since: null,
      disabled_at: null,
      created_at: now,
      updated_at: now,
    })
    return {
      id,
      storeId,
      url: input.url,
      events: eventTypes,
      status: 'enabled' as const,
      disabledAt: null,
      previousSecretExpiresAt: null,
      createdAt: now,
      secret,
    }
  })
}

export async function listEndpoints(
  deps: Deps,
  merchantId: string,
  storeId: string,
): Promise<Endpoint[]> {
  await getStore(deps, merchantId, storeId)
  const rows = await repo.findEndpointsByStore(deps.db, merchantId, storeId)
  const now = deps.clock.now()
  return rows.map((r) => endpointRowToEndpoint(r, now))
}

async function withEndpoint<T>(
  deps: Deps,
  merchantId: string,
  storeId: string,
  endpointId: string,
  fn: (tx: Tx, row: EndpointRow, now: Date) => Promise<T>,
): Promise<T> {
  await getStore(deps, merchantId, storeId)
  return transact(deps.db, async (tx) => {
    const row = await repo.lockEndpoint(tx, merchantId, storeId, endpointId)
    if (!row) throw webhooksError('endpoint_not_found')
    return fn(tx, row, deps.clock.now())
  })
}

/** Soft delete: its delivery log stays; pending deliveries to it end `failed`. */
export async function deleteEndpoint(
  deps: Deps,
  merchantId: string,
  storeId: string,
  endpointId: string,
): Promise<void> {
  await withEndpoint(deps, merchantId, storeId, endpointId, async (tx, _row, now) => {
    await repo.updateEndpoint(tx, endpointId, { status: 'deleted', updated_at: now })
  })
}

/**
 * A new secret, shown once. The previous one keeps signing for 24 h (each delivery carries
 * both signatures), so a receiver can deploy the new secret without rejecting anything.
 * A second rotation within that window drops the oldest secret.
 */
export async function rotateEndpointSecret(
  deps: Deps,
  merchantId: string,
  storeId: string,
  endpointId: string,
): Promise<{ id: string; secret: string; previousSecretExpiresAt: Date }> {
  const secret = newWebhookSecret()
  return withEndpoint(deps, merchantId, storeId, endpointId, async (tx, row, now) => {
    const expiresAt = new Date(now.getTime() + SECRET_ROTATION_GRACE_MS)
    await repo.updateEndpoint(tx, endpointId, {
      secret_enc: encrypt(deps.config.masterKey, secret, endpointSecretAad(endpointId)),
      previous_secret_enc: row.secret_enc,
      previous_secret_expires_at: expiresAt,
      updated_at: now,
    })
    return { id: endpointId, secret, previousSecretExpiresAt: expiresAt }
  })
}

/** Turns a disabled endpoint back on; its failure streak starts afresh. */
export async function enableEndpoint(
  deps: Deps,
  merchantId: string,
  storeId: string,
  endpointId: string,
): Promise<Endpoint> {
  return withEndpoint(deps, merchantId, storeId, endpointId, async (tx, _row, now) => {
    const row = await repo.updateEndpoint(tx, endpointId, {
      status: 'enabled',
      disabled_at: null,
      failing_since: null,
      updated_at: now,
    })
    return endpointRowToEndpoint(row, now)
  })
}

export async function getCallbackSecret(
  deps: Deps,
  merchantId: string,
  storeId: string,
): Promise<string> {
  await getStore(deps, merchantId, storeId)
  return storeCallbackSecret(deps, deps.db, merchantId, storeId)
}

// ---- the delivery log

export interface Delivery {
  id: string
  eventId: string
  eventType: string
  endpointId: string | null
  url: string
  status: DeliveryStatus
  attemptCount: number
  nextAttemptAt: Date | null
  lastAttemptAt: Date | null
  lastStatusCode: number | null
  lastError: string | null
  deliveredAt: Date | null
  createdAt: Date
}

export function deliveryRowToDelivery(row: DeliveryRow): Delivery {
  return {
    id: row.id,
    eventId: row.event_id,
    eventType: row.event_type,
    endpointId: row.endpoint_id,
    url: row.url,
    status: row.status,
    attemptCount: row.attempt_count,
    nextAttemptAt: row.next_attempt_at,
    lastAttemptAt: row.last_attempt_at,
    lastStatusCode: row.last_status_code,
    lastError: row.last_error,
    deliveredAt: row.delivered_at,
    createdAt: row.created_at,
  }
}

export const DELIVERIES_LIMIT_MAX = 100

// The list's cursor: signed with a key of its own, names its merchant and store.
const DELIVERIES_CURSOR = keysetCursor('webhook-deliveries', 'kurus/webhooks/deliveries-cursor')

export async function listDeliveries(
  deps: Deps,
  merchantId: string,
  storeId: string,
  q: {
    status?: DeliveryStatus
    eventType?: string
    endpointId?: string
    eventId?: string
    limit: number
    cursor?: string
  },
): Promise<{ items: Delivery[]; nextCursor: string | null }> {
  assert(Number.isInteger(q.limit) && q.limit >= 1 && q.limit <= DELIVERIES_LIMIT_MAX, 'limit')
  await getStore(deps, merchantId, storeId)
  // A list: the read pool.
  return DELIVERIES_CURSOR.page(deps.config.masterKey, { m: merchantId, s: storeId }, q, {
    fetch: (before, limit) =>
      repo.findDeliveriesPage(deps.readDb, {
        merchantId,
        storeId,
        status: q.status,
        eventType: q.eventType,
        endpointId: q.endpointId,
        eventId: q.eventId,
        before,
        limit,
      }),
    view: (rows) => rows.map(deliveryRowToDelivery),
    position: byCreatedAt,
  })
}

/**
 * Sends a delivery again, whatever its status: queued now, with the same webhook-id, and a
 * fresh 3-day retry window. Its endpoint must be enabled. A retry with the Idempotency-Key of
 * the delivery's last redelivery sends nothing more: it is answered with the delivery as it
 * stands (the key is kept on the row, written with the scheduled send; decision 0035).
 */
export async function redeliver(
  deps: Deps,
  merchantId: string,
  storeId: string,
  deliveryId: string,
  idempotencyKey?: string,
): Promise<Delivery> {
  if (idempotencyKey !== undefined && idempotencyKey.length > 255) {
    throw validationError('Idempotency-Key', 'must be at most 255 characters')
  }
  await getStore(deps, merchantId, storeId)
  await warmQueueCache(deps)
  return transact(deps.db, async (tx) => {
    const row = await repo.lockStoreDelivery(tx, merchantId, storeId, deliveryId)
    if (!row) throw webhooksError('delivery_not_found')
    if (row.endpoint_id !== null) {
      const endpoint = await repo.findEndpointById(tx, row.endpoint_id)
      if (endpoint?.status !== 'enabled') throw webhooksError('endpoint_not_enabled')
    }
    if (idempotencyKey !== undefined && row.redelivery_key === idempotencyKey) {
      return deliveryRowToDelivery(row)
    }
    const scheduled = await scheduleRedelivery(deps, tx, row)
    if (idempotencyKey === undefined) return deliveryRowToDelivery(scheduled)
    return deliveryRowToDelivery(
      await repo.updateDelivery(tx, row.id, { redelivery_key: idempotencyKey }),
    )
  })
}
