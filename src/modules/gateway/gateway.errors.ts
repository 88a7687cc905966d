import { errorFactory, type ErrorTable } from '../../platform/errors.ts'

export type GatewayErrorCode =
  | 'timestamp_invalid'
  | 'signature_invalid'
  | 'api_key_invalid'
  | 'request_replayed'
  | 'rate_limited'
  | 'idempotency_mismatch'
  | 'idempotency_in_progress'
  | 'idempotency_key_invalid'
  | 'scope_forbidden'
  | 'kyc_not_approved'
  | 'body_not_json'

const table: ErrorTable<GatewayErrorCode> = {
  timestamp_invalid: {
    code: 'SVC-GW-1001',
    status: 401,
    message: 'X-Timestamp is missing, malformed, or outside the ±5 minute window',
  },
  signature_invalid: { code: 'SVC-GW-1002', status: 401, message: 'signature mismatch' },
  api_key_invalid: {
    code: 'SVC-GW-1003',
    status: 401,
    message: 'X-Api-Key is missing, unknown or revoked',
  },
  request_replayed: {
    code: 'SVC-GW-1006',
    status: 401,
    message:
      'this signed request was already accepted; sign each request afresh (a retry of a ' +
      'POST, PUT, PATCH or DELETE is recognised by its Idempotency-Key)',
  },
  rate_limited: { code: 'SVC-GW-1004', status: 429, message: 'rate limit exceeded' },
  idempotency_mismatch: {
    code: 'SVC-GW-2001',
    status: 409,
    message: 'Idempotency-Key was already used with a different payload',
  },
  idempotency_in_progress: {
    code: 'SVC-GW-2002',
    status: 409,
    message: 'a request with this Idempotency-Key is still being processed; retry shortly',
  },
  idempotency_key_invalid: {
    code: 'SVC-VAL-3001',
    status: 400,
    message: 'Idempotency-Key must be a UUID v4',
  },
  scope_forbidden: {
    code: 'SVC-AUTH-3201',
    status: 403,
    message: "this key's subject scope does not allow this operation",
  },
  kyc_not_approved: {
    code: 'SVC-KYC-3101',
    status: 403,
    message: 'KYC status must be approved to move money',
  },
  body_not_json: { code: 'SVC-VAL-3002', status: 400, message: 'request body is not valid JSON' },
}

export const gatewayError = errorFactory(table)
