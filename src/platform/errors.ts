// Operating errors: expected outcomes a client can cause. Services throw AppError; the one
// error handler (platform/http/error-handler.ts) turns it into the spec's envelope.

export type SvcCode =
  | 'SVC-GW-1001'
  | 'SVC-GW-1002'
  | 'SVC-GW-1003'
  | 'SVC-GW-1004'
  | 'SVC-GW-1005'
  | 'SVC-GW-1006'
  | 'SVC-GW-2001'
  | 'SVC-GW-2002'
  | 'SVC-VAL-3001'
  | 'SVC-VAL-3002'
  | 'SVC-VAL-3003'
  | 'SVC-VAL-3004'
  | 'SVC-KYC-3101'
  | 'SVC-AUTH-3201'
  | 'SVC-RES-3301'
  | 'SVC-RES-3302'
  | 'SVC-STATE-3401'
  | 'SVC-PAY-3501'
  | 'SVC-PAY-3502'
  | 'SVC-PAY-3503'
  | 'SVC-3DS-3601'
  | 'SVC-RISK-3701'
  | 'SVC-INT-9001'

export type HttpErrorStatus = 400 | 401 | 402 | 403 | 404 | 409 | 413 | 415 | 429 | 500 | 503

export interface FieldIssue {
  field: string
  reason: string
}

export class AppError extends Error {
  override name = 'AppError'
  readonly code: SvcCode
  readonly status: HttpErrorStatus
  readonly details: FieldIssue[] | undefined
  /** Extra top-level envelope fields, e.g. paymentId and declineCode on a decline. */
  readonly extra: Record<string, string | number | boolean | null> | undefined
  /** Extra response headers, e.g. Retry-After. */
  readonly headers: Record<string, string> | undefined

  constructor(
    code: SvcCode,
    status: HttpErrorStatus,
    message: string,
    details?: FieldIssue[],
    extra?: Record<string, string | number | boolean | null>,
    headers?: Record<string, string>,
  ) {
    super(message)
    this.code = code
    this.status = status
    this.details = details
    this.extra = extra
    this.headers = headers
  }
}

export function validationError(field: string, reason: string): AppError {
  return new AppError('SVC-VAL-3001', 400, `${field}: ${reason}`, [{ field, reason }])
}

export function notFound(what: string): AppError {
  return new AppError('SVC-RES-3301', 404, `${what} not found`)
}

/** A module's closed set of error codes, each mapped to its SVC code, status and message. */
export type ErrorTable<K extends string> = Record<
  K,
  { code: SvcCode; status: HttpErrorStatus; message: string }
>

export function errorFactory<K extends string>(table: ErrorTable<K>) {
  return (key: K, message?: string, details?: FieldIssue[]): AppError => {
    const entry = table[key]
    return new AppError(entry.code, entry.status, message ?? entry.message, details)
  }
}
