import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { isConnectionError, isPoolWaitTimeout } from '../db/health.ts'
import { AppError, type FieldIssue } from '../errors.ts'

/**
 * The database cannot be reached (the circuit breaker is open, or a query just failed for
 * want of a server): 503 with Retry-After, so that clients and the SDK retry, instead of a
 * 500 after a long wait. The breaker logs the outage once; requests log nothing more.
 */
/**
 * Load shedding's answer (SVC-GW-1005): beyond the in-flight limit (load-shedding.ts), or when
 * an admitted request has waited its bound for a database connection (db/connect.ts).
 */
export function busy(): AppError {
  return new AppError(
    'SVC-GW-1005',
    503,
    'the service is busy; retry shortly',
    undefined,
    undefined,
    { 'retry-after': '1' },
  )
}

export function databaseUnavailable(): AppError {
  return new AppError(
    'SVC-INT-9002',
    503,
    'the service cannot reach its database; retry after Retry-After',
    undefined,
    undefined,
    { 'retry-after': '1' },
  )
}

interface AjvIssue {
  instancePath?: string
  message?: string
  keyword?: string
  params?: Record<string, unknown>
  /** Set by `propertyNames` checks: the key that failed (e.g. a too long metadata key). */
  propertyName?: string
}

function fieldIssues(context: string | undefined, issues: AjvIssue[]): FieldIssue[] {
  // A propertyNames failure comes as the key's own issue plus a generic wrapper: keep the first.
  const shown = issues.length > 1 ? issues.filter((i) => i.keyword !== 'propertyNames') : issues
  return shown.map((issue) => {
    const path = (issue.instancePath ?? '').replace(/^\//, '').replace(/\//g, '.')
    const params = issue.params ?? {}
    const extra =
      typeof params['missingProperty'] === 'string'
        ? params['missingProperty']
        : typeof params['additionalProperty'] === 'string'
          ? params['additionalProperty']
          : (issue.propertyName ?? '')
    const field = [path, extra].filter(Boolean).join('.') || (context ?? 'body')
    const reason =
      issue.keyword === 'additionalProperties'
        ? 'unknown field'
        : issue.keyword === 'required'
          ? 'is required'
          : `${issue.propertyName === undefined ? '' : 'key '}${issue.message ?? 'is invalid'}`
    return { field, reason }
  })
}

/** Maps any thrown error to the spec's envelope. Unknown errors never leak their message. */
export function toAppError(error: FastifyError | Error): AppError {
  if (error instanceof AppError) return error
  const fe = error as FastifyError & { validation?: AjvIssue[] }
  if (fe.validation) {
    const details = fieldIssues(fe.validationContext, fe.validation)
    const first = details[0]
    const message = first ? `${first.field}: ${first.reason}` : 'request is invalid'
    return new AppError('SVC-VAL-3001', 400, message, details)
  }
  switch (fe.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new AppError(
        'SVC-VAL-3003',
        413,
        'request body is larger than the limit (1 MiB; 5 MiB for a file upload)',
      )
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new AppError('SVC-VAL-3004', 415, 'request body must be application/json')
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new AppError('SVC-VAL-3002', 400, 'request body is not valid JSON')
    default:
      break
  }
  // PostgreSQL refuses NUL in text (22021) and \u0000 in jsonb (22P05). Only client input
  // (a path, query or body string) can carry one there, so it is a 400, not a 500.
  const sqlState = (error as { code?: unknown }).code
  if (sqlState === '22021' || sqlState === '22P05') {
    return new AppError('SVC-VAL-3001', 400, 'text must not contain NUL (\\u0000) characters')
  }
  if (error instanceof SyntaxError) {
    return new AppError('SVC-VAL-3002', 400, 'request body is not valid JSON')
  }
  if (isConnectionError(error)) return databaseUnavailable()
  if (isPoolWaitTimeout(error)) return busy()
  const status = fe.statusCode
  if (typeof status === 'number' && status >= 400 && status < 500) {
    if (status === 404) return new AppError('SVC-RES-3301', 404, 'not found')
    if (status === 413) return new AppError('SVC-VAL-3003', 413, 'request body is too large')
    if (status === 415) return new AppError('SVC-VAL-3004', 415, 'unsupported media type')
    return new AppError('SVC-VAL-3001', 400, 'bad request')
  }
  return new AppError('SVC-INT-9001', 500, 'internal error; quote the requestId to support')
}

/** The spec's error envelope of `error` for request `requestId`. */
export function errorEnvelope(requestId: string, error: AppError) {
  return {
    code: error.code,
    message: error.message,
    requestId,
    ...(error.details ? { details: error.details } : {}),
    ...error.extra,
  }
}

export function sendError(request: FastifyRequest, reply: FastifyReply, error: AppError) {
  if (error.headers) void reply.headers(error.headers)
  // Fastify's "request completed" line is written with reply.log: it then says which error
  // the status was (402 alone does not tell a decline from a risk block).
  reply.log = reply.log.child({ errorCode: error.code })
  return reply
    .code(error.status)
    .type('application/json; charset=utf-8')
    .send(errorEnvelope(request.id, error))
}

/**
 * Errors Fastify raises before a route is matched (Fastify's `frameworkErrors` option): a
 * malformed URL, or a path parameter over the router's length limit (no id is that long, so
 * it names nothing: 404). Without this they would go out in Fastify's own shape.
 */
export function sendFrameworkError(
  error: FastifyError,
  request: FastifyRequest,
  reply: FastifyReply,
): void {
  const appError =
    error.code === 'FST_ERR_MAX_PARAM_LENGTH'
      ? new AppError('SVC-RES-3301', 404, 'not found')
      : error.code === 'FST_ERR_BAD_URL'
        ? new AppError('SVC-VAL-3001', 400, 'the URL is malformed')
        : toAppError(error)
  // No route, so no route hooks: the request id header is set here.
  void reply.header('x-request-id', request.id)
  void sendError(request, reply, appError)
}

// A body over the limit is refused before it is read (Fastify checks Content-Length first).
// Answering then and closing the connection resets a client still sending, and a client that
// sends the whole request before reading (curl, Python's requests, most SDKs) sees EPIPE, never
// the 413 (issue 36, finding 9). So the rest of the body is read and thrown away first, up to
// DRAIN_BYTES_MAX or DRAIN_MS_MAX (past either, the answer goes out anyway), then the 413 is
// sent with Connection: close. Nothing of the body is kept: the cost is the bytes on the wire.
const DRAIN_BYTES_MAX = 64 * 1024 * 1024
const DRAIN_MS_MAX = 30_000

function drainRequest(request: FastifyRequest): Promise<void> {
  const raw = request.raw
  if (raw.complete || raw.destroyed) return Promise.resolve()
  return new Promise((resolve) => {
    let seen = 0
    const finish = () => {
      clearTimeout(timer)
      raw.removeListener('data', onData)
      raw.removeListener('end', finish)
      raw.removeListener('error', finish)
      raw.removeListener('close', finish)
      resolve()
    }
    const onData = (chunk: Buffer) => {
      seen += chunk.length
      if (seen > DRAIN_BYTES_MAX) finish()
    }
    const timer = setTimeout(finish, DRAIN_MS_MAX)
    raw.on('data', onData)
    raw.once('end', finish)
    raw.once('error', finish)
    raw.once('close', finish)
    raw.resume()
  })
}

export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler(async (error: FastifyError, request, reply) => {
    const appError = toAppError(error)
    if (appError.status === 413) {
      await drainRequest(request)
      void reply.header('connection', 'close')
    }
    // A stack only for what nobody meant to throw. A deliberate 5xx (503 busy, a bank that did
    // not answer) is told by the access line's status and errorCode; under overload a stack
    // per shed request would spend the CPU the shedding is there to save.
    if (!(error instanceof AppError)) {
      // Only what nobody expected: an outage (9002) is logged by the database's breaker, and
      // a request shed while waiting for a connection (1005) by the access line.
      if (appError.code === 'SVC-INT-9001') {
        request.log.error({ err: error, requestId: request.id }, 'unhandled error')
      }
    } else if (appError.status >= 500 && appError.status !== 503) {
      request.log.warn({ errorCode: appError.code }, appError.message)
    }
    return sendError(request, reply, appError)
  })
  app.setNotFoundHandler((request, reply) =>
    sendError(request, reply, new AppError('SVC-RES-3301', 404, 'route not found')),
  )
}
