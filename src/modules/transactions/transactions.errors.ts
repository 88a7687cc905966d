import { AppError, errorFactory, type ErrorTable } from '../../platform/errors.ts'

export type TransactionsErrorCode =
  | 'transaction_not_found'
  | 'export_not_found'
  | 'export_not_ready'
  | 'export_failed'
  | 'export_expired'
  | 'idempotency_conflict'
  | 'report_not_found'
  | 'report_not_ready'
  | 'report_failed'
  | 'report_expired'

const table: ErrorTable<TransactionsErrorCode> = {
  transaction_not_found: { code: 'SVC-RES-3301', status: 404, message: 'transaction not found' },
  export_not_found: { code: 'SVC-RES-3301', status: 404, message: 'export not found' },
  export_not_ready: {
    code: 'SVC-STATE-3401',
    status: 409,
    message: 'the export is not ready yet; poll GET /v1/transactions/exports/{exportId}',
  },
  export_failed: {
    code: 'SVC-STATE-3401',
    status: 409,
    message: 'the export failed; request a new one',
  },
  idempotency_conflict: {
    code: 'SVC-GW-2001',
    status: 409,
    message: 'this Idempotency-Key was used for an export with another format or filters',
  },
  export_expired: {
    code: 'SVC-STATE-3401',
    status: 409,
    message: 'the export file has expired (files are kept 7 days); request a new one',
  },
  report_not_found: { code: 'SVC-RES-3301', status: 404, message: 'report not found' },
  report_not_ready: {
    code: 'SVC-STATE-3401',
    status: 409,
    message: 'the report is not ready yet; poll GET /v1/reports/{reportId}',
  },
  report_failed: {
    code: 'SVC-STATE-3401',
    status: 409,
    message: 'the report failed; request a new one',
  },
  report_expired: {
    code: 'SVC-STATE-3401',
    status: 409,
    message: 'the report file has expired (files are kept 7 days); request a new one',
  },
}

export const transactionsError = errorFactory(table)

/** A merchant's export queue is full: 429 with a hint of when a place should free up. */
export function exportQueueFull(queuedMax: number, retryAfterSeconds: number): AppError {
  return new AppError(
    'SVC-GW-1004',
    429,
    `at most ${queuedMax} exports may be queued or building at once; ` +
      'retry when one of them is ready (GET /v1/transactions/exports/{exportId})',
    undefined,
    undefined,
    { 'retry-after': String(retryAfterSeconds) },
  )
}
