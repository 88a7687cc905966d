// Every error the API answers has the envelope {code, message, requestId} (docs/api.md,
// Errors); `code` is the stable SVC-… code to branch on. KurusError carries it, with the HTTP
// status and the whole body (a decline adds paymentId and declineCode).

export interface ErrorBody {
  code: string
  message: string
  requestId: string
  details?: { field: string; reason: string }[]
  paymentId?: string
  declineCode?: string
  [extra: string]: unknown
}

export class KurusError extends Error {
  override name = 'KurusError'
  /** HTTP status of the answer. */
  readonly status: number
  /** The stable error code, e.g. `SVC-PAY-3501` (card declined). */
  readonly code: string
  readonly requestId: string
  readonly body: ErrorBody
  /** Set on 402 SVC-PAY-3501 (the declined payment) and SVC-RISK-3701. */
  readonly paymentId: string | undefined
  readonly declineCode: string | undefined
  constructor(status: number, body: ErrorBody) {
    super(`${status} ${body.code}: ${body.message}`)
    this.status = status
    this.code = body.code
    this.requestId = body.requestId
    this.body = body
    this.paymentId = body.paymentId
    this.declineCode = body.declineCode
  }
}

/** The request never got an HTTP answer (connection refused, reset, timeout), after retries. */
export class KurusConnectionError extends Error {
  override name = 'KurusConnectionError'
}

/** The error body of a non-2xx answer, or an envelope made up for one that had none. */
export function errorBodyOf(status: number, body: unknown, requestId: string | null): ErrorBody {
  if (
    typeof body === 'object' &&
    body !== null &&
    typeof (body as { code?: unknown }).code === 'string'
  ) {
    return body as ErrorBody
  }
  return {
    code: `HTTP-${status}`,
    message: typeof body === 'string' && body !== '' ? body : `HTTP ${status}`,
    requestId: requestId ?? '',
  }
}
