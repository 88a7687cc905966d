import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import type { Redis } from 'ioredis'
import type { Db, Deps } from '../../database.ts'
import type { DbKind } from '../../platform/db/connect.ts'
import { AppError } from '../../platform/errors.ts'
import { failpoint } from '../../platform/failpoints.ts'
import { newUuid } from '../../platform/ids.ts'
import { authOf } from '../../platform/http/auth.ts'
import { bindRequestLog } from '../../platform/logger.ts'
import type { IdempotentAnswer, RecordedAnswer } from '../../platform/http/idempotent-answer.ts'
import { collectJsonUnparsed, parseJsonBody } from '../../platform/http/raw-body.ts'
import type { AuthFailureLimit } from './auth-failures.ts'
import { gatewayError } from './gateway.errors.ts'
import {
  beginIdempotentRequest,
  checkSignedHeaders,
  refusalOf,
  finishIdempotentRequest,
  claimIdempotentResource,
  holdProcessLease,
  idempotentAnswerCommitted,
  recordIdempotentAnswer,
  rejectReplay,
  type ClaimFields,
  validateIdempotencyKey,
  verifySignature,
  type ClaimOwner,
  type IdempotencyIdentity,
  type PendingSignedRequest,
} from './gateway.service.ts'
import type { RateLimiter } from './rate-limit.ts'
import { databaseReplayStore, memoryReplayStore, redisReplayStore } from './replay.ts'

declare module 'fastify' {
  interface FastifyRequest {
    idempotency: IdempotencyIdentity | null
    /** The use case's side of the Idempotency-Key record; null without a key. */
    idempotentAnswer: IdempotentAnswer<Db> | null
    /** Set once the headers passed (onRequest); the signature is checked after the body. */
    signedRequest: PendingSignedRequest | null
  }
}

function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name]
  return Array.isArray(value) ? value.join(', ') : value
}

const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])

// A body this small has usually arrived with the headers, so reading the rest costs nothing
// and closing would only risk the client missing the answer; beyond it the rest is dropped.
const UNREAD_BODY_CLOSE_BYTES = 64 * 1024

export interface SignedApiOptions {
  deps: Deps
  rateLimiter: RateLimiter
  /** The per-client limit on failed authentications, shared with the other authenticated APIs. */
  authFailures: AuthFailureLimit
  /**
   * Accepted signatures live in Redis when REDIS_URL is set; else in PostgreSQL's table, or in
   * memory on PGlite (one process by construction).
   */
  redis?: Redis | undefined
  dbKind: DbKind
  routes: FastifyPluginAsync[]
}

/**
 * The encapsulated context of every signed route. Work is spent on a request only as it
 * earns it: a client past its failed-authentication limit is refused first; then the headers
 * alone (key, timestamp window, signature format) before a byte of the body is read; then the
 * HMAC over the raw bytes; then the per-key rate limit and the replay check; only then is the
 * body parsed (with the nesting limit); then scope and KYC, then idempotency.
 */
export async function signedApi(app: FastifyInstance, opts: SignedApiOptions): Promise<void> {
  const { deps, rateLimiter } = opts
  const database =
    opts.dbKind === 'postgres'
      ? databaseReplayStore(deps.db, deps.clock)
      : memoryReplayStore(deps.db, deps.clock)
  const replays = opts.redis
    ? redisReplayStore({
        redis: opts.redis,
        keyPrefix: deps.config.redisKeyPrefix + 'sig:',
        clock: deps.clock,
        fallback: database,
        log: deps.log,
      })
    : database
  app.decorateRequest('auth', null)
  app.decorateRequest('refusedAuth', null)
  app.decorateRequest('idempotency', null)
  app.decorateRequest('idempotentAnswer', null)
  // This process as a holder of claims: a retry of a request that died here or in a process
  // whose lease lapsed resumes at once (decision 0035).
  const owner: ClaimOwner = { id: newUuid(), inFlight: new Set() }
  const orphans = new Map<string, { id: IdempotencyIdentity; requestId: string }>()
  const lease = holdProcessLease(deps, owner, orphans)
  app.addHook('onClose', async () => lease.stop())
  app.decorateRequest('signedRequest', null)
  opts.authFailures.install(app)
  collectJsonUnparsed(app)

  app.addHook('onRequest', async (request, reply) => {
    try {
      request.signedRequest = await checkSignedHeaders(deps, {
        apiKey: header(request, 'x-api-key'),
        signature: header(request, 'x-signature'),
        timestamp: header(request, 'x-timestamp'),
      })
    } catch (error) {
      // Refused on its headers with a large body still to come: close the connection after
      // the answer rather than read and discard the rest (Node's default for keep-alive).
      if (Number(request.headers['content-length'] ?? 0) > UNREAD_BODY_CLOSE_BYTES) {
        void reply.header('connection', 'close')
      }
      request.refusedAuth = await refusalOf(deps, header(request, 'x-api-key'), error)
      throw error
    }
  })

  app.addHook('preValidation', async (request) => {
    const pending = request.signedRequest
    if (!pending) throw gatewayError('api_key_invalid')
    try {
      request.auth = verifySignature(
        pending,
        request.method,
        request.url.split('?')[0] ?? '',
        request.rawBody,
      )
    } catch (error) {
      request.refusedAuth = await refusalOf(deps, header(request, 'x-api-key'), error)
      throw error
    }
    // The request's own child logger (app.ts), reply.log included: bound in place.
    bindRequestLog(request.log, { merchantId: request.auth.merchantId })
    const decision = await rateLimiter.take(`key:${request.auth.apiKeyId}`)
    if (!decision.allowed) {
      throw new AppError('SVC-GW-1004', 429, 'rate limit exceeded', undefined, undefined, {
        'retry-after': String(decision.retryAfterSeconds),
      })
    }
    if (MUTATING.has(request.method)) {
      await rejectReplay(replays, pending, header(request, 'idempotency-key'))
    }
    if (request.rawBody?.length) {
      // JSON, or what a route-scoped collector registered (multipart uploads): parsed only now,
      // after the signature over these exact bytes is verified.
      const parse = request.rawBodyParser
      request.body = parse ? await parse(request.rawBody, request) : parseJsonBody(request.rawBody)
    }
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
    // In flight from before its claim commits: a concurrent retry in this process must not
    // see the fresh claim as abandoned.
    owner.inFlight.add(request.id)
    let start
    try {
      start = await beginIdempotentRequest(
        deps,
        identity,
        request.rawBody,
        request.id,
        owner,
        request.routeOptions.config.deferredIdempotency ?? false,
      )
    } catch (error) {
      owner.inFlight.delete(request.id)
      throw error
    }
    if (start.kind !== 'proceed') owner.inFlight.delete(request.id)
    if (start.kind === 'proceed') {
      request.idempotency = identity
      request.idempotentAnswer = answerPort(identity, start.claim, start.resourceId, reply)
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

  // Callback hooks: a request without an Idempotency-Key (every read) waits for nothing
  // here, and an async hook costs a promise and a microtask per request (issue 43).
  app.addHook('onSend', (request, reply, payload, done) => {
    if (!request.idempotency) {
      done(null, payload)
      return
    }
    recordAnswer(request, reply, payload).then(
      (sent) => done(null, sent),
      (error: unknown) => done(error as Error),
    )
  })

  async function recordAnswer(request: FastifyRequest, reply: FastifyReply, payload: unknown) {
    const identity = request.idempotency
    if (!identity) return payload
    request.idempotency = null
    // The use case has committed. A route whose outcome transaction recorded the answer holds
    // it already; one that still falls back to the store below does not yet (decision 0035).
    failpoint('answer.before_record')
    const answer = request.idempotentAnswer
    // Out of flight only once its record is written (below, or by its outcome transaction):
    // until then a concurrent retry here must not see the claim as abandoned.
    if (answer?.recorded && payload === answer.recorded.body) {
      // Recorded by the use case's outcome transaction; what goes out are those bytes.
      owner.inFlight.delete(request.id)
      failpoint('answer.before_flush')
      return payload
    }
    const claim = answerClaims.get(request.id)
    answerClaims.delete(request.id)
    if (!claim) return payload
    const body = typeof payload === 'string' ? payload : Buffer.isBuffer(payload) ? payload : null
    try {
      if (body === null) {
        // A streamed response cannot be stored for replay; release the key instead.
        await finishIdempotentRequest(deps, identity, claim, {
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
      await finishIdempotentRequest(deps, identity, claim, {
        status: reply.statusCode,
        body: text,
        contentType: String(reply.getHeader('content-type') ?? 'application/json'),
        ...(errorCode ? { errorCode } : {}),
      })
    } catch (error) {
      // The response still goes out; the claim is given back by the lease loop once the
      // database answers again, and a retry then resumes what the claim made.
      orphans.set(`${identity.apiKeyId} ${identity.endpoint} ${identity.key}`, {
        id: identity,
        requestId: request.id,
      })
      request.log.error({ err: error }, 'could not record the idempotent response')
    }
    owner.inFlight.delete(request.id)
    failpoint('answer.before_flush')
    return payload
  }

  app.addHook('onResponse', (request, _reply, done) => {
    owner.inFlight.delete(request.id)
    answerClaims.delete(request.id)
    if (request.idempotentAnswer) failpoint('answer.after_flush')
    done()
  })

  // The claim fields of requests in flight, for onSend (the port keeps its own copy).
  const answerClaims = new Map<string, ClaimFields>()

  function answerPort(
    identity: IdempotencyIdentity,
    claim: ClaimFields,
    resumeId: string | null,
    reply: FastifyReply,
  ): IdempotentAnswer<Db> {
    answerClaims.set(claim.requestId, claim)
    let recorded: RecordedAnswer | null = null
    return {
      resumeId,
      get recorded() {
        return recorded
      },
      async claim(db, resourceId) {
        if (!(await claimIdempotentResource(db, identity, claim, resourceId))) {
          throw gatewayError('idempotency_in_progress')
        }
      },
      async record(db, status, payload) {
        // The route's own response serializer, so the recorded bytes are what it would send.
        const serialize = reply.getSerializationFunction(String(status))
        // A 204 goes out without a body: its record holds none either.
        const body =
          status === 204
            ? ''
            : serialize
              ? serialize(payload as Record<string, unknown>)
              : JSON.stringify(payload)
        const answer = {
          status,
          body,
          contentType: 'application/json; charset=utf-8',
        }
        if (!(await recordIdempotentAnswer(db, identity, claim, answer))) {
          throw gatewayError('idempotency_in_progress')
        }
        recorded = answer
      },
      async committed() {
        return idempotentAnswerCommitted(deps, identity, claim.requestId)
      },
    }
  }

  // Every POST, PUT, PATCH and DELETE here runs the idempotency step above: say so in the
  // OpenAPI document (src/platform/http/openapi.ts shows the header on these routes).
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method]
    if (methods.some((m) => MUTATING.has(m)))
      route.config = { ...route.config, idempotencyKey: true }
  })
  for (const routes of opts.routes) await app.register(routes)
}
