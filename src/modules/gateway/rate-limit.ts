import { createHash } from 'node:crypto'
import type { Redis } from 'ioredis'
import type { Db } from '../../database.ts'
import type { Clock } from '../../platform/clock.ts'
import type { Logger } from '../../platform/logger.ts'
import { takeRateLimitTokens } from './gateway.repository.ts'

export interface RateLimitDecision {
  allowed: boolean
  retryAfterSeconds: number
}

/** A bucket's refill rate and size; each limiter has defaults, a bucket may have its own. */
export interface RateLimits {
  ratePerSecond: number
  burst: number
}

export interface RateLimiter {
  /** Spends one token of `bucket`, which holds `limits` (the limiter's own when omitted). */
  take(bucket: string, limits?: RateLimits): Promise<RateLimitDecision>
}

/** A shared bucket store that can hand out several tokens in one round trip. */
interface SharedRateLimiter extends RateLimiter {
  /**
   * Takes up to `count` whole tokens: as many as the bucket holds (0 when it holds less than
   * one, which spends a refused take as `take` does).
   */
  lease(bucket: string, count: number, limits?: RateLimits): Promise<RateLimitLease>
}

interface RateLimitLease {
  granted: number
  retryAfterSeconds: number
}

function decide(tokens: number, ratePerSecond: number): RateLimitDecision {
  if (tokens >= 0) return { allowed: true, retryAfterSeconds: 0 }
  return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(-tokens / ratePerSecond)) }
}

/** Shared by every API process: the bucket lives in PostgreSQL. */
export function postgresRateLimiter(
  db: Db,
  clock: Clock,
  ratePerSecond: number,
  burst: number,
): SharedRateLimiter {
  const lease = async (bucket: string, count: number, limits = { ratePerSecond, burst }) => {
    const taken = await takeRateLimitTokens(
      db,
      bucket,
      count,
      limits.ratePerSecond,
      limits.burst,
      clock.now(),
    )
    return { granted: taken.granted, retryAfterSeconds: retryAfter(taken.left, limits) }
  }
  return {
    lease,
    take: async (bucket, limits) => {
      const { granted, retryAfterSeconds } = await lease(bucket, 1, limits)
      return { allowed: granted === 1, retryAfterSeconds }
    },
  }
}

function retryAfter(left: number, limits: RateLimits): number {
  return left >= 0 ? 0 : decide(left, limits.ratePerSecond).retryAfterSeconds
}

/** For PGlite, which is one process by construction: the same bucket maths in memory. */
export function memoryRateLimiter(
  clock: Clock,
  ratePerSecond: number,
  burst: number,
): SharedRateLimiter {
  const buckets = new Map<string, { tokens: number; at: number }>()
  const lease = (bucket: string, count: number, limits = { ratePerSecond, burst }) => {
    const now = clock.now().getTime()
    const b = buckets.get(bucket) ?? { tokens: limits.burst, at: now }
    const refilled = Math.min(
      limits.burst,
      b.tokens + (Math.max(0, now - b.at) / 1000) * limits.ratePerSecond,
    )
    const granted = refilled >= 1 ? Math.min(count, Math.floor(refilled)) : 0
    const left = granted > 0 ? refilled - granted : Math.max(-1, refilled - 1)
    buckets.set(bucket, { tokens: left, at: Math.max(b.at, now) })
    return Promise.resolve({ granted, retryAfterSeconds: retryAfter(left, limits) })
  }
  return {
    lease,
    take: async (bucket, limits) => {
      const { granted, retryAfterSeconds } = await lease(bucket, 1, limits)
      return { allowed: granted === 1, retryAfterSeconds }
    },
  }
}

// The same bucket as takeRateLimitTokens (gateway.repository.ts), in one atomic Lua script:
// refill by the time since the last take, cap at the burst, hand out up to ARGV[5] whole
// tokens, or none and floor at -1 so hammering while limited does not dig the hole deeper.
// Time comes from the caller (the app's injectable clock), as for PostgreSQL; tokens are
// fractional, so they are kept as strings. A key untouched for longer than a full refill is
// equivalent to a full bucket, so it expires (never sooner than a minute, which leaves room
// for clocks that differ between processes). Returns { granted, balance left }; the grant is
// also kept on the hash, as on the PostgreSQL row, to show how a bucket is being taken.
const TAKE_TOKEN_LUA = `
local state = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local now = tonumber(ARGV[1])
local rate = tonumber(ARGV[2])
local burst = tonumber(ARGV[3])
local count = tonumber(ARGV[5])
local tokens = tonumber(state[1])
local at = tonumber(state[2])
if tokens == nil or at == nil then
  tokens = burst
  at = now
end
local refilled = math.min(burst, tokens + math.max(0, now - at) / 1000 * rate)
local granted = 0
local left
if refilled >= 1 then
  granted = math.min(count, math.floor(refilled))
  left = refilled - granted
else
  left = math.max(-1, refilled - 1)
end
redis.call('HSET', KEYS[1], 'tokens', string.format('%.17g', left), 'at', string.format('%d', math.max(at, now)), 'granted', granted)
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return { granted, string.format('%.17g', left) }
`
const TAKE_TOKEN_SHA = createHash('sha1').update(TAKE_TOKEN_LUA).digest('hex')

export interface RedisRateLimiterOptions {
  redis: Redis
  /** Prepended to every bucket's key (REDIS_KEY_PREFIX), so several deployments share a Redis. */
  keyPrefix: string
  clock: Clock
  ratePerSecond: number
  burst: number
  /** Used while Redis does not answer: fail open to the PostgreSQL (or in-memory) bucket. */
  fallback: SharedRateLimiter
  log: Logger
}

/**
 * Shared by every API process through Redis: one EVALSHA round trip per take or lease (the
 * script is loaded once, on the first NOSCRIPT). When Redis is unreachable or slow (the
 * client's command timeout), requests are limited by `fallback` instead, never refused and
 * never unlimited; one warning is logged when that starts and one line when Redis answers again.
 */
export function redisRateLimiter(options: RedisRateLimiterOptions): SharedRateLimiter {
  const { redis, keyPrefix, clock, ratePerSecond, burst, fallback, log } = options
  let degraded = false
  const run = async (key: string, args: (string | number)[]): Promise<unknown> => {
    try {
      return await redis.evalsha(TAKE_TOKEN_SHA, 1, key, ...args)
    } catch (error) {
      if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error
      // First use on this server (or after a restart or SCRIPT FLUSH): load it, then retry.
      await redis.script('LOAD', TAKE_TOKEN_LUA)
      return redis.evalsha(TAKE_TOKEN_SHA, 1, key, ...args)
    }
  }
  const lease = async (
    bucket: string,
    count: number,
    limits = { ratePerSecond, burst },
  ): Promise<RateLimitLease> => {
    const ttlMs = Math.max(60_000, Math.ceil((limits.burst / limits.ratePerSecond) * 2_000))
    let reply: unknown
    try {
      reply = await run(keyPrefix + bucket, [
        clock.now().getTime(),
        limits.ratePerSecond,
        limits.burst,
        ttlMs,
        count,
      ])
    } catch (error) {
      if (!degraded) {
        degraded = true
        log.warn(
          { err: error },
          'Redis unreachable: rate limits fall back to PostgreSQL (in memory on PGlite)',
        )
      }
      return fallback.lease(bucket, count, limits)
    }
    if (degraded) {
      degraded = false
      log.info('Redis answers again: rate limits are back on Redis')
    }
    const [granted, left] = reply as [number, string]
    return { granted, retryAfterSeconds: retryAfter(Number(left), limits) }
  }
  return {
    lease,
    take: async (bucket, limits) => {
      const { granted, retryAfterSeconds } = await lease(bucket, 1, limits)
      return { allowed: granted === 1, retryAfterSeconds }
    },
  }
}

// How long a process may keep leased tokens before spending them: past it they are dropped.
const LEASE_MS = 1_000
// A lease is at most this many tokens, and at most a tenth of the bucket's burst, so that a
// few processes holding leases cannot starve one another of a small bucket.
const LEASE_TOKENS_MAX = 64
const LEASE_SHARE_OF_BURST = 0.1
// Per-IP buckets are many; past this many leases held the process drops them all (their
// unspent tokens are lost, which is on the strict side).
const LEASES_HELD_MAX = 10_000

/**
 * Spends a shared bucket's tokens without a round trip per request: a bucket that is busy in
 * this process takes several tokens at once (a lease) and spends them here, for up to a second.
 * A lease starts at one token (so a quiet bucket behaves exactly as the shared one) and doubles
 * each time one is used up in time, up to min(64, a tenth of the burst); one left to expire
 * halves it. Buckets of a burst under 20 are never leased.
 *
 * The bound (docs/performance.md): leased tokens are taken from the shared bucket before they
 * are spent, so the requests let through never exceed what the bucket handed out; the bucket
 * may refill while P processes hold leases, so a window can see at most P × the lease size
 * (≤ a tenth of the burst each) above the burst, once. Tokens a lease leaves unspent are lost,
 * which only makes the limit stricter.
 */
export function leasedRateLimiter(
  shared: SharedRateLimiter,
  clock: Clock,
  defaults: RateLimits,
): RateLimiter {
  const leases = new Map<string, { tokens: number; until: number; size: number }>()
  return {
    take: async (bucket, limits = defaults) => {
      const now = clock.now().getTime()
      const held = leases.get(bucket)
      if (held && held.tokens >= 1 && now < held.until) {
        held.tokens--
        return { allowed: true, retryAfterSeconds: 0 }
      }
      const max = Math.min(LEASE_TOKENS_MAX, Math.floor(limits.burst * LEASE_SHARE_OF_BURST))
      let size = 1
      if (held && max > 1) {
        // Used up before it expired: this bucket is busy here, take more next time.
        size = held.tokens < 1 && now < held.until ? held.size * 2 : held.size / 2
        size = Math.max(1, Math.min(max, Math.floor(size)))
      }
      const { granted, retryAfterSeconds } = await shared.lease(bucket, size, limits)
      if (granted < 1) {
        leases.delete(bucket)
        return { allowed: false, retryAfterSeconds }
      }
      if (max > 1) {
        if (leases.size >= LEASES_HELD_MAX && !leases.has(bucket)) leases.clear()
        leases.set(bucket, { tokens: granted - 1, until: now + LEASE_MS, size })
      }
      return { allowed: true, retryAfterSeconds: 0 }
    },
  }
}
