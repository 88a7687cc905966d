import type { Db } from '../../database.ts'
import type { Clock } from '../../platform/clock.ts'
import { takeRateLimitToken } from './gateway.repository.ts'

export interface RateLimitDecision {
  allowed: boolean
  retryAfterSeconds: number
}

export interface RateLimiter {
  take(bucket: string): Promise<RateLimitDecision>
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
    take: async (bucket) =>
      decide(
        await takeRateLimitToken(db, bucket, ratePerSecond, burst, clock.now()),
        ratePerSecond,
      ),
  }
}

/** For PGlite, which is one process by construction: the same bucket maths in memory. */
export function memoryRateLimiter(clock: Clock, ratePerSecond: number, burst: number): RateLimiter {
  const buckets = new Map<string, { tokens: number; at: number }>()
  return {
    take: (bucket) => {
      const now = clock.now().getTime()
      const b = buckets.get(bucket) ?? { tokens: burst, at: now }
      const refilled = Math.min(burst, b.tokens + (Math.max(0, now - b.at) / 1000) * ratePerSecond)
      const tokens = Math.max(-1, refilled - 1)
      buckets.set(bucket, { tokens, at: Math.max(b.at, now) })
      return Promise.resolve(decide(tokens, ratePerSecond))
    },
  }
}
