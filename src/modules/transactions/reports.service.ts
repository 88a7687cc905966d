import type { Deps, Tx } from '../../database.ts'
import type { RecordAnswer } from '../../platform/http/idempotent-answer.ts'
import { validationError } from '../../platform/errors.ts'
import {
  createExport,
  getExport,
  listRecentReports,
  openExportDownload,
  type ExportDownload,
  type ExportView,
} from './exports.service.ts'
import type { ExportFormat, ReportType } from './transactions.table.ts'

// Finance reports (POST /v1/reports; docs/reports.md) are exports of another kind: the same
// row, queue cap, fair build job, chunks, download and expiry as statements
// (exports.service.ts); report-build.ts writes their files.

export type { ReportType }

export interface ReportRequest {
  type: ReportType
  from: Date
  to: Date
  format: ExportFormat
  idempotencyKey?: string
}

/** Queues a report; 429 SVC-GW-1004 when the merchant's exports and reports fill the queue. */
export function createReport(
  deps: Deps,
  merchantId: string,
  input: ReportRequest,
  record?: RecordAnswer<Tx, ExportView>,
): Promise<ExportView> {
  if (input.from.getTime() >= input.to.getTime()) throw validationError('from', 'must be before to')
  return createExport(
    deps,
    merchantId,
    {
      kind: input.type,
      format: input.format,
      filters: { from: input.from.toISOString(), to: input.to.toISOString() },
      ...(input.idempotencyKey !== undefined ? { idempotencyKey: input.idempotencyKey } : {}),
    },
    record,
  )
}

export function getReport(deps: Deps, merchantId: string, reportId: string): Promise<ExportView> {
  return getExport(deps, merchantId, reportId, 'report')
}

export function openReportDownload(
  deps: Deps,
  merchantId: string,
  reportId: string,
): Promise<ExportDownload> {
  return openExportDownload(deps, merchantId, reportId, 'report')
}

/** The merchant's latest reports, newest first. */
export function listReports(deps: Deps, merchantId: string, limit = 20): Promise<ExportView[]> {
  return listRecentReports(deps, merchantId, limit)
}
