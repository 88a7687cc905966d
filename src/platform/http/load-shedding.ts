import type { FastifyInstance } from 'fastify'
import { Gauge, type Registry } from 'prom-client'
import { busy } from './errors.ts'

/**
 * Sheds load instead of queueing it: beyond `inflightMax` requests in this process, new ones
 * get 503 SVC-GW-1005 with Retry-After at once. An admitted request's wait for a database
 * connection is bounded too (db/connect.ts): past it, the same 503, long before a client's
 * timeout (issue 37: 2× overload answers 503 or success, never a hang). Queueing past the database pool's capacity only
 * turns overload into timeouts for everybody; a fast refusal keeps latency for the admitted
 * requests and tells clients when to come back. Health probes are never shed.
 *
 * The slot is returned when the underlying response closes. Fastify's `onResponse` runs only
 * when a response finishes and `onRequestAbort` only while the body is still unread, so a
 * client that sent its whole body and then went away (a timeout, a closed tab) fired neither,
 * and each such disconnect leaked a slot until the process refused everything. Node emits
 * `close` on the ServerResponse in every case: written, destroyed or never answered.
 */
export function installLoadShedding(
  app: FastifyInstance,
  inflightMax: number,
  registry?: Registry,
): { inflight(): number } {
  let inflight = 0
  if (registry) {
    new Gauge({
      name: 'kurus_http_inflight_requests',
      help: 'Requests admitted by load shedding and not yet closed, in this process',
      registers: [registry],
      collect() {
        this.set(inflight)
      },
    })
  }
  // A callback hook: nothing here waits, and an async hook costs a promise per request.
  app.addHook('onRequest', (request, reply, done) => {
    if (request.url === '/healthz' || request.url === '/readyz' || request.url === '/metrics') {
      done()
      return
    }
    if (inflight >= inflightMax) {
      done(busy())
      return
    }
    inflight++
    reply.raw.once('close', () => {
      inflight--
    })
    done()
  })
  return { inflight: () => inflight }
}
