import cluster from 'node:cluster'
import { randomUUID } from 'node:crypto'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { FastifyInstance } from 'fastify'
import {
  AggregatorRegistry,
  Counter,
  Gauge,
  Histogram,
  Registry,
  collectDefaultMetrics,
} from 'prom-client'
import type { Config } from '../config.ts'
import { safeEqual } from './crypto.ts'
import type { SqlExecutor } from './db/connect.ts'
import { AppError } from './errors.ts'
import { JOBS_SCHEMA } from './jobs/queue.ts'

// Prometheus metrics at /metrics. Request rate and latency by route and status come from a
// hook; payments by outcome from the payments module (a process-wide counter); database pool
// use and job-queue depth and age are read at scrape time, so they cost nothing between
// scrapes.
//
// Who may scrape (issue 22 §4): the series name routes, volumes, queue depths and pool use,
// which is reconnaissance for an attacker, so in `live` /metrics is never open to anyone on
// the public port. With KURUS_METRICS_TOKEN set, /metrics (the API's and the worker's) needs
// `Authorization: Bearer <token>` in every environment; without it, `live` serves no /metrics
// at all and `demo` serves it open, as a developer expects.

/** Process-wide domain counters, merged into every app's scrape. */
export const domainRegistry = new Registry()
const paymentOutcomes = new Counter({
  name: 'kurus_payments_total',
  help: 'Card and QR payments by outcome (captured, authorized, failed, pending)',
  labelNames: ['outcome'],
  registers: [domainRegistry],
})

export function countPaymentOutcome(outcome: string): void {
  paymentOutcomes.labels(outcome).inc()
}

// Observed where the delivery succeeds: in the process that runs the job (the API process in
// embedded mode, else a worker, which serves it on KURUS_WORKER_METRICS_PORT).
const webhookDeliveryLag = new Histogram({
  name: 'kurus_webhook_delivery_lag_seconds',
  help: "Seconds from an outbox event's creation to its delivery's success (2xx from the receiver)",
  // From a prompt delivery (well under a second) to the end of the 3-day retry window.
  buckets: [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600, 21_600, 86_400, 259_200],
  registers: [domainRegistry],
})

export function observeWebhookDeliveryLag(seconds: number): void {
  webhookDeliveryLag.observe(Math.max(0, seconds))
}

export interface MetricsSources {
  poolStats?: () => { total: number; idle: number; waiting: number }
  raw?: SqlExecutor
  /** Age of the oldest event not yet delivered to its webhook receivers (0: none waits). */
  oldestUndeliveredEventSeconds?: () => Promise<number>
}

export interface Metrics {
  registry: Registry
  httpDuration: Histogram<'method' | 'route' | 'status'>
}

export function createMetrics(sources: MetricsSources = {}): Metrics {
  const registry = new Registry()
  collectDefaultMetrics({ register: registry })
  if (sources.poolStats) {
    const stats = sources.poolStats
    new Gauge({
      name: 'kurus_db_pool_connections',
      help: 'Database pool connections by state (total, idle, waiting clients)',
      labelNames: ['state'],
      registers: [registry],
      collect() {
        const s = stats()
        this.labels('total').set(s.total)
        this.labels('idle').set(s.idle)
        this.labels('waiting').set(s.waiting)
      },
    })
  }
  if (sources.raw) {
    const raw = sources.raw
    const read = async () =>
      (
        await raw.executeSql(
          `select name, count(*)::int as depth,
             coalesce(extract(epoch from now() - min(created_on)), 0)::float8 as oldest
           from ${JOBS_SCHEMA}.job where state in ('created', 'retry') group by name`,
        )
      ).rows as { name: string; depth: number; oldest: number }[]
    new Gauge({
      name: 'kurus_job_queue_depth',
      help: 'Jobs waiting to run, by queue',
      labelNames: ['queue'],
      registers: [registry],
      // Read from the database: every API process of a cluster reads the same rows.
      aggregator: 'max',
      async collect() {
        this.reset()
        for (const r of await read().catch(() => [])) this.labels(r.name).set(r.depth)
      },
    })
    new Gauge({
      name: 'kurus_job_queue_oldest_seconds',
      help: 'Age of the oldest waiting job, by queue',
      labelNames: ['queue'],
      registers: [registry],
      aggregator: 'max',
      async collect() {
        this.reset()
        for (const r of await read().catch(() => [])) this.labels(r.name).set(r.oldest)
      },
    })
  }
  if (sources.oldestUndeliveredEventSeconds) {
    const read = sources.oldestUndeliveredEventSeconds
    new Gauge({
      name: 'kurus_webhook_oldest_undelivered_event_seconds',
      help: 'Age of the oldest outbox event not yet delivered (undispatched, or a delivery pending)',
      registers: [registry],
      aggregator: 'max',
      async collect() {
        // A scrape that cannot read the database keeps the last value rather than failing.
        const seconds = await read().catch(() => undefined)
        if (seconds !== undefined) this.set(seconds)
      },
    })
  }
  if (cluster.isWorker) joinClusterAggregation([registry, domainRegistry])
  return {
    registry,
    httpDuration: new Histogram({
      name: 'kurus_http_request_duration_seconds',
      help: 'HTTP request latency by route and status',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers: [registry],
    }),
  }
}

async function scrape(metrics: Metrics): Promise<{ contentType: string; body: string }> {
  if (cluster.isWorker && process.send) return clusterScrape()
  const merged = Registry.merge([metrics.registry, domainRegistry])
  return { contentType: merged.contentType, body: await merged.metrics() }
}

// `serve --processes N`: the port is shared, so a scrape lands on any one API process, and
// each process counts only what it served. The process that gets the scrape asks the primary,
// which collects every process's series (prom-client's AggregatorRegistry, over the cluster's
// IPC channel) and answers with their aggregate: counters and histograms summed, gauges read
// from the database (queue depth, event age) taken once (`aggregator: 'max'`), the default
// process metrics as prom-client aggregates them. A scrape therefore returns the sum.
const METRICS_REQUEST = 'kurus:metrics-request'
const METRICS_RESPONSE = 'kurus:metrics-response'
const CLUSTER_SCRAPE_TIMEOUT_MS = 10_000

interface MetricsMessage {
  type: string
  id: string
  body?: string
  error?: string
}

function isMetricsMessage(message: unknown, type: string): message is MetricsMessage {
  return (
    typeof message === 'object' &&
    message !== null &&
    (message as { type?: unknown }).type === type &&
    typeof (message as { id?: unknown }).id === 'string'
  )
}

/** In a cluster's API process: these registries answer the primary's collection requests. */
function joinClusterAggregation(registries: Registry[]): void {
  // The constructor installs prom-client's listener for the primary's requests.
  new AggregatorRegistry()
  AggregatorRegistry.setRegistries(registries)
}

function clusterScrape(): Promise<{ contentType: string; body: string }> {
  const id = randomUUID()
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      process.off('message', onMessage)
      reject(new Error('the cluster primary did not answer the metrics scrape'))
    }, CLUSTER_SCRAPE_TIMEOUT_MS)
    const onMessage = (message: unknown) => {
      if (!isMetricsMessage(message, METRICS_RESPONSE) || message.id !== id) return
      clearTimeout(timer)
      process.off('message', onMessage)
      if (message.error !== undefined) reject(new Error(message.error))
      else
        resolve({
          contentType: AggregatorRegistry.PROMETHEUS_CONTENT_TYPE,
          body: message.body ?? '',
        })
    }
    process.on('message', onMessage)
    process.send?.({ type: METRICS_REQUEST, id })
  })
}

/** The cluster's primary: answers its API processes' scrapes with every process's series. */
export function aggregateClusterMetrics(): void {
  const aggregator = new AggregatorRegistry()
  cluster.on('message', (worker, message: unknown) => {
    if (!isMetricsMessage(message, METRICS_REQUEST)) return
    const reply = (answer: Partial<MetricsMessage>) => {
      if (worker.isConnected()) worker.send({ type: METRICS_RESPONSE, id: message.id, ...answer })
    }
    aggregator.clusterMetrics().then(
      (body) => reply({ body }),
      (error: unknown) => reply({ error: String(error) }),
    )
  })
}

export type MetricsAccess =
  | { mode: 'open' }
  | { mode: 'token'; token: string }
  /** Not served: live without KURUS_METRICS_TOKEN. */
  | { mode: 'off' }

export function metricsAccess(config: Pick<Config, 'env' | 'metricsToken'>): MetricsAccess {
  if (config.metricsToken !== undefined) return { mode: 'token', token: config.metricsToken }
  return config.env === 'live' ? { mode: 'off' } : { mode: 'open' }
}

/** Does this Authorization header carry the metrics token? Constant time. */
function bearerMatches(header: string | undefined, token: string): boolean {
  const match = /^bearer (.+)$/i.exec(header ?? '')
  return match?.[1] !== undefined && safeEqual(match[1].trim(), token)
}

const METRICS_TOKEN_REQUIRED = 'metrics need Authorization: Bearer <KURUS_METRICS_TOKEN>'

/**
 * /metrics for a process without the API (`kurus worker`): webhook deliveries, job handlers
 * and their counters run there, so their series are scraped there. Nothing else is served.
 * The caller does not start it when `access` is off.
 */
export async function serveMetrics(
  metrics: Metrics,
  host: string,
  port: number,
  access: MetricsAccess = { mode: 'open' },
): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer((request, response) => {
    if (request.method !== 'GET' || request.url !== '/metrics' || access.mode === 'off') {
      response.writeHead(404).end()
      return
    }
    if (access.mode === 'token' && !bearerMatches(request.headers.authorization, access.token)) {
      response
        .writeHead(401, { 'content-type': 'text/plain', 'www-authenticate': 'Bearer' })
        .end(METRICS_TOKEN_REQUIRED)
      return
    }
    scrape(metrics).then(
      ({ contentType, body }) => response.writeHead(200, { 'content-type': contentType }).end(body),
      () => response.writeHead(500).end(),
    )
  })
  await new Promise<void>((resolve) => server.listen(port, host, resolve))
  const address = server.address() as AddressInfo
  return {
    url: `http://${host}:${address.port}/metrics`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

export function installMetrics(
  app: FastifyInstance,
  metrics: Metrics,
  config: Pick<Config, 'env' | 'metricsToken'>,
): void {
  // A callback hook: nothing here waits, and an async hook costs a promise per request.
  app.addHook('onResponse', (request, reply, done) => {
    // The route pattern, never the concrete URL: ids would explode the label set.
    const route = request.routeOptions.url ?? 'unmatched'
    metrics.httpDuration
      .labels(request.method, route, String(reply.statusCode))
      .observe(reply.elapsedTime / 1000)
    done()
  })
  const access = metricsAccess(config)
  if (access.mode === 'off') {
    app.log.warn('live without KURUS_METRICS_TOKEN: /metrics is not served')
    return
  }
  app.get(
    '/metrics',
    {
      schema: { hide: true },
      onRequest: async (request) => {
        if (
          access.mode === 'token' &&
          !bearerMatches(request.headers.authorization, access.token)
        ) {
          throw new AppError('SVC-GW-1003', 401, METRICS_TOKEN_REQUIRED, undefined, undefined, {
            'www-authenticate': 'Bearer',
          })
        }
      },
    },
    async (_request, reply) => {
      const { contentType, body } = await scrape(metrics)
      return reply.type(contentType).send(body)
    },
  )
}
