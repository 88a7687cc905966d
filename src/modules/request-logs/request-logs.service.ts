import type { Db, Deps } from '../../database.ts'
import { assert } from '../../platform/assert.ts'
import { byCreatedAt, keysetCursor } from '../../platform/cursor.ts'
import { newId } from '../../platform/ids.ts'
import type { Logger } from '../../platform/logger.ts'
import * as repo from './request-logs.repository.ts'
import type { NewRequestLog, RequestLogRow } from './request-logs.table.ts'

// The merchant's API request log (docs/decisions/0032-request-log.md). A request never waits
// for its log line: the HTTP hook hands the finished request to a RequestLogWriter, which
// buffers rows in memory and inserts them in batches (every FLUSH_MS, at BATCH_ROWS rows, and
// on close). Each API process has its own writer and writes its own rows (ids are random, so
// several processes never collide); a process killed without closing loses at most its last
// half second of lines — a log, not a record of money.

/** How often the buffer is written. */
const FLUSH_MS = 500
/** A buffer this full is written at once instead of waiting for the timer. */
const BATCH_ROWS = 200
/** Rows kept while the database refuses them; beyond this the oldest are dropped. */
const BUFFER_MAX = 10_000
/** Inserts of one batch tried before it is given up. */
const FAILURES_MAX = 3
const LOGS_LIMIT_MAX = 100
const PURGE_BATCH = 5000
const PURGE_BATCHES_MAX = 100
const PATH_MAX = 1024
const IDEMPOTENCY_KEY_MAX = 255

/** What the HTTP hook knows of a finished signed request. */
interface RequestLogEntry {
  merchantId: string
  submerchantId: string | null
  apiKeyId: string
  /** The X-Api-Key header (a public key); only its first characters are kept. */
  apiKey: string | undefined
  mode: 'demo' | 'live'
  requestId: string
  method: string
  /** The URL as requested; the query string is dropped. */
  url: string
  route: string | null
  status: number
  errorCode: string | null
  /** Why the gateway refused the request (bad signature, skewed clock…), if it did. */
  reason: string | null
  durationMs: number
  idempotencyKey: string | undefined
  at: Date
}

// A path segment (or query value) that starts with a run of 12–19 digits could be a card
// number someone put in a URL: it is never written, whatever the route. Our ids start with a
// letter prefix (`pay_…`), so a digit run inside one is left alone.
const DIGIT_RUN = /(?<![A-Za-z0-9_])\d{12,19}(?!\d)/g

/** The row of an entry: metadata only, bounded, with anything that could be a PAN removed. */
function requestLogRow(entry: RequestLogEntry): NewRequestLog {
  const path = (entry.url.split('?')[0] ?? '').replace(DIGIT_RUN, '[redacted]').slice(0, PATH_MAX)
  return {
    id: newId('req'),
    merchant_id: entry.merchantId,
    submerchant_id: entry.submerchantId,
    api_key_id: entry.apiKeyId,
    // `pk_demo_` or `pk_live_` and four characters: enough to tell keys apart.
    key_prefix: (entry.apiKey ?? '').slice(0, 12),
    mode: entry.mode,
    request_id: entry.requestId,
    method: entry.method,
    path,
    route: entry.route,
    status: entry.status,
    error_code: entry.errorCode,
    reason:
      entry.reason === null ? null : entry.reason.replace(DIGIT_RUN, '[redacted]').slice(0, 500),
    duration_ms: Math.max(0, Math.round(entry.durationMs)),
    idempotency_key:
      entry.idempotencyKey === undefined
        ? null
        : entry.idempotencyKey.slice(0, IDEMPOTENCY_KEY_MAX),
    created_at: entry.at,
  }
}

/** One process's buffer of log rows and their batched inserts. */
export class RequestLogWriter {
  readonly #db: Db
  readonly #log: Logger
  #buffer: NewRequestLog[] = []
  #writing: Promise<void> = Promise.resolve()
  readonly #timer: NodeJS.Timeout
  #dropped = 0
  #failures = 0

  constructor(db: Db, log: Logger, flushMs = FLUSH_MS) {
    this.#db = db
    this.#log = log
    this.#timer = setInterval(() => void this.flush(), flushMs)
    // The timer alone never keeps a process alive; close() writes what is left.
    this.#timer.unref()
  }

  record(entry: RequestLogEntry): void {
    this.#buffer.push(requestLogRow(entry))
    if (this.#buffer.length > BUFFER_MAX) {
      this.#dropped += this.#buffer.length - BUFFER_MAX
      this.#buffer.splice(0, this.#buffer.length - BUFFER_MAX)
    }
    if (this.#buffer.length >= BATCH_ROWS) void this.flush()
  }

  /** Writes what is buffered (after any write in flight: one insert at a time). */
  flush(): Promise<void> {
    this.#writing = this.#writing.then(() => this.#write())
    return this.#writing
  }

  async #write(): Promise<void> {
    if (this.#dropped > 0) {
      this.#log.warn({ dropped: this.#dropped }, 'request log: rows dropped (buffer full)')
      this.#dropped = 0
    }
    while (this.#buffer.length > 0) {
      const batch = this.#buffer.splice(0, BATCH_ROWS)
      try {
        await repo.insertRequestLogs(this.#db, batch)
        this.#failures = 0
      } catch (error) {
        this.#failures++
        this.#log.warn({ err: error, rows: batch.length }, 'request log: insert failed')
        // Kept for the next flush (bounded by BUFFER_MAX), so a database blip loses no lines;
        // a batch refused FAILURES_MAX times in a row is dropped rather than block the rest.
        if (this.#failures < FAILURES_MAX) this.#buffer.unshift(...batch)
        else this.#failures = 0
        return
      }
    }
  }

  /** Stops the timer and writes the rest (the app's close, before the database closes). */
  async close(): Promise<void> {
    clearInterval(this.#timer)
    await this.flush()
  }
}

export interface RequestLog {
  id: string
  requestId: string
  method: string
  path: string
  route: string | null
  status: number
  errorCode: string | null
  reason: string | null
  durationMs: number
  apiKeyId: string
  keyPrefix: string
  mode: 'demo' | 'live'
  submerchantId: string | null
  idempotencyKey: string | null
  createdAt: Date
}

function rowToRequestLog(row: RequestLogRow): RequestLog {
  return {
    id: row.id,
    requestId: row.request_id,
    method: row.method,
    path: row.path,
    route: row.route,
    status: row.status,
    errorCode: row.error_code,
    reason: row.reason,
    durationMs: row.duration_ms,
    apiKeyId: row.api_key_id,
    keyPrefix: row.key_prefix,
    mode: row.mode,
    submerchantId: row.submerchant_id,
    idempotencyKey: row.idempotency_key,
    createdAt: row.created_at,
  }
}

export interface RequestLogQuery {
  limit: number
  cursor?: string | undefined
  /** `4xx` (a class) or `404` (one status). */
  status?: string | undefined
  since?: Date | undefined
  method?: string | undefined
}

function statusRange(status: string | undefined): { min?: number; max?: number } {
  if (status === undefined) return {}
  const cls = /^([1-5])xx$/.exec(status)
  if (cls) return { min: Number(cls[1]) * 100, max: Number(cls[1]) * 100 + 99 }
  assert(/^[1-5]\d\d$/.test(status), 'status: the schema admits a class or a status')
  return { min: Number(status), max: Number(status) }
}

/**
 * The merchant's requests, newest first, in keyset pages. The cursor names the filters it was
 * made under, so a cursor replayed with other filters is refused (400) rather than skipping.
 */
export function listRequestLogs(
  deps: Deps,
  merchantId: string,
  q: RequestLogQuery,
): Promise<{ items: RequestLog[]; nextCursor: string | null }> {
  assert(Number.isInteger(q.limit) && q.limit >= 1 && q.limit <= LOGS_LIMIT_MAX, 'limit')
  const { min, max } = statusRange(q.status)
  const kind = `request_logs:${q.status ?? ''}:${q.since?.toISOString() ?? ''}:${q.method ?? ''}`
  return keysetCursor(kind, 'kurus/request-logs/list').page(deps.config.masterKey, merchantId, q, {
    // A log is not a decision: the replica (if any) is good enough, and spares the primary.
    fetch: (before, limit) =>
      repo.findRequestLogPage(deps.readDb, {
        merchantId,
        before,
        limit,
        statusMin: min,
        statusMax: max,
        since: q.since,
        method: q.method,
      }),
    view: (rows) => rows.map(rowToRequestLog),
    position: byCreatedAt,
  })
}

/** Deletes requests older than the retention (KURUS_REQUEST_LOG_RETENTION_DAYS, default 7). */
export async function purgeRequestLogs(deps: Deps): Promise<number> {
  const cutoff = new Date(
    deps.clock.now().getTime() - deps.config.requestLogRetentionDays * 24 * 60 * 60 * 1000,
  )
  let total = 0
  for (let i = 0; i < PURGE_BATCHES_MAX; i++) {
    const deleted = await repo.deleteRequestLogsBefore(deps.db, cutoff, PURGE_BATCH)
    total += deleted
    if (deleted < PURGE_BATCH) break
  }
  return total
}
