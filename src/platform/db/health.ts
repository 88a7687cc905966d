/** Where the breaker writes its two lines (a pino logger; not imported: logger.ts imports this). */
interface HealthLog {
  error(fields: object, message: string): void
  info(fields: object, message: string): void
}

// The database circuit breaker (decision 0037). While PostgreSQL cannot be reached, every
// request that needs it would wait for a connection that never comes, fail with a driver
// error, and log a stack: an outage became 500s after seconds and hundreds of stack traces.
// Instead the first connection-class error opens the breaker: from then on requests are
// answered 503 SVC-INT-9002 with Retry-After at once, without touching the pool, and one
// probe at a time asks the server `select 1` every PROBE_INTERVAL_MS. The first answer closes
// the breaker. Each change of state is one log line.

/** How often an open breaker probes the database: recovery is seen within this (plus a connect). */
const PROBE_INTERVAL_MS = 250

/** The breaker is open: the request was not sent to the database. */
export class DatabaseUnavailableError extends Error {
  override readonly name = 'DatabaseUnavailableError'
  constructor() {
    super('the database is unreachable')
  }
}

const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
  // admin_shutdown, crash_shutdown, cannot_connect_now (starting up or shutting down)
  '57P01',
  '57P02',
  '57P03',
])

const CONNECTION_MESSAGES = [
  // DatabaseUnavailableError's, as pg-boss re-emits it (a plain copy of the error).
  'the database is unreachable',
  'Connection terminated',
  'connection timeout',
  'Client has encountered a connection error',
  'the database system is starting up',
  'the database system is shutting down',
]

/**
 * An error that says the server is not there (refused, reset, terminated, a connect that
 * timed out), as opposed to one a query caused. Waiting for a free pool connection
 * ("timeout exceeded when trying to connect") is load, not an outage: not one of these.
 */
export function isConnectionError(error: unknown): boolean {
  if (error instanceof DatabaseUnavailableError) return true
  if (typeof error !== 'object' || error === null) return false
  const { code, message, cause } = error as { code?: unknown; message?: unknown; cause?: unknown }
  if (typeof code === 'string' && (CONNECTION_CODES.has(code) || code.startsWith('08'))) {
    return true
  }
  if (typeof message === 'string' && CONNECTION_MESSAGES.some((m) => message.includes(m))) {
    return true
  }
  // AggregateError (a refused connect to every address of a host) and wrapped causes.
  const errors = (error as { errors?: unknown }).errors
  if (Array.isArray(errors) && errors.some(isConnectionError)) return true
  return cause !== undefined && cause !== error && isConnectionError(cause)
}

/**
 * pg-pool gave up waiting for a free connection (connectionTimeoutMillis): every connection is
 * busy with other requests. That is load, and the request is shed (503 SVC-GW-1005), so that
 * an overload is answered with Retry-After rather than queued into the client's timeout.
 */
export function isPoolWaitTimeout(error: unknown): boolean {
  return error instanceof Error && error.message === 'timeout exceeded when trying to connect'
}

export class DatabaseHealth {
  private open = false
  private timer: NodeJS.Timeout | undefined
  private closed = false
  /** Answered once: before that a failure is the start's to report (main.ts), not an outage. */
  private seen = false
  private readonly probe: () => Promise<void>
  private readonly log: HealthLog | undefined

  constructor(probe: () => Promise<void>, log?: HealthLog) {
    this.probe = probe
    this.log = log
  }

  /** True while the breaker is open: callers fail fast with DatabaseUnavailableError. */
  get down(): boolean {
    return this.open
  }

  /** Throws DatabaseUnavailableError while the breaker is open. */
  check(): void {
    if (this.open) throw new DatabaseUnavailableError()
  }

  /** A database call succeeded. */
  succeeded(): void {
    this.seen = true
  }

  /** A database call failed: a connection-class error opens the breaker. */
  failed(error: unknown): void {
    if (this.open || this.closed || !isConnectionError(error)) return
    this.open = true
    if (this.seen) {
      this.log?.error(
        { event: 'database_down', reason: error instanceof Error ? error.message : String(error) },
        'database unreachable: requests are answered 503 SVC-INT-9002 until it answers again',
      )
    }
    this.schedule()
  }

  private schedule(): void {
    if (this.closed) return
    this.timer = setTimeout(() => void this.tryProbe(), PROBE_INTERVAL_MS)
    this.timer.unref()
  }

  private async tryProbe(): Promise<void> {
    try {
      await this.probe()
    } catch {
      this.schedule()
      return
    }
    if (!this.open) return
    this.open = false
    if (this.seen)
      this.log?.info({ event: 'database_up' }, 'database reachable again: serving requests')
  }

  close(): void {
    this.closed = true
    if (this.timer) clearTimeout(this.timer)
  }
}
