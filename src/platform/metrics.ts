import type { FastifyInstance } from 'fastify'
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client'
import type { SqlExecutor } from './db/connect.ts'
import { JOBS_SCHEMA } from './jobs/queue.ts'

// Prometheus metrics at /metrics. Request rate and latency by route and status come from a
// hook; payments by outcome from the payments module (a process-wide counter); database pool
// use and job-queue depth and age are read at scrape time, so they cost nothing between
// scrapes.

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

export interface MetricsSources {
  poolStats?: () => { total: number; idle: number; waiting: number }
  raw?: SqlExecutor
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
      async collect() {
        this.reset()
        for (const r of await read().catch(() => [])) this.labels(r.name).set(r.oldest)
      },
    })
  }
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

export function installMetrics(app: FastifyInstance, metrics: Metrics): void {
  app.addHook('onResponse', async (request, reply) => {
    // The route pattern, never the concrete URL: ids would explode the label set.
    const route = request.routeOptions.url ?? 'unmatched'
    metrics.httpDuration
      .labels(request.method, route, String(reply.statusCode))
      .observe(reply.elapsedTime / 1000)
  })
  app.get('/metrics', { schema: { hide: true } }, async (_request, reply) => {
    const merged = Registry.merge([metrics.registry, domainRegistry])
    return reply.type(merged.contentType).send(await merged.metrics())
  })
}
