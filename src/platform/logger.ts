import { readFileSync, writeSync } from 'node:fs'
import type { FastifyBaseLogger } from 'fastify'
import { pino, type Logger as PinoLogger, type DestinationStream } from 'pino'
import { isConnectionError, isPoolWaitTimeout } from './db/health.ts'

export type Logger = PinoLogger

// Card data and secrets never reach a log line. Request bodies are not logged at all; these
// paths catch them anyway if someone logs an object that carries them.
export const REDACT_PATHS = [
  'req.headers["x-signature"]',
  'req.headers.authorization',
  'req.headers.cookie',
  'headers["x-signature"]',
  'headers.authorization',
  '*.cardNumber',
  '*.number',
  '*.cvc',
  '*.secretKey',
  '*.secret',
  '*.password',
  '*.pan',
  'card.number',
  'card.cvc',
  'body.card',
  'body.cardNumber',
  'body.cvc',
  'body.password',
]

/**
 * A URL as it may be logged: card-number-like digit runs (12 to 19 digits, spaces, dashes or
 * %20 between them) and secret keys masked. Clients do put card numbers in a query string
 * (a whole PAN as `bin=`) or a key in one; the request log must not keep them.
 */
export function redactUrl(url: string): string {
  return url
    .replace(/\d(?:(?:[ +-]|%20)?\d){11,18}/g, '[redacted-digits]')
    .replace(/\b(sk_(?:demo|live)_)[A-Za-z0-9_-]+/g, '$1[redacted]')
}

interface LoggedRequest {
  method?: string
  url?: string
  host?: string
  ip?: string
  socket?: { remotePort?: number }
}

const WARN = 40

/** Bytes of log lines buffered before they are written (a dozen access lines). */
const LOG_BATCH_BYTES = 4096
/** The longest a buffered line waits for its write. */
const LOG_FLUSH_MS = 200

/** The release: package.json's version (the image copies package.json beside src/). */
export const VERSION = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    version: string
  }
).version

const LOG_BASE = { pid: process.pid, service: 'kurus', version: VERSION }

// What a database error carries about the statement: its text and its parameters (an IBAN, a
// holder name, an email) and the failing row's values (`detail`: "Key (iban)=(TR…)"). None of
// it goes to a log line (decision 0036); the SQLSTATE `code`, the constraint and the message
// stay, which is what an operator needs.
const STATEMENT_FIELDS = [
  'query',
  'params',
  'parameters',
  'sql',
  'detail',
  'where',
  'internalQuery',
  'internalPosition',
]

function withoutStatement(serialized: unknown, depth = 0): unknown {
  if (typeof serialized !== 'object' || serialized === null || depth > 5) return serialized
  const out = Object.fromEntries(
    Object.entries(serialized).filter(([key]) => !STATEMENT_FIELDS.includes(key)),
  )
  if (out['cause'] !== undefined) out['cause'] = withoutStatement(out['cause'], depth + 1)
  return out
}

/** pino's error serializer, less the statement a database error carries. */
function serializeError(error: unknown): unknown {
  return withoutStatement(error instanceof Error ? pino.stdSerializers.err(error) : error)
}

/**
 * One JSON line in the same shape as the logger's, written synchronously: for what is said
 * before a logger exists or while the process is going down (a configuration error at start).
 */
export function writeLogLine(
  stream: NodeJS.WritableStream & { fd?: number },
  level: 'info' | 'warn' | 'error' | 'fatal',
  msg: string,
  fields: Record<string, unknown> = {},
): void {
  const levels = { info: 30, warn: 40, error: 50, fatal: 60 }
  const line = JSON.stringify({
    level: levels[level],
    time: Date.now(),
    ...LOG_BASE,
    ...fields,
    msg,
  })
  if (typeof stream.fd === 'number') writeSync(stream.fd, line + '\n')
  else stream.write(line + '\n')
}

/**
 * Lines go to stdout asynchronously and in batches: a synchronous write per line was the
 * largest single cost of a cached read (a write system call on the request's path, ~0.2 ms
 * here; issue 29), and an asynchronous write per line still cost a write and a thread-pool
 * hop per request whenever requests came one at a time (issue 43). Lines are held until
 * LOG_BATCH_BYTES are buffered or LOG_FLUSH_MS have passed. pino flushes what is buffered when
 * the process exits, including on an uncaught exception; a SIGKILL can lose the last
 * LOG_FLUSH_MS of lines (docs/performance.md).
 */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      // Every line says which process and which release wrote it (one format for all).
      base: LOG_BASE,
      hooks: {
        // A database outage fails every query of every request and timer at once. The
        // circuit breaker (db/health.ts) logs it once at error level and once when it ends;
        // the failures it causes are logged at debug, so an outage is two lines, not
        // hundreds of stack traces.
        logMethod(args, method, levelValue) {
          const first: unknown = args[0]
          if (
            levelValue >= WARN &&
            typeof first === 'object' &&
            first !== null &&
            (isConnectionError((first as { err?: unknown }).err) ||
              isPoolWaitTimeout((first as { err?: unknown }).err))
          ) {
            this.debug(...(args as [object, string]))
            return
          }
          method.apply(this, args)
        },
      },
      // Replaces Fastify's request serializer (same fields) so that URLs are redacted.
      serializers: {
        err: serializeError,
        req: (req: LoggedRequest) => ({
          method: req.method,
          url: req.url === undefined ? undefined : redactUrl(req.url),
          host: req.host,
          remoteAddress: req.ip,
          remotePort: req.socket?.remotePort,
        }),
      },
    },
    destination ??
      pino.destination({
        dest: 1,
        sync: false,
        minLength: LOG_BATCH_BYTES,
        periodicFlush: LOG_FLUSH_MS,
      }),
  )
}

/**
 * Adds fields to every later line of one request, in place. Each request's logger is its own
 * pino child (app.ts, childLoggerFactory), so no other request's lines change; a new child
 * per field set cost a logger object per request (issue 43's profile).
 */
export function bindRequestLog(log: FastifyBaseLogger, bindings: Record<string, unknown>): void {
  ;(log as FastifyBaseLogger & Pick<PinoLogger, 'setBindings'>).setBindings(bindings)
}
