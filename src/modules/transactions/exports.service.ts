import type { Deps, Tx } from '../../database.ts'
import type { RecordAnswer } from '../../platform/http/idempotent-answer.ts'
import { assert } from '../../platform/assert.ts'
import { transact } from '../../platform/db/transaction.ts'
import { createOnce } from '../../platform/idempotent-create.ts'
import { newId } from '../../platform/ids.ts'
import { getMerchant } from '../merchants/index.ts'
import {
  isPaymentStatus,
  searchPayments,
  type PaymentSearchEntry,
  type PaymentStatus,
} from '../payments/index.ts'
import { ChunkWriter } from './chunk-writer.ts'
import type { StatementRenderer } from './export-pdf.ts'
import { exportQueueFull, transactionsError } from './transactions.errors.ts'
import * as repo from './transactions.repository.ts'
import type { ExportScope } from './transactions.repository.ts'
import { checkFilters, type TransactionFilters } from './transactions.service.ts'
import type {
  ExportFilters as StoredFilters,
  ExportFormat,
  ExportKind,
  ExportRow,
  ExportStatus,
} from './transactions.table.ts'

export type { ExportScope }

// Statement exports: POST records a `queued` export and enqueues a build job in the same
// transaction (at most `exportsQueuedMax` unfinished exports per merchant); each job
// (transactions.build_export) claims the fairest queued export across merchants and moves it
// queued → processing → ready | failed, streaming the file into transaction_export_chunks; a
// reconciler expires files after 7 days. Downloads stream the chunks back in order.

export const BUILD_EXPORT_JOB = 'transactions.build_export'
export const EXPORT_RETENTION_MS = 7 * 24 * 60 * 60 * 1000
/** Source rows per keyset query: bounds memory per step, whatever the export's size. */
export const EXPORT_BATCH = 1000
/** Build attempts before an export is marked failed (the job's retryLimit is one less). */
export const EXPORT_ATTEMPTS_MAX = 3
// An export no worker has touched for this long lost its job for good (every retry spent
// or the worker killed mid-build): the reconciler marks it failed so clients stop polling.
const ABANDONED_AFTER_MS = 60 * 60 * 1000
/**
 * Retry-After of a refused export request: about when one of the merchant's exports should
 * be done (a 100,000-row PDF builds in about a minute; most exports take seconds).
 */
export const EXPORT_QUEUE_RETRY_AFTER_SECONDS = 30
const RECONCILE_BATCH = 200

/** The filters as the API admits them: `status` is one of payments' statuses. */
export type ExportFilters = StoredFilters<PaymentStatus>

/** Stored filters as written: the request's schema admitted only payments' statuses. */
function readFilters(stored: StoredFilters): ExportFilters {
  const { status, ...rest } = stored
  if (status === undefined) return rest
  assert(isPaymentStatus(status), `stored export filter has an unknown status ${status}`)
  return { ...rest, status }
}

export interface ExportView {
  id: string
  kind: ExportKind
  format: ExportFormat
  status: ExportStatus
  rowCount: number
  filters: ExportFilters
  createdAt: Date
  completedAt: Date | null
  expiresAt: Date | null
}

export interface ExportDownload {
  fileName: string
  contentType: string
  byteSize: number
  chunks: AsyncIterable<Buffer>
}

function exportRowToView(row: ExportRow): ExportView {
  return {
    id: row.id,
    kind: row.kind,
    format: row.format,
    status: row.status,
    rowCount: row.row_count,
    filters: readFilters(row.filters),
    createdAt: row.created_at,
    completedAt: row.completed_at,
    expiresAt: row.expires_at,
  }
}

/** The stored filters as a search: dates parsed; at most the payments before the snapshot. */
function searchFilters(f: ExportFilters, snapshotAt: Date): TransactionFilters {
  // `to` is exclusive; +1 ms keeps a payment created in the request's own millisecond.
  const snapshotEnd = new Date(snapshotAt.getTime() + 1)
  const to = f.to !== undefined && new Date(f.to) < snapshotEnd ? new Date(f.to) : snapshotEnd
  return {
    ...(f.storeId !== undefined ? { storeId: f.storeId } : {}),
    ...(f.status !== undefined ? { status: f.status } : {}),
    ...(f.customerId !== undefined ? { customerId: f.customerId } : {}),
    ...(f.paymentId !== undefined ? { paymentId: f.paymentId } : {}),
    ...(f.q !== undefined ? { q: f.q } : {}),
    ...(f.from !== undefined ? { from: new Date(f.from) } : {}),
    to,
    ...(f.amountMin !== undefined ? { amountMin: f.amountMin } : {}),
    ...(f.amountMax !== undefined ? { amountMax: f.amountMax } : {}),
  }
}

/** Normalises the request's filters (timestamps to ISO UTC) and rejects impossible ones. */
function normaliseFilters(f: ExportFilters): ExportFilters {
  const out: ExportFilters = { ...f }
  if (f.from !== undefined) out.from = new Date(f.from).toISOString()
  if (f.to !== undefined) out.to = new Date(f.to).toISOString()
  checkFilters(
    {
      ...(out.from !== undefined ? { from: new Date(out.from) } : {}),
      ...(out.to !== undefined ? { to: new Date(out.to) } : {}),
      ...(out.amountMin !== undefined ? { amountMin: out.amountMin } : {}),
      ...(out.amountMax !== undefined ? { amountMax: out.amountMax } : {}),
    },
    'filters.',
  )
  return out
}

/** The answer to a retry of an export: the same export, unless it asks for another one. */
function retriedExport(
  row: ExportRow,
  kind: ExportKind,
  format: ExportFormat,
  filters: ExportFilters,
): ExportView {
  const same =
    row.kind === kind &&
    row.format === format &&
    JSON.stringify(sortedKeys(row.filters)) === JSON.stringify(sortedKeys(filters))
  if (!same) throw transactionsError('idempotency_conflict')
  return exportRowToView(row)
}

function sortedKeys(f: StoredFilters): [string, unknown][] {
  return Object.entries(f).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
}

/**
 * Records a queued export and its build job. The gateway replays final answers only, and a
 * 202 is re-run on retry, so the Idempotency-Key is stored on the export: a retry returns
 * the same export (in its current state) instead of building a second file. A merchant with
 * `exportsQueuedMax` exports queued or building gets 429 SVC-GW-1004 instead of another one
 * (issue 22 §4); a retry of an export it already has is still answered.
 */
export async function createExport(
  deps: Deps,
  merchantId: string,
  input: {
    format: ExportFormat
    filters?: ExportFilters
    idempotencyKey?: string
    /** A report (POST /v1/reports) instead of a statement; same queue, same cap. */
    kind?: ExportKind
  },
  record?: RecordAnswer<Tx, ExportView>,
): Promise<ExportView> {
  const kind = input.kind ?? 'statement'
  const filters = normaliseFilters(input.filters ?? {})
  return transact(deps.db, async (tx) => {
    // Under the merchant's lock, so the retry check and the cap see every earlier request
    // (a concurrent one with the same key, from another of the merchant's API keys, too):
    // no race reaches the key's unique index, so a losing claim needs no recovery here.
    await repo.lockMerchantExports(tx, merchantId)
    const view = await createOnce(input.idempotencyKey, {
      find: (key) => repo.findExportByKey(tx, merchantId, key),
      replay: (row) => retriedExport(row, kind, input.format, filters),
      claim: async (key) => {
        const queuedMax = deps.config.exportsQueuedMax
        if ((await repo.countUnfinishedExports(tx, merchantId)) >= queuedMax) {
          throw exportQueueFull(queuedMax, EXPORT_QUEUE_RETRY_AFTER_SECONDS)
        }
        const now = deps.clock.now()
        const id = newId(kind === 'statement' ? 'exp' : 'rpt')
        await repo.insertExport(tx, {
          id,
          merchant_id: merchantId,
          kind,
          format: input.format,
          filters: JSON.stringify(filters),
          status: 'queued',
          snapshot_at: now,
          error: null,
          idempotency_key: key,
          created_at: now,
          started_at: null,
          completed_at: null,
          expires_at: null,
          updated_at: now,
        })
        // In the same transaction: one build job per export, so there are always at least as
        // many jobs waiting as exports queued (each job builds one export, not always this one).
        await deps.jobs.enqueue(tx, BUILD_EXPORT_JOB, { exportId: id }, { singletonKey: id })
        return {
          id,
          kind,
          format: input.format,
          status: 'queued' as const,
          rowCount: 0,
          filters,
          createdAt: now,
          completedAt: null,
          expiresAt: null,
        }
      },
      run: (view) => view,
    })
    // The signed call's answer commits with the export (decision 0035).
    await record?.(tx, view)
    return view
  })
}

export async function getExport(
  deps: Deps,
  merchantId: string,
  exportId: string,
  scope: ExportScope = 'statement',
): Promise<ExportView> {
  const row = await repo.findExportById(deps.db, merchantId, exportId, scope)
  if (!row) throw transactionsError(scope === 'statement' ? 'export_not_found' : 'report_not_found')
  return exportRowToView(row)
}

/** The merchant's most recent reports (the dashboard's list). */
export async function listRecentReports(
  deps: Deps,
  merchantId: string,
  limit: number,
): Promise<ExportView[]> {
  return (await repo.findRecentReports(deps.db, merchantId, limit)).map(exportRowToView)
}

const CONTENT_TYPES: Record<ExportFormat, string> = {
  csv: 'text/csv; charset=utf-8',
  pdf: 'application/pdf',
}

/** The ready file as a stream of its chunks; 409 SVC-STATE-3401 in any other state. */
export async function openExportDownload(
  deps: Deps,
  merchantId: string,
  exportId: string,
  scope: ExportScope = 'statement',
): Promise<ExportDownload> {
  const row = await repo.findExportById(deps.db, merchantId, exportId, scope)
  const report = scope === 'report'
  if (!row) throw transactionsError(report ? 'report_not_found' : 'export_not_found')
  if (row.status === 'failed') throw transactionsError(report ? 'report_failed' : 'export_failed')
  if (row.status === 'expired') {
    throw transactionsError(report ? 'report_expired' : 'export_expired')
  }
  if (row.status !== 'ready') {
    throw transactionsError(report ? 'report_not_ready' : 'export_not_ready')
  }
  const { attempt, chunk_count: count } = row
  const db = deps.db
  async function* chunks(): AsyncGenerator<Buffer> {
    for (let seq = 0; seq < count; seq++) {
      const chunk = await repo.findChunk(db, exportId, attempt, seq)
      // Only expiry deletes a ready file's chunks; a download racing it ends short, and the
      // client sees a body shorter than its Content-Length.
      if (!chunk) throw new Error(`export ${exportId}: chunk ${seq} is gone`)
      yield Buffer.from(chunk.data.buffer, chunk.data.byteOffset, chunk.data.byteLength)
    }
  }
  return {
    fileName: `${row.kind === 'statement' ? 'transactions' : row.kind.replace('_', '-')}-${exportId}.${row.format}`,
    contentType: CONTENT_TYPES[row.format],
    byteSize: row.byte_size,
    chunks: chunks(),
  }
}

async function* exportBatches(
  deps: Deps,
  merchantId: string,
  filters: TransactionFilters,
): AsyncGenerator<PaymentSearchEntry[]> {
  let after: PaymentSearchEntry['position'] | undefined
  for (;;) {
    const rows = await searchPayments(deps, { ...filters, merchantId }, after, EXPORT_BATCH)
    if (rows.length > 0) yield rows
    const last = rows.at(-1)
    if (rows.length < EXPORT_BATCH || !last) return
    after = last.position
  }
}

/** A statement's file: the export's payments in keyset batches. Returns the row count. */
async function writeStatement(deps: Deps, claimed: ExportRow, out: ChunkWriter): Promise<number> {
  const { id: exportId, attempt } = claimed
  const merchant = await getMerchant(deps, claimed.merchant_id)
  // The renderers (pdfkit and its fonts, csv-stringify) are loaded by the first export, in
  // the process that builds it: an API process that never builds one does not hold them
  // (docs/performance.md, "Round 3, part 3: memory").
  const renderer: StatementRenderer =
    claimed.format === 'csv'
      ? new (await import('./export-csv.ts')).CsvStatement(out)
      : new (await import('./export-pdf.ts')).PdfStatement(out, {
          exportId,
          merchantName: merchant.name,
          filters: claimed.filters,
          snapshotAt: claimed.snapshot_at,
        })
  renderer.begin()
  let rowCount = 0
  const filters = searchFilters(readFilters(claimed.filters), claimed.snapshot_at)
  for await (const batch of exportBatches(deps, claimed.merchant_id, filters)) {
    renderer.rows(batch)
    rowCount += batch.length
    await out.flushFull()
    await repo.updateExportProgress(deps.db, exportId, attempt, rowCount, deps.clock.now())
  }
  await renderer.end()
  return rowCount
}

/**
 * The build job. A job does not necessarily build the export it was enqueued for: it resumes
 * the export it already owns (pg-boss retrying it), or else claims the fairest queued export
 * of any merchant (repo.claimNextExport); `jobKey` is the export id in the job's payload, which
 * names the job. Every export enqueues one job, so every queued export is eventually claimed.
 * A retry starts a new attempt whose chunks replace the earlier attempt's. Errors are thrown
 * for pg-boss to retry this job, except on the last attempt, which marks the export failed.
 */
export async function buildExport(deps: Deps, jobKey: string): Promise<void> {
  const claimedAt = deps.clock.now()
  const claimed =
    (await repo.resumeExportBuild(deps.db, jobKey, claimedAt)) ??
    (await repo.claimNextExport(deps.db, jobKey, claimedAt))
  if (!claimed) return
  const { id: exportId, attempt } = claimed
  try {
    await repo.deleteChunksExceptAttempt(deps.db, exportId, attempt)
    const out = new ChunkWriter(deps.db, exportId, attempt)
    const rowCount =
      claimed.kind === 'statement'
        ? await writeStatement(deps, claimed, out)
        : await (
            await import('./report-build.ts')
          ).writeReport(deps, claimed, out, (rows) =>
            repo.updateExportProgress(deps.db, exportId, attempt, rows, deps.clock.now()),
          )
    const file = await out.finish()
    const now = deps.clock.now()
    const ready = await repo.markExportReady(deps.db, exportId, attempt, {
      rowCount,
      ...file,
      now,
      expiresAt: new Date(now.getTime() + EXPORT_RETENTION_MS),
    })
    // Not ready: a newer attempt took the export over (this one outlived its job's
    // timeout); that attempt's result stands and this one's chunks are garbage.
    if (ready) await repo.deleteChunksExceptAttempt(deps.db, exportId, attempt)
    else await repo.deleteChunksOfAttempt(deps.db, exportId, attempt)
  } catch (error) {
    if (attempt < EXPORT_ATTEMPTS_MAX) throw error
    deps.log.error({ err: error, exportId, attempt }, 'export failed on its last attempt')
    const message = error instanceof Error ? error.message : String(error)
    if (await repo.markExportFailed(deps.db, exportId, ['processing'], message, deps.clock.now())) {
      await repo.deleteAllChunks(deps.db, exportId)
    }
  }
}

/**
 * The export reconciler: ready files past their 7 days become `expired` and their chunks
 * are deleted; exports abandoned by every build attempt become `failed`.
 */
export async function reconcileExports(deps: Deps): Promise<number> {
  const now = deps.clock.now()
  let moved = 0
  for (const { id } of await repo.findExpiredExports(deps.db, now, RECONCILE_BATCH)) {
    if (await transact(deps.db, (tx) => repo.expireExport(tx, id, now))) moved++
  }
  const abandonedBefore = new Date(now.getTime() - ABANDONED_AFTER_MS)
  for (const row of await repo.findAbandonedExports(deps.db, abandonedBefore, RECONCILE_BATCH)) {
    assert(row.status === 'queued' || row.status === 'processing', 'abandoned export state')
    const failed = await repo.markExportFailed(
      deps.db,
      row.id,
      [row.status],
      'the export was not built in time; request a new one',
      now,
    )
    if (failed) {
      await repo.deleteAllChunks(deps.db, row.id)
      moved++
    }
  }
  return moved
}
