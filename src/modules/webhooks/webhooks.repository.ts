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

// ---- master-key rotation: sealed signing secrets, in key order

export type EndpointSecrets = Pick<EndpointRow, 'id' | 'secret_enc' | 'previous_secret_enc'>

export function findEndpointSecretsAfter(
  db: Db,
  afterId: string | null,
  limit: number,
): Promise<EndpointSecrets[]> {
  let query = db.selectFrom('webhook_endpoints').select(['id', 'secret_enc', 'previous_secret_enc'])
  if (afterId !== null) query = query.where('id', '>', afterId)
  return query.orderBy('id').limit(limit).execute()
}

export function findEndpointSecrets(db: Db, id: string): Promise<EndpointSecrets | undefined> {
  return db
    .selectFrom('webhook_endpoints')
    .select(['id', 'secret_enc', 'previous_secret_enc'])
    .where('id', '=', id)
    .executeTakeFirst()
}

/** Conditional on both columns: false if the endpoint's secrets changed since `from` was read. */
export async function updateEndpointSecretsIfUnchanged(
  db: Db,
  from: EndpointSecrets,
  to: { secret_enc: string; previous_secret_enc: string | null },
): Promise<boolean> {
  const result = await db
    .updateTable('webhook_endpoints')
    .set(to)
    .where('id', '=', from.id)
    .where('secret_enc', '=', from.secret_enc)
    .where((eb) =>
      from.previous_secret_enc === null
        ? eb('previous_secret_enc', 'is', null)
        : eb('previous_secret_enc', '=', from.previous_secret_enc),
    )
    .executeTakeFirst()
  return result.numUpdatedRows === 1n
}

export function findStoreSecretsAfter(
  db: Db,
  afterStoreId: string | null,
  limit: number,
): Promise<{ store_id: string; secret_enc: string }[]> {
  let query = db.selectFrom('webhook_store_secrets').select(['store_id', 'secret_enc'])
  if (afterStoreId !== null) query = query.where('store_id', '>', afterStoreId)
  return query.orderBy('store_id').limit(limit).execute()
}

/** Conditional: false if the store's secret changed since `from` was read. */
export async function updateStoreSecretIfUnchanged(
  db: Db,
  storeId: string,
  from: string,
  to: string,
): Promise<boolean> {
  const result = await db
    .updateTable('webhook_store_secrets')
    .set({ secret_enc: to })
    .where('store_id', '=', storeId)
    .where('secret_enc', '=', from)
    .executeTakeFirst()
  return result.numUpdatedRows === 1n
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
