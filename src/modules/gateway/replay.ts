import type { Redis } from 'ioredis'
import type { Db } from '../../database.ts'
import type { Clock } from '../../platform/clock.ts'
import type { Logger } from '../../platform/logger.ts'
import { findAcceptedSignature, insertAcceptedSignature } from './gateway.repository.ts'

export interface AcceptedSignature {
  /** The request's X-Signature: 64 lower-case hex characters. */
  signature: string
  /** The request's Idempotency-Key, lower-cased; null when it had none. */
  idempotencyKey: string | null
  /** When a replay of it can no longer pass the timestamp window anywhere. */
  expiresAt: Date
}

export type RememberResult = { first: true } | { first: false; idempotencyKey: string | null }

/** Remembers accepted signatures, shared by every API process. */
export interface ReplayStore {
  /** Records the signature; says whether it had been accepted before, and with which key. */
  remember(accepted: AcceptedSignature): Promise<RememberResult>
}

/** The `accepted_signatures` table (PostgreSQL); expired rows are swept by a reconciler. */
export function databaseReplayStore(db: Db, clock: Clock): ReplayStore {
  return {
    remember: async ({ signature, idempotencyKey, expiresAt }) => {
      const bytes = Buffer.from(signature, 'hex')
      if (await insertAcceptedSignature(db, bytes, idempotencyKey, clock.now(), expiresAt)) {
        return { first: true }
      }
      const row = await findAcceptedSignature(db, bytes)
      return { first: false, idempotencyKey: row?.idempotency_key ?? null }
    },
  }
}

interface Remembered {
  idempotencyKey: string | null
  expiresAtMs: number
}

// One map per database handle: every app built over the same embedded database shares it.
const inMemory = new WeakMap<object, Map<string, Remembered>>()

/**
 * For PGlite, which is one process by construction (as the rate limiter there): the same
 * record in memory. A table would cost every state-changing request a write that PGlite runs
 * synchronously on the event loop. Entries leave the map once their window has passed.
 */
export function memoryReplayStore(db: Db, clock: Clock): ReplayStore {
  let remembered = inMemory.get(db)
  if (!remembered) {
    remembered = new Map()
    inMemory.set(db, remembered)
  }
  const map = remembered
  return {
    remember: ({ signature, idempotencyKey, expiresAt }) => {
      const now = clock.now().getTime()
      // Insertion order is nearly expiry order: drop expired entries from the front.
      for (const [key, entry] of map) {
        if (entry.expiresAtMs > now) break
        map.delete(key)
      }
      const earlier = map.get(signature)
      if (earlier && earlier.expiresAtMs > now) {
        return Promise.resolve({ first: false, idempotencyKey: earlier.idempotencyKey })
      }
      map.set(signature, { idempotencyKey, expiresAtMs: expiresAt.getTime() })
      return Promise.resolve({ first: true })
    },
  }
}

export interface RedisReplayStoreOptions {
  redis: Redis
  /** REDIS_KEY_PREFIX plus this store's own segment. */
  keyPrefix: string
  clock: Clock
  /** Used while Redis does not answer. */
  fallback: ReplayStore
  log: Logger
}

/**
 * One `SET key value PX ttl NX` per state-changing request: Redis expires the key when the
 * signature's window has passed. A replay costs a second round trip (GET, for the original's
 * Idempotency-Key). While Redis does not answer, signatures go to the database's table: a
 * replay of a request remembered only in Redis could then pass, once, during the outage; every
 * other choice refuses all traffic or remembers nothing. One warning when that starts.
 */
export function redisReplayStore(options: RedisReplayStoreOptions): ReplayStore {
  const { redis, keyPrefix, clock, fallback, log } = options
  let degraded = false
  return {
    remember: async (accepted) => {
      const key = keyPrefix + accepted.signature
      const ttlMs = Math.max(1, accepted.expiresAt.getTime() - clock.now().getTime())
      try {
        const set = await redis.set(key, accepted.idempotencyKey ?? '', 'PX', ttlMs, 'NX')
        const result: RememberResult =
          set === 'OK' ? { first: true } : { first: false, idempotencyKey: await original(key) }
        if (degraded) {
          degraded = false
          log.info('Redis answers again: accepted signatures are back on Redis')
        }
        return result
      } catch (error) {
        if (!degraded) {
          degraded = true
          log.warn(
            { err: error },
            'Redis unreachable: accepted signatures fall back to PostgreSQL (memory on PGlite)',
          )
        }
        return fallback.remember(accepted)
      }
    },
  }

  async function original(key: string): Promise<string | null> {
    const value = await redis.get(key)
    return value === null || value === '' ? null : value
  }
}
