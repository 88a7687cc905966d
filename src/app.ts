import { acquirerRoutes, bankAcquirer } from './modules/acquirer/index.ts'
import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import Fastify, {
  LogController,
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyPluginAsync,
} from 'fastify'
import swagger from '@fastify/swagger'
import type { Config } from './config.ts'
import type { Db, Deps } from './database.ts'
import type { Clock } from './platform/clock.ts'
import { connectReadDatabase, type DbKind, type SqlExecutor } from './platform/db/connect.ts'
import type { DatabaseHealth } from './platform/db/health.ts'
import { listenChannel, type ChannelListener } from './platform/db/listen.ts'
import { JobQueue } from './platform/jobs/queue.ts'
import { registerJobs } from './jobs.ts'
import { AppError } from './platform/errors.ts'
import { isUuidV4, newUuid } from './platform/ids.ts'
import {
  databaseUnavailable,
  installErrorHandling,
  sendFrameworkError,
} from './platform/http/errors.ts'
import { BODY_LIMIT_BYTES, installRawJsonParser } from './platform/http/raw-body.ts'
import { trustProxyOption } from './platform/http/trust-proxy.ts'
import { installValidators } from './platform/http/validation.ts'
import { openapiTransforms } from './platform/http/openapi.ts'
import { apiReferenceRoutes } from './pages/api-reference.ts'
import { hostedPagesMessages } from './pages/pages.messages.ts'
import { useMessages } from './platform/web/i18n.ts'
import { bindRequestLog, type Logger } from './platform/logger.ts'
import { createMetrics, installMetrics, type Metrics } from './platform/metrics.ts'
import { installLoadShedding } from './platform/http/load-shedding.ts'
import { connectRedis, type RedisHandle } from './platform/redis.ts'
import { nameRequestSpan } from './platform/tracing.ts'
import {
  authFailureLimit,
  leasedRateLimiter,
  memoryRateLimiter,
  postgresRateLimiter,
  redisRateLimiter,
  signedApi,
  type RateLimiter,
} from './modules/gateway/index.ts'
import {
  MERCHANT_CHANGES_CHANNEL,
  forgetMerchant,
  merchantsRoutes,
  revealDemoCredentials,
  setMerchantCachesLive,
} from './modules/merchants/index.ts'
import { dashboardApi, dashboardMessages, dashboardPagesRoutes } from './modules/dashboard/index.ts'
import { eventsRoutes } from './modules/events/index.ts'
import {
  oldestUndeliveredEventAgeSeconds,
  webhooksDashboardRoutes,
} from './modules/webhooks/index.ts'
import { devMailboxRoutes } from './modules/mail/index.ts'
import { disputesRoutes, disputesSandboxRoutes } from './modules/disputes/index.ts'
import { filesRoutes } from './modules/files/index.ts'
import { operatorRoutes } from './modules/operator/index.ts'
import { vaultRoutes } from './modules/vault/index.ts'
import { reportsRoutes, transactionsRoutes } from './modules/transactions/index.ts'
import { customersRoutes } from './modules/customers/index.ts'
import { payoutsRoutes } from './modules/payouts/index.ts'
import {
  subscriptionPagesRoutes,
  subscriptionsMessages,
  subscriptionsPublicRoutes,
  subscriptionsRoutes,
  subscriptionsSandboxRoutes,
} from './modules/subscriptions/index.ts'
import {
  invoicePagesRoutes,
  invoicesMessages,
  invoicesPublicRoutes,
  invoicesRoutes,
} from './modules/invoices/index.ts'
import {
  paymentLinkPagesRoutes,
  paymentLinksMessages,
  paymentLinksRoutes,
} from './modules/payment-links/index.ts'
import { riskRoutes } from './modules/risk/index.ts'
import { installRequestLog, requestLogsRoutes } from './modules/request-logs/index.ts'
import {
  checkoutPagesRoutes,
  checkoutPublicRoutes,
  checkoutSandboxRoutes,
} from './modules/checkout/index.ts'
import {
  paymentsPublicRoutes,
  paymentsRoutes,
  paymentsSandboxRoutes,
} from './modules/payments/index.ts'

export interface AppOptions {
  config: Config
  db: Db
  dbKind: DbKind
  clock: Clock
  log: Logger
  /** /readyz: is the database reachable? */
  ping: () => Promise<boolean>
  /** PostgreSQL's circuit breaker: while open, requests are answered 503 SVC-INT-9002 at once. */
  health?: DatabaseHealth
  /** Database pool use, for /metrics. */
  poolStats?: () => { total: number; idle: number; waiting: number }
  /** Raw SQL access for the job queue (pg-boss brings its own SQL). */
  raw: SqlExecutor
  /** Run background jobs in this process too (embedded mode: `npm start`, PGlite). */
  runWorker?: boolean
  metrics?: Metrics
  rateLimiter?: RateLimiter
  /** Tests only: more routes inside the signed context (e.g. a probe for idempotency). */
  extraSignedRoutes?: FastifyPluginAsync[]
}

export interface App {
  fastify: FastifyInstance
  deps: Deps
}

const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])
/** Answered whatever the database's state: liveness, readiness and the metrics. */
const PROBES = new Set(['/healthz', '/readyz', '/metrics'])

export async function buildApp(options: AppOptions): Promise<App> {
  const { config, db, clock, log } = options
  // Every page's words: platform's own and each owner's table, composed here as database.ts
  // composes the modules' tables (platform imports no module).
  useMessages([
    hostedPagesMessages,
    invoicesMessages,
    subscriptionsMessages,
    paymentLinksMessages,
    dashboardMessages,
  ])
  const jobs = new JobQueue(options.raw, log)
  const read = connectReadDatabase({ kind: options.dbKind, db }, config.databaseReadUrl, {
    poolSize: config.databasePoolSize,
    preparedStatements: config.databasePreparedStatements,
  })
  if (read.separate) log.info('list, search and export queries read from DATABASE_READ_URL')
  const deps: Deps = { db, readDb: read.db, clock, config, log, jobs, acquirer: bankAcquirer }
  registerJobs(jobs, deps)
  await jobs.start()
  if (options.runWorker) await jobs.work()
  const metrics =
    options.metrics ??
    createMetrics({
      raw: options.raw,
      ...(options.poolStats ? { poolStats: options.poolStats } : {}),
      oldestUndeliveredEventSeconds: () => oldestUndeliveredEventAgeSeconds(deps),
    })
  const databaseRateLimiter =
    options.dbKind === 'postgres'
      ? postgresRateLimiter(db, clock, config.rateLimitRps, config.rateLimitBurst)
      : memoryRateLimiter(clock, config.rateLimitRps, config.rateLimitBurst)
  // With REDIS_URL the buckets live in Redis, and the database's limiter takes over while
  // Redis does not answer (fail open to it, not to no limit at all).
  let redis: RedisHandle | undefined
  if (config.redisUrl !== undefined && options.rateLimiter === undefined) {
    redis = await connectRedis(config.redisUrl, log)
  }
  const sharedRateLimiter = redis
    ? redisRateLimiter({
        redis: redis.redis,
        keyPrefix: config.redisKeyPrefix + 'rl:',
        clock,
        ratePerSecond: config.rateLimitRps,
        burst: config.rateLimitBurst,
        fallback: databaseRateLimiter,
        log,
      })
    : databaseRateLimiter
  // A shared bucket costs a round trip per take; busy buckets lease tokens in batches instead
  // (PGlite's buckets are in this process already).
  const rateLimiter =
    options.rateLimiter ??
    (redis || options.dbKind === 'postgres'
      ? leasedRateLimiter(sharedRateLimiter, clock, {
          ratePerSecond: config.rateLimitRps,
          burst: config.rateLimitBurst,
        })
      : sharedRateLimiter)
  // Failed authentications per client address, on every API whose callers authenticate.
  const authFailures = authFailureLimit({
    rateLimiter,
    clock,
    limits: { ratePerSecond: config.authFailurePerMinute / 60, burst: config.authFailureBurst },
  })

  // Explicit generics: the pino Logger type is wider than Fastify's base logger type.
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-arguments
  const app = Fastify<Server, IncomingMessage, ServerResponse, FastifyBaseLogger>({
    loggerInstance: log,
    // The request id is logged as `requestId`, the name the API uses for it everywhere.
    childLoggerFactory: (logger, bindings, options) =>
      logger.child({ requestId: (bindings as { reqId?: string }).reqId }, options),
    // One access line per request, written in onResponse below (Fastify's pair of lines,
    // "incoming request" and "request completed", cost two log writes per request).
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: BODY_LIMIT_BYTES,
    // request.ip (every per-IP limit) follows X-Forwarded-For only through these proxies.
    trustProxy: trustProxyOption(config.trustProxy),
    // A client may name its request; anything but a UUID v4 gets a fresh id.
    genReqId: (req) => {
      const given = req.headers['x-request-id']
      return typeof given === 'string' && isUuidV4(given) ? given.toLowerCase() : newUuid()
    },
    connectionTimeout: 30_000,
    keepAliveTimeout: 72_000,
    requestTimeout: 30_000,
    // While closing, requests that still reach this process (the cluster's primary may hand it
    // a connection or two after SIGTERM) are served, not refused: close() waits for them.
    return503OnClosing: false,
    routerOptions: { ignoreTrailingSlash: false, maxParamLength: 200 },
    ajv: { customOptions: { removeAdditional: false } },
    // A malformed URL or an over-long path parameter: the error envelope, not Fastify's shape.
    frameworkErrors: sendFrameworkError,
  })
  installValidators(app)
  installErrorHandling(app)
  installRawJsonParser(app)

  // Every log line of a request carries its id and route; the gateway adds the merchant.
  // request.log (reply.log is the same object) is the request's own child logger
  // (childLoggerFactory), so its bindings are set in place: a second child per request cost
  // a logger object and its serialized bindings (issue 43's profile).
  app.addHook('onRequest', (request, _reply, done) => {
    const route = request.routeOptions.url ?? 'unmatched'
    bindRequestLog(request.log, { route })
    nameRequestSpan(request.method, route)
    done()
  })
  // Hooks with nothing to wait for take a callback: an async one costs a promise and a
  // microtask per request each (issue 43).
  app.addHook('onSend', (request, reply, payload, done) => {
    void reply.header('x-request-id', reply.replayedRequestId ?? request.id)
    done(null, payload)
  })
  // reply.log carries the route, the merchant (gateway) and the error code (sendError).
  app.addHook('onResponse', (request, reply, done) => {
    reply.log.info(
      { req: request, res: { statusCode: reply.statusCode }, responseTime: reply.elapsedTime },
      'request completed',
    )
    done()
  })
  // The merchant's request log (GET /v1/logs): hooks on the root, so they see every signed
  // route registered below; they keep only requests the gateway authenticated.
  installRequestLog(app, deps)
  // Action endpoints take `{}`; a client that sends no body at all means the same thing.
  app.addHook('preValidation', (request, _reply, done) => {
    if (request.body === undefined && MUTATING.has(request.method) && !request.rawBody?.length) {
      request.body = {}
    }
    done()
  })

  await app.register(swagger, {
    ...openapiTransforms,
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Kuruş payment API',
        version: '1.0.0',
        description:
          'Merchant payment API for Turkey. Amounts are integer kuruş; currency is TRY. ' +
          'Signed requests carry X-Api-Key, X-Timestamp and X-Signature (see docs/api.md).',
      },
      servers: [{ url: config.publicApiUrl }],
      components: {
        securitySchemes: {
          apiKey: { type: 'apiKey', in: 'header', name: 'X-Api-Key' },
          signature: {
            type: 'apiKey',
            in: 'header',
            name: 'X-Signature',
            description:
              'Hex HMAC-SHA256 of the canonical string (docs/api.md). A POST, PUT, PATCH or ' +
              'DELETE signature is accepted once: a byte-identical replay within the ±5 minute ' +
              'window is 401 SVC-GW-1006, unless it carries the Idempotency-Key of the original ' +
              '(then the idempotency record answers). Sign every request afresh.',
          },
          timestamp: { type: 'apiKey', in: 'header', name: 'X-Timestamp' },
          operatorToken: { type: 'http', scheme: 'bearer' },
          dashboardToken: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
        },
      },
      security: [{ apiKey: [], signature: [], timestamp: [] }],
    },
  })
  // The reference page (pages/api-reference.ts): Try it with the demo keys in the sandbox only.
  await app.register(
    apiReferenceRoutes({
      env: config.env,
      demoKeys: () => revealDemoCredentials(deps),
    }),
  )
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger())

  installMetrics(app, metrics, config)
  installLoadShedding(app, config.inflightMax, metrics.registry)
  const health = options.health
  if (health) {
    app.addHook('onRequest', (request, _reply, done) => {
      done(health.down && !PROBES.has(request.url) ? databaseUnavailable() : undefined)
    })
  }
  app.get('/healthz', { schema: { hide: true } }, async () => ({ status: 'ok' }))
  app.get('/readyz', { schema: { hide: true } }, async (_request, reply) => {
    const ok = await options.ping()
    return reply.code(ok ? 200 : 503).send({ status: ok ? 'ready' : 'database unreachable' })
  })

  await app.register(async (ctx) => {
    authFailures.install(ctx)
    await ctx.register(operatorRoutes(deps))
  })
  // Unsigned routes whose bearer is an id in the path (payment id, public hash, session id):
  // limited per client IP instead of per key.
  await app.register(async (ctx) => {
    ctx.addHook('onRequest', async (request) => {
      const decision = await rateLimiter.take(`ip:${request.ip}`)
      if (!decision.allowed) {
        throw new AppError('SVC-GW-1004', 429, 'rate limit exceeded', undefined, undefined, {
          'retry-after': String(decision.retryAfterSeconds),
        })
      }
    })
    await ctx.register(paymentsPublicRoutes(deps))
    await ctx.register(checkoutPublicRoutes(deps))
    await ctx.register(subscriptionsPublicRoutes(deps))
    await ctx.register(invoicesPublicRoutes(deps))
  })
  // Hosted pages (HTML): a context of their own for the CSP and security headers, HTML
  // error pages and the per-IP limit.
  await app.register(checkoutPagesRoutes(deps, { rateLimiter }))
  await app.register(subscriptionPagesRoutes(deps, { rateLimiter }))
  await app.register(invoicePagesRoutes(deps, { rateLimiter }))
  await app.register(paymentLinkPagesRoutes(deps, { rateLimiter }))
  // The merchant dashboard's web pages: their own context (cookie session, CSRF, HTML errors).
  await app.register(dashboardPagesRoutes(deps, { rateLimiter }))
  // The dashboard API: its own context (JWT bearer), apart from the signed one.
  await app.register(async (ctx) => {
    authFailures.install(ctx)
    await ctx.register(dashboardApi, { deps, rateLimiter, routes: [webhooksDashboardRoutes(deps)] })
  })
  if (config.env === 'demo') await app.register(devMailboxRoutes(deps))
  await app.register(signedApi, {
    deps,
    rateLimiter,
    authFailures,
    redis: redis?.redis,
    dbKind: options.dbKind,
    routes: [
      merchantsRoutes(deps),
      vaultRoutes(deps),
      paymentsRoutes(deps),
      eventsRoutes(deps),
      transactionsRoutes(deps),
      reportsRoutes(deps),
      customersRoutes(deps),
      disputesRoutes(deps),
      filesRoutes(deps),
      payoutsRoutes(deps),
      subscriptionsRoutes(deps),
      invoicesRoutes(deps),
      paymentLinksRoutes(deps),
      riskRoutes(deps),
      requestLogsRoutes(deps),
      acquirerRoutes(deps),
      ...(config.env === 'demo' ? [paymentsSandboxRoutes(deps), disputesSandboxRoutes(deps)] : []),
      ...(config.env === 'demo' ? [checkoutSandboxRoutes(deps)] : []),
      ...(config.env === 'demo' ? [subscriptionsSandboxRoutes(deps)] : []),
      ...(options.extraSignedRoutes ?? []),
    ],
  })
  // Keys and merchant rows are cached in process; on PostgreSQL every process hears the
  // changes others make (merchants.cache.ts), on PGlite there are no others.
  let merchantChanges: ChannelListener | undefined
  if (options.dbKind === 'postgres' && config.databaseUrl) {
    merchantChanges = await listenChannel({
      databaseUrl: config.databaseUrl,
      channel: MERCHANT_CHANGES_CHANNEL,
      log,
      onMessage: (merchantId) => forgetMerchant(deps, merchantId),
      onConnected: () => setMerchantCachesLive(deps, true),
      onLost: () => setMerchantCachesLive(deps, false),
    })
  } else if (options.dbKind === 'pglite') {
    setMerchantCachesLive(deps, true)
  }
  app.addHook('onClose', async () => {
    await merchantChanges?.close()
    await jobs.stop()
    await read.close()
    await redis?.close()
  })
  await app.ready()
  return { fastify: app, deps }
}
