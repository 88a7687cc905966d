import { isIPv6 } from 'node:net'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { Clock } from '../../platform/clock.ts'
import { AppError } from '../../platform/errors.ts'
import type { RateLimiter, RateLimits } from './rate-limit.ts'

export interface AuthFailureLimitOptions {
  rateLimiter: RateLimiter
  clock: Clock
  /** Failed authentications a client may make at once, and how fast it earns more. */
  limits: RateLimits
}

/** Installs the limit on a context whose callers authenticate (signed, dashboard, operator). */
export interface AuthFailureLimit {
  install(ctx: FastifyInstance): void
}

// Beyond this many blocked clients in one process the list starts over; the shared bucket
// still holds, so a client dropped from it is blocked again at its next failure.
const BLOCKED_CLIENTS_MAX = 100_000

/**
 * The bucket a client's failures go to: its IPv4 address, or the /64 of an IPv6 one (a host
 * gets a whole /64, so single IPv6 addresses would be free to rotate through).
 */
export function clientOf(ip: string): string {
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(ip)
  if (mapped?.[1]) return mapped[1]
  const address = ip.split('%')[0] ?? ip
  if (!isIPv6(address)) return ip
  const [head = '', tail] = address.split('::')
  const left = head === '' ? [] : head.split(':')
  const right = tail === undefined || tail === '' ? [] : tail.split(':')
  const groups =
    tail === undefined
      ? left
      : [...left, ...Array<string>(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right]
  return groups
    .slice(0, 4)
    .map((g) => parseInt(g, 16).toString(16))
    .join(':')
    .concat('::/64')
}

/**
 * A per-client limit on failed authentications (any 401), shared by every API process
 * through the rate limiter (Redis, PostgreSQL, or memory on PGlite). A client past it is
 * refused with 429 at its next request's first hook, before its key is looked up or a byte
 * of its body read (and its connection closed): the process remembers the refusal until the
 * bucket's Retry-After, so a flood from one address costs a Map lookup per request. The client is `request.ip`, which
 * follows X-Forwarded-For only through the proxies KURUS_TRUST_PROXY names.
 */
export function authFailureLimit(options: AuthFailureLimitOptions): AuthFailureLimit {
  const { rateLimiter, clock, limits } = options
  const blockedUntil = new Map<string, number>()
  return {
    install(ctx) {
      // A callback hook: the common case waits for nothing and an async hook costs a promise.
      ctx.addHook('onRequest', (request, _reply, done) => {
        const client = clientOf(request.ip)
        const until = blockedUntil.get(client)
        if (until === undefined) {
          done()
          return
        }
        const waitMs = until - clock.now().getTime()
        if (waitMs <= 0) {
          blockedUntil.delete(client)
          done()
          return
        }
        done(
          new AppError(
            'SVC-GW-1004',
            429,
            'too many failed authentications from this address; retry later',
            undefined,
            undefined,
            // The connection is closed after the answer, so whatever body follows is never
            // read: a blocked client pays a new connection per attempt, the server nothing more.
            { 'retry-after': String(Math.ceil(waitMs / 1000)), connection: 'close' },
          ),
        )
      })
      // onSend, not onResponse: the failure is counted before the client hears of it, so
      // its next request already meets the block.
      ctx.addHook('onSend', (request, reply, payload, done) => {
        if (reply.statusCode !== 401) {
          done(null, payload)
          return
        }
        countFailure(request).then(
          () => done(null, payload),
          (error: unknown) => done(error as Error),
        )
      })
      async function countFailure(request: FastifyRequest): Promise<void> {
        const client = clientOf(request.ip)
        try {
          const decision = await rateLimiter.take(`authfail:${client}`, limits)
          if (!decision.allowed) {
            if (blockedUntil.size >= BLOCKED_CLIENTS_MAX) blockedUntil.clear()
            blockedUntil.set(client, clock.now().getTime() + decision.retryAfterSeconds * 1000)
          }
        } catch (error) {
          request.log.warn({ err: error }, 'could not count a failed authentication')
        }
      }
    },
  }
}
