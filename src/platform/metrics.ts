import type { FastifyInstance } from 'fastify'
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client'

export interface Metrics {
  registry: Registry
  httpDuration: Histogram<'method' | 'route' | 'status'>
  payments: Counter<'outcome'>
}

export function createMetrics(): Metrics {
  const registry = new Registry()
  collectDefaultMetrics({ register: registry })
  return {
    registry,
    httpDuration: new Histogram({
      name: 'kurus_http_request_duration_seconds',
      help: 'HTTP request latency by route and status',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers: [registry],
    }),
    payments: new Counter({
      name: 'kurus_payments_total',
      help: 'Card and QR payments by outcome',
      labelNames: ['outcome'],
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
    return reply.type(metrics.registry.contentType).send(await metrics.registry.metrics())
  })
}
