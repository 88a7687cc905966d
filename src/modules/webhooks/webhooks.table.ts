import type { ColumnType, Insertable, Selectable } from 'kysely'

export type EndpointStatus = 'enabled' | 'disabled' | 'deleted'
export type DeliveryStatus = 'pending' | 'delivered' | 'failed'

export interface WebhookEndpointsTable {
  id: string
  merchant_id: string
  store_id: string
  url: string
  /** Event types subscribed to; null means every type. */
  event_types: ColumnType<string[] | null, string | null, string | null>
  status: EndpointStatus
  /** `whsec_…` encrypted under the master key (signing needs the secret itself). */
  secret_enc: string
  /** The secret before the last rotation; still signs until previous_secret_expires_at. */
  previous_secret_enc: string | null
  previous_secret_expires_at: Date | null
  /** Start of the current run of failed attempts; null after a success. */
  failing_since: Date | null
  disabled_at: Date | null
  created_at: Date
  updated_at: Date
}

export interface WebhookStoreSecretsTable {
  store_id: string
  merchant_id: string
  secret_enc: string
  created_at: Date
}

export interface WebhookDeliveriesTable {
  id: string
  merchant_id: string
  store_id: string
  event_id: string
  event_type: string
  /** Null for a delivery to the event's callbackUrl. */
  endpoint_id: string | null
  url: string
  status: DeliveryStatus
  /** Attempts whose outcome was recorded. */
  attempt_count: ColumnType<number, number | undefined, number>
  /** Pending only: when the retry reconciler takes it (a retry, or a lapsed lease). */
  next_attempt_at: Date | null
  retry_until: Date
  last_attempt_at: Date | null
  last_status_code: number | null
  last_error: string | null
  delivered_at: Date | null
  created_at: Date
  updated_at: Date
  /** The Idempotency-Key of the last redelivery (migration 0480): its retry sends nothing. */
  redelivery_key: ColumnType<string | null, string | null | undefined, string | null>
}

export interface WebhooksTables {
  webhook_endpoints: WebhookEndpointsTable
  webhook_store_secrets: WebhookStoreSecretsTable
  webhook_deliveries: WebhookDeliveriesTable
}

export type EndpointRow = Selectable<WebhookEndpointsTable>
export type NewEndpoint = Insertable<WebhookEndpointsTable>
export type DeliveryRow = Selectable<WebhookDeliveriesTable>
export type NewDelivery = Insertable<WebhookDeliveriesTable>
