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
  | 'SVC-PAY-3504'
  | 'SVC-3DS-3601'
  | 'SVC-RISK-3701'
  | 'SVC-INT-9001'
  | 'SVC-INT-9002'

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

/** A request field that failed validation (ours or the schema's): the form can say which. */
export function isValidationError(error: unknown): error is AppError {
  return error instanceof AppError && error.code === 'SVC-VAL-3001'
}

export function notFound(what: string): AppError {
  return new AppError('SVC-RES-3301', 404, `${what} not found`)
}

/** The resource is not in a status that allows the action (409 SVC-STATE-3401). */
export function isStateConflict(error: unknown): error is AppError {
  return error instanceof AppError && error.code === 'SVC-STATE-3401'
}

/** Any "no such resource" answer, whichever module gave it (another merchant's id included). */
export function isNotFound(error: unknown): error is AppError {
  return error instanceof AppError && error.status === 404
}

/** A module's closed set of error codes, each mapped to its SVC code, status and message. */
export type ErrorTable<K extends string> = Record<
  K,
  { code: SvcCode; status: HttpErrorStatus; message: string }
>

/** Which module's table, and which of its keys, made an AppError. */
const origins = new WeakMap<AppError, { table: object; key: string }>()

export interface ErrorFactory<K extends string> {
  (key: K, message?: string, details?: FieldIssue[]): AppError
  /**
   * Whether `error` was made by this factory as one of `keys`: how another module branches on
   * an error by its name (never by comparing SVC codes, which several errors share).
   */
  is(error: unknown, ...keys: K[]): error is AppError
}

/** A module's errors, declared once in its table and thrown (and recognised) by name. */
export function errorFactory<K extends string>(table: ErrorTable<K>): ErrorFactory<K> {
  const make = (key: K, message?: string, details?: FieldIssue[]): AppError => {
    const entry = table[key]
    const error = new AppError(entry.code, entry.status, message ?? entry.message, details)
    origins.set(error, { table, key })
    return error
  }
  const is = (error: unknown, ...keys: K[]): error is AppError => {
    if (!(error instanceof AppError)) return false
    const origin = origins.get(error)
    return origin?.table === table && (keys as string[]).includes(origin.key)
  }
  return Object.assign(make, { is })
}
