import type { Generated, Selectable } from 'kysely'

export interface IdempotencyKeysTable {
  api_key_id: string
  endpoint: string
  idempotency_key: string
  fingerprint: string
  state: 'processing' | 'done' | 'retryable'
  locked_at: Date | null
  response_status: number | null
  response_body: string | null
  response_content_type: string | null
  request_id: string
  created_at: Date
  expires_at: Date
  /** What the request's claim phase made (a payment, a capture id): a retry resumes it. */
  resource_id: string | null
  /** The API process holding the claim (its lease is in process_leases). */
  owner: string | null
}

export interface ProcessLeasesTable {
  owner: string
  expires_at: Date
}

export interface RateLimitBucketsTable {
  bucket: string
  tokens: number
  refilled_at: Date
  /** How many tokens the last take handed out (a lease may take several). */
  granted: Generated<number>
}

export interface AcceptedSignaturesTable {
  /** The 32 bytes of the hex X-Signature. */
  signature: Buffer
  /** The original request's Idempotency-Key, lower-cased; null when it had none. */
  idempotency_key: string | null
  expires_at: Date
}

export interface GatewayTables {
  idempotency_keys: IdempotencyKeysTable
  rate_limit_buckets: RateLimitBucketsTable
  accepted_signatures: AcceptedSignaturesTable
  process_leases: ProcessLeasesTable
}

export type IdempotencyRow = Selectable<IdempotencyKeysTable>
