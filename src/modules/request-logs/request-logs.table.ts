import type { Insertable, Selectable } from 'kysely'

/** One signed API request as the merchant sees it in `GET /v1/logs`: metadata only. */
export interface RequestLogsTable {
  id: string
  merchant_id: string
  /** The submerchant whose key made the request (its parent merchant reads it too). */
  submerchant_id: string | null
  api_key_id: string
  /** The public key's first characters (`pk_demo_ab12…`): which key, never a secret. */
  key_prefix: string
  mode: 'demo' | 'live'
  /** X-Request-Id of the answer. */
  request_id: string
  method: string
  /** The path as requested, ids included, without the query string. */
  path: string
  /** The route's pattern (`/v1/payments/:id`), null for an unmatched path. */
  route: string | null
  status: number
  /** The error envelope's SVC code of a 4xx/5xx answer. */
  error_code: string | null
  /** Why the gateway refused it (401 for one of the merchant's keys), never a secret. */
  reason: string | null
  duration_ms: number
  idempotency_key: string | null
  created_at: Date
}

export interface RequestLogsTables {
  request_logs: RequestLogsTable
}

export type RequestLogRow = Selectable<RequestLogsTable>
export type NewRequestLog = Insertable<RequestLogsTable>
