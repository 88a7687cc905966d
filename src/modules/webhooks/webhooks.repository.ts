import type { Updateable } from 'kysely'
import type { Db, Tx } from '../../database.ts'
import type {
  DeliveryRow,
  DeliveryStatus,
  EndpointRow,
  NewDelivery,
  NewEndpoint,
  WebhookDeliveriesTable,
  WebhookEndpointsTable,
} from './webhooks.table.ts'

// ---- endpoints

export async function insertEndpoint(tx: Tx, row: NewEndpoint): Promise<void> {
  await tx.insertInto('webhook_endpoints').values(row).execute()
}

export function findEndpointsByStore(
  db: Db,
  merchantId: string,
  storeId: string,
): Promise<EndpointRow[]> {
  return db
    .selectFrom('webhook_endpoints')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .where('store_id', '=', storeId)
    .where('status', '<>', 'deleted')
    .orderBy('created_at')
    .orderBy('id')
    .execute()
}

export function lockStoreEndpoints(
  tx: Tx,
  merchantId: string,
  storeId: string,
): Promise<EndpointRow[]> {
  return tx
    .selectFrom('webhook_endpoints')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .where('store_id', '=', storeId)
    .where('status', '<>', 'deleted')
    .forUpdate()
    .execute()
}

export function lockEndpoint(
  tx: Tx,
  merchantId: string,
  storeId: string,
  endpointId: string,
): Promise<EndpointRow | undefined> {
  return tx
    .selectFrom('webhook_endpoints')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .where('store_id', '=', storeId)
    .where('id', '=', endpointId)
    .where('status', '<>', 'deleted')
    .forUpdate()
    .executeTakeFirst()
}

/** Any status: the delivery worker decides what a disabled or deleted endpoint means. */
export function findEndpointById(
  db: Db | Tx,
  endpointId: string,
): Promise<EndpointRow | undefined> {
  return db
    .selectFrom('webhook_endpoints')
    .selectAll()
    .where('id', '=', endpointId)
    .executeTakeFirst()
}

export function lockEndpointById(tx: Tx, endpointId: string): Promise<EndpointRow | undefined> {
  return tx
    .selectFrom('webhook_endpoints')
    .selectAll()
    .where('id', '=', endpointId)
    .forUpdate()
    .executeTakeFirst()
}

export function findEnabledEndpointsByMerchants(
  tx: Tx,
  merchantIds: readonly string[],
): Promise<EndpointRow[]> {
  if (merchantIds.length === 0) return Promise.resolve([])
  return tx
    .selectFrom('webhook_endpoints')
    .selectAll()
    .where('merchant_id', 'in', merchantIds)
    .where('status', '=', 'enabled')
    .orderBy('created_at')
    .orderBy('id')
    .execute()
}

export async function updateEndpoint(
  tx: Tx,
  endpointId: string,
  patch: Updateable<WebhookEndpointsTable>,
): Promise<EndpointRow> {
  return tx
    .updateTable('webhook_endpoints')
    .set(patch)
    .where('id', '=', endpointId)
    .returningAll()
    .executeTakeFirstOrThrow()
}

// ---- the store's callback signing secret

export function findStoreSecret(db: Db | Tx, storeId: string) {
  return db
    .selectFrom('webhook_store_secrets')
    .selectAll()
    .where('store_id', '=', storeId)
    .executeTakeFirst()
}

/** First writer wins; a concurrent creator keeps the secret already stored. */
export async function insertStoreSecretIfAbsent(
  db: Db | Tx,
  row: { store_id: string; merchant_id: string; secret_enc: string; created_at: Date },
): Promise<void> {
  await db
    .insertInto('webhook_store_secrets')
    .values(row)
    .onConflict((oc) => oc.column('store_id').doNothing())
    .execute()
}

// ---- deliveries

/** Inserts the deliveries not there yet (unique per event and endpoint); returns the new ones. */
export async function insertDeliveries(tx: Tx, rows: NewDelivery[]): Promise<DeliveryRow[]> {
  if (rows.length === 0) return []
  return tx
    .insertInto('webhook_deliveries')
    .values(rows)
    .onConflict((oc) => oc.doNothing())
    .returningAll()
    .execute()
}

export function lockDeliveryById(tx: Tx, deliveryId: string): Promise<DeliveryRow | undefined> {
  return tx
    .selectFrom('webhook_deliveries')
    .selectAll()
    .where('id', '=', deliveryId)
    .forUpdate()
    .executeTakeFirst()
}

export function lockStoreDelivery(
  tx: Tx,
  merchantId: string,
  storeId: string,
  deliveryId: string,
): Promise<DeliveryRow | undefined> {
  return tx
    .selectFrom('webhook_deliveries')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .where('store_id', '=', storeId)
    .where('id', '=', deliveryId)
    .forUpdate()
    .executeTakeFirst()
}

export async function updateDelivery(
  tx: Tx,
  deliveryId: string,
  patch: Updateable<WebhookDeliveriesTable>,
): Promise<DeliveryRow> {
  return tx
    .updateTable('webhook_deliveries')
    .set(patch)
    .where('id', '=', deliveryId)
    .returningAll()
    .executeTakeFirstOrThrow()
}

/**
 * Pending deliveries whose time has come: a scheduled retry, or an attempt whose lease
 * lapsed (its worker died between sending and recording). SKIP LOCKED: several workers
 * share the work without waiting on each other.
 */
export function lockDueDeliveries(tx: Tx, now: Date, limit: number): Promise<DeliveryRow[]> {
  return tx
    .selectFrom('webhook_deliveries')
    .selectAll()
    .where('status', '=', 'pending')
    .where('next_attempt_at', '<=', now)
    .orderBy('next_attempt_at')
    .limit(limit)
    .forUpdate()
    .skipLocked()
    .execute()
}

export interface DeliveryPageQuery {
  merchantId: string
  storeId: string
  status: DeliveryStatus | undefined
  eventType: string | undefined
  endpointId: string | undefined
  eventId: string | undefined
  before: { createdAt: Date; id: string } | undefined
  limit: number
}

export function findDeliveriesPage(db: Db, q: DeliveryPageQuery): Promise<DeliveryRow[]> {
  let query = db
    .selectFrom('webhook_deliveries')
    .selectAll()
    .where('merchant_id', '=', q.merchantId)
    .where('store_id', '=', q.storeId)
  if (q.status !== undefined) query = query.where('status', '=', q.status)
  if (q.eventType !== undefined) query = query.where('event_type', '=', q.eventType)
  if (q.endpointId !== undefined) query = query.where('endpoint_id', '=', q.endpointId)
  if (q.eventId !== undefined) query = query.where('event_id', '=', q.eventId)
  const before = q.before
  if (before) {
    query = query.where((eb) =>
      eb(eb.refTuple('created_at', 'id'), '<', eb.tuple(before.createdAt, before.id)),
    )
  }
  return query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(q.limit).execute()
}

/** The pending delivery created first (its event is the oldest one still undelivered). */
export function findOldestPendingDelivery(
  db: Db,
): Promise<{ merchant_id: string; event_id: string } | undefined> {
  return db
    .selectFrom('webhook_deliveries')
    .select(['merchant_id', 'event_id'])
    .where('status', '=', 'pending')
    .orderBy('created_at')
    .limit(1)
    .executeTakeFirst()
}
