import type { FastifyInstance, FastifyPluginAsync, FastifyRequest } from 'fastify'
import type { Deps } from '../../database.ts'
import { AppError } from '../../platform/errors.ts'
import { authOf } from '../../platform/http/auth.ts'
import { gatewayError } from './gateway.errors.ts'
import type { IdempotencyIdentity } from './gateway.repository.ts'
import {
  authenticate,
  beginIdempotentRequest,
  finishIdempotentRequest,
  validateIdempotencyKey,
} from './gateway.service.ts'
import type { RateLimiter } from './rate-limit.ts'

declare module 'fastify' {
  interface FastifyRequest {
    idempotency: IdempotencyIdentity | null
  }
}

function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name]
  return Array.isArray(value) ? value.join(', ') : value
}

const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])

export interface SignedApiOptions {
  deps: Deps
  rateLimiter: RateLimiter
  routes: FastifyPluginAsync[]
}

/**
 * The encapsulated context of every signed route: authentication before anything about
 * the body is said, then the per-key rate limit, then scope and KYC, then idempotency.
 */
export async function signedApi(app: FastifyInstance, opts: SignedApiOptions): Promise<void> {
  const { deps, rateLimiter } = opts
  app.decorateRequest('auth', null)
  app.decorateRequest('idempotency', null)

  app.addHook('preValidation', async (request, reply) => {
    request.auth = await authenticate(deps, {
      apiKey: header(request, 'x-api-key'),
      signature: header(request, 'x-signature'),
      timestamp: header(request, 'x-timestamp'),
      method: request.method,
      path: request.url.split('?')[0] ?? '',
      rawBody: request.rawBody,
    })
    request.log = request.log.child({ merchantId: request.auth.merchantId })
    reply.log = request.log
    const decision = await rateLimiter.take(`key:${request.auth.apiKeyId}`)
    if (!decision.allowed) {
      throw new AppError('SVC-GW-1004', 429, 'rate limit exceeded', undefined, undefined, {
        'retry-after': String(decision.retryAfterSeconds),
      })
    }
    if (request.bodyParseFailed) throw gatewayError('body_not_json')
  })

  app.addHook('preHandler', async (request, reply) => {
    const auth = authOf(request)
    const scopes = request.routeOptions.config.scopes ?? ['merchant']
    if (!scopes.includes(auth.scope)) throw gatewayError('scope_forbidden')
    if (request.routeOptions.config.requireKyc && auth.kycStatus !== 'approved') {
      throw gatewayError('kyc_not_approved')
    }
    const key = header(request, 'idempotency-key')
    if (key === undefined || !MUTATING.has(request.method)) return
    validateIdempotencyKey(key)
    const identity = {
      apiKeyId: auth.apiKeyId,
      endpoint: `${request.method} ${request.url.split('?')[0] ?? ''}`,
      key: key.toLowerCase(),
    }
    const start = await beginIdempotentRequest(deps, identity, request.rawBody, request.id)
    if (start.kind === 'proceed') {
      request.idempotency = identity
      return
    }
    // Verbatim replay: the original status, body and X-Request-Id.
    reply.replayedRequestId = start.requestId
    return reply
      .code(start.status)
      .header('idempotent-replayed', 'true')
      .type(start.contentType)
      .send(start.body)
  })

  app.addHook('onSend', async (request, reply, payload) => {
    const identity = request.idempotency
    if (!identity) return payload
    request.idempotency = null
    const body = typeof payload === 'string' ? payload : Buffer.isBuffer(payload) ? payload : null
    try {
      if (body === null) {
        // A streamed response cannot be stored for replay; release the key instead.
        await finishIdempotentRequest(deps, identity, request.id, {
          status: 500,
          body: '',
          contentType: '',
        })
        return payload
      }
      const text = body.toString()
      let errorCode: string | undefined
      if (reply.statusCode >= 400) {
        try {
          errorCode = (JSON.parse(text) as { code?: string }).code
        } catch {
          errorCode = undefined
        }
      }
      await finishIdempotentRequest(deps, identity, request.id, {
        status: reply.statusCode,
        body: text,
        contentType: String(reply.getHeader('content-type') ?? 'application/json'),
        ...(errorCode ? { errorCode } : {}),
      })
    } catch (error) {
      // The response still goes out; the key stays claimed and a retry after the stale
      // window re-runs the request, which the domain fences keep from acting twice.
      request.log.error({ err: error }, 'could not record the idempotent response')
    }
    return payload
  })

  for (const routes of opts.routes) await app.register(routes)
}
