import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { Deps } from '../../database.ts'
import { authOf } from '../../platform/http/auth.ts'
import { errorResponses, isoZ } from '../../platform/http/schemas.ts'
import { RequestLogList, RequestLogQuery } from './request-logs.schemas.ts'
import { listRequestLogs, RequestLogWriter, type RequestLog } from './request-logs.service.ts'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** false: the route's requests stay out of the request log (reading the log itself). */
    requestLog?: boolean
  }
}

// Error bodies are small envelopes; anything larger is not one and is not parsed.
const ERROR_BODY_MAX = 16 * 1024
const SVC_CODE = /^SVC-[A-Z0-9]+-\d{4}$/

function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name]
  return Array.isArray(value) ? value[0] : value
}

/** The SVC code of an error answer's envelope, if the payload is one. */
function errorCodeOf(payload: unknown): string | null {
  const text =
    typeof payload === 'string' ? payload : Buffer.isBuffer(payload) ? payload.toString() : null
  if (text === null || text.length > ERROR_BODY_MAX) return null
  try {
    const code = (JSON.parse(text) as { code?: unknown } | null)?.code
    return typeof code === 'string' && SVC_CODE.test(code) ? code : null
  } catch {
    return null
  }
}

/**
 * Records every request the gateway authenticated (request.auth set: a signed merchant or
 * submerchant key), and every one it refused for a key of a merchant's (request.refusedAuth,
 * with the reason), once its answer is sent. Installed on the root instance before the signed
 * API is registered, so its hooks run for the signed routes without the gateway knowing; a
 * request refused before it was authenticated has no merchant to belong to and is not kept.
 */
export function installRequestLog(app: FastifyInstance, deps: Deps): void {
  const writer = new RequestLogWriter(deps.db, deps.log)
  const errorCodes = new WeakMap<FastifyRequest, string>()
  // Callback hooks: nothing here waits, and an async hook costs a promise per request.
  app.addHook('onSend', (request, reply, payload, done) => {
    if ((request.auth ?? request.refusedAuth) && reply.statusCode >= 400) {
      const code = errorCodeOf(payload)
      if (code !== null) errorCodes.set(request, code)
    }
    done(null, payload)
  })
  app.addHook('onResponse', (request: FastifyRequest, reply: FastifyReply, done) => {
    // A refused request counts when its key is one of the merchant's (the gateway says so):
    // a bad signature or a skewed clock is the commonest integration mistake.
    const auth = request.auth ?? request.refusedAuth
    if (!auth || request.routeOptions.config.requestLog === false) {
      done()
      return
    }
    writer.record({
      merchantId: auth.merchantId,
      submerchantId: auth.submerchantId,
      apiKeyId: auth.apiKeyId,
      apiKey: header(request, 'x-api-key'),
      mode: deps.config.env,
      requestId: reply.replayedRequestId ?? request.id,
      method: request.method,
      url: request.url,
      route: request.routeOptions.url ?? null,
      status: reply.statusCode,
      errorCode: errorCodes.get(request) ?? null,
      reason: request.refusedAuth?.reason ?? null,
      durationMs: reply.elapsedTime,
      idempotencyKey: header(request, 'idempotency-key'),
      at: deps.clock.now(),
    })
    done()
  })
  app.addHook('onClose', () => writer.close())
}

function logJson(l: RequestLog) {
  return { ...l, createdAt: isoZ(l.createdAt) }
}

/** GET /v1/logs: the merchant's own requests (signed; a submerchant key sees its parent's). */
export function requestLogsRoutes(deps: Deps): FastifyPluginAsync {
  return async (plain) => {
    const app = plain.withTypeProvider<TypeBoxTypeProvider>()
    app.get(
      '/v1/logs',
      {
        // Reading the log is not logged: `kurus logs tail` polls it every second or two.
        config: { requestLog: false },
        schema: {
          operationId: 'logs.list',
          tags: ['logs'],
          summary: "List the merchant's API requests, newest first",
          description:
            'Every signed request of the last 7 days (KURUS_REQUEST_LOG_RETENTION_DAYS): ' +
            'method, path, status, SVC error code, duration, key and Idempotency-Key; requests ' +
            'refused with 401 for one of your keys too, with the reason (bad signature, skewed ' +
            'clock, missing header). Bodies, ' +
            'card data and secrets are never kept. Lines appear within about a second. ' +
            'Requests to this route are not logged.',
          querystring: RequestLogQuery,
          response: { 200: RequestLogList, ...errorResponses },
        },
      },
      async (request) => {
        const { since, ...rest } = request.query
        const page = await listRequestLogs(deps, authOf(request).merchantId, {
          ...rest,
          since: since === undefined ? undefined : new Date(since),
        })
        return { items: page.items.map(logJson), nextCursor: page.nextCursor }
      },
    )
  }
}
