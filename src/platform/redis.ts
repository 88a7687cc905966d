import type { Redis } from 'ioredis'
import type { Logger } from './logger.ts'

// A Redis client for the shared rate limiter (REDIS_URL). ioredis is imported only when Redis
// is configured, so a deployment without it never loads the client.

/** How long a command may take before the caller falls back (the limiter fails open). */
const COMMAND_TIMEOUT_MS = 250

export interface RedisHandle {
  readonly redis: Redis
  close(): Promise<void>
}

/**
 * Connects and waits up to `readyTimeoutMs` for the first connection (or its first error), so a process that starts
 * with Redis up uses it from its first request. Commands never queue while disconnected
 * (enableOfflineQueue: false) and time out after 250 ms: the caller falls back at once instead
 * of holding requests. The client reconnects in the background (ioredis's default backoff).
 */
export async function connectRedis(
  url: string,
  log: Logger,
  readyTimeoutMs = 2_000,
): Promise<RedisHandle> {
  const { Redis } = await import('ioredis')
  const redis = new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: COMMAND_TIMEOUT_MS,
    connectTimeout: readyTimeoutMs,
  })
  // Connection errors are reported by the rate limiter when a request meets them; without a
  // listener ioredis would print each reconnect attempt to stderr.
  redis.on('error', () => undefined)
  // Ready, or the first connection error (a refused port answers at once), or the timeout.
  // (events.once would reject on 'error': plain listeners resolve either way.)
  const ready = await new Promise<boolean>((resolve) => {
    const timer = setTimeout(resolve, readyTimeoutMs, false)
    timer.unref()
    const settle = (value: boolean) => () => {
      clearTimeout(timer)
      resolve(value)
    }
    redis.once('ready', settle(true))
    redis.once('error', settle(false))
  })
  if (!ready) log.warn('Redis is not reachable at start: rate limits use PostgreSQL until it is')
  return {
    redis,
    close: async () => {
      // quit() waits for a reply that a dead server never sends; disconnect() does not.
      if (redis.status === 'ready') await redis.quit().catch(() => redis.disconnect())
      else redis.disconnect()
    },
  }
}
