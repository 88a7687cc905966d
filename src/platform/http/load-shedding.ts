import type { FastifyInstance } from 'fastify'
import { AppError } from '../errors.ts'

/**
 * Sheds load instead of queueing it: beyond `inflightMax` requests in this process, new ones
 * get 503 SVC-GW-1005 with Retry-After at once. Queueing past the database pool's capacity only
 * turns overload into timeouts for everybody; a fast refusal keeps latency for the admitted
 * requests and tells clients when to come back. Health probes are never shed.
 */
export function installLoadShedding(app: FastifyInstance, inflightMax: number): void {
  let inflight = 0
  app.addHook('onRequest', async (request) => {
    if (request.url === '/healthz' || request.url === '/readyz' || request.url === '/metrics')
      return
    if (inflight >= inflightMax) {
      throw new AppError(
        'SVC-GW-1005',
        503,
        'the service is busy; retry shortly',
        undefined,
        undefined,
        {
          'retry-after': '1',
        },
      )
    }
    inflight++
    request.counted = true
  })
  const release = async (request: { counted?: boolean }) => {
    if (!request.counted) return
    request.counted = false
    inflight--
  }
  app.addHook('onResponse', release)
  app.addHook('onRequestAbort', release)
}

declare module 'fastify' {
  interface FastifyRequest {
    counted?: boolean
  }
}
