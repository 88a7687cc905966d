import { createHash } from 'node:crypto'
import type { Redis } from 'ioredis'
import type { Db } from '../../database.ts'
import type { Clock } from '../../platform/clock.ts'
import type { Logger } from '../../platform/logger.ts'
import { takeRateLimitToken } from './gateway.repository.ts'

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
): RateLimiter {
  return {
    take: async (bucket, limits = { ratePerSecond, burst }) =>
      decide(
        await takeRateLimitToken(db, bucket, limits.ratePerSecond, limits.burst, clock.now()),
        limits.ratePerSecond,
      ),
  }
}

/** For PGlite, which is one process by construction: the same bucket maths in memory. */
export function memoryRateLimiter(clock: Clock, ratePerSecond: number, burst: number): RateLimiter {
  const buckets = new Map<string, { tokens: number; at: number }>()
  return {
    take: (bucket, limits = { ratePerSecond, burst }) => {
      const now = clock.now().getTime()
      const b = buckets.get(bucket) ?? { tokens: limits.burst, at: now }
      const refilled = Math.min(
        limits.burst,
        b.tokens + (Math.max(0, now - b.at) / 1000) * limits.ratePerSecond,
      )
      const tokens = Math.max(-1, refilled - 1)
      buckets.set(bucket, { tokens, at: Math.max(b.at, now) })
      return Promise.resolve(decide(tokens, limits.ratePerSecond))
    },
  }
}

// The same bucket as takeRateLimitToken (gateway.repository.ts), in one atomic Lua script:
// refill by the time since the last take, cap at the burst, spend one token, floor at -1 so
// hammering while limited does not dig the hole deeper. Time comes from the caller (the app's
// injectable clock), as for PostgreSQL; tokens are fractional, so they are kept as strings.
// A key untouched for longer than a full refill is equivalent to a full bucket, so it expires
// (never sooner than a minute, which leaves room for clocks that differ between processes).
const TAKE_TOKEN_LUA = `
local state = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local now = tonumber(ARGV[1])
local rate = tonumber(ARGV[2])
local burst = tonumber(ARGV[3])
local tokens = tonumber(state[1])
local at = tonumber(state[2])
if tokens == nil or at == nil then
  tokens = burst
  at = now
end
local refilled = math.min(burst, tokens + math.max(0, now - at) / 1000 * rate)
local left = math.max(-1, refilled - 1)
redis.call('HSET', KEYS[1], 'tokens', string.format('%.17g', left), 'at', string.format('%d', math.max(at, now)))
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return string.format('%.17g', left)
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
  fallback: RateLimiter
  log: Logger
}

/**
 * Shared by every API process through Redis: one EVALSHA round trip per request (the script
 * is loaded once, on the first NOSCRIPT). When Redis is unreachable or slow (the client's
 * command timeout), requests are limited by `fallback` instead, never refused and never
 * unlimited; one warning is logged when that starts and one line when Redis answers again.
 */
export function redisRateLimiter(options: RedisRateLimiterOptions): RateLimiter {
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
  return {
    take: async (bucket, limits = { ratePerSecond, burst }) => {
      const ttlMs = Math.max(60_000, Math.ceil((limits.burst / limits.ratePerSecond) * 2_000))
      let reply: unknown
      try {
        reply = await run(keyPrefix + bucket, [
          clock.now().getTime(),
          limits.ratePerSecond,
          limits.burst,
          ttlMs,
        ])
      } catch (error) {
        if (!degraded) {
          degraded = true
          log.warn(
            { err: error },
            'Redis unreachable: rate limits fall back to PostgreSQL (in memory on PGlite)',
          )
        }
        return fallback.take(bucket, limits)
      }
      if (degraded) {
        degraded = false
        log.info('Redis answers again: rate limits are back on Redis')
      }
      return decide(Number(reply), limits.ratePerSecond)
    },
  }
}
