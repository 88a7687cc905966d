import pg from 'pg'
import type { Logger } from '../logger.ts'

export interface ChannelListener {
  close(): Promise<void>
}

export interface ListenOptions {
  databaseUrl: string
  /** A fixed identifier (it is written into LISTEN as is). */
  channel: string
  log: Logger
  onMessage(payload: string): void
  /** LISTEN is in place: from now on every NOTIFY on the channel arrives. */
  onConnected(): void
  /** The connection is gone: NOTIFYs may be missed until onConnected is called again. */
  onLost(): void
  retryMs?: number
}

/**
 * A dedicated PostgreSQL connection LISTENing on one channel, reconnected after a loss. The
 * caller learns both edges (connected, lost), because a cache kept in step by notifications
 * may be trusted only while they can arrive (src/modules/merchants/merchants.cache.ts).
 */
export async function listenChannel(options: ListenOptions): Promise<ChannelListener> {
  const { channel, log } = options
  if (!/^[a-z_][a-z0-9_]*$/.test(channel)) throw new Error(`bad channel name ${channel}`)
  const retryMs = options.retryMs ?? 1_000
  let client: pg.Client | undefined
  let closed = false
  let retry: NodeJS.Timeout | undefined
  let down = false

  const lost = (error?: unknown) => {
    if (closed || client === undefined) return
    const gone = client
    client = undefined
    gone.removeAllListeners()
    gone.on('error', () => undefined)
    void gone.end().catch(() => undefined)
    options.onLost()
    if (!down) {
      down = true
      // One line per loss, without a stack: an outage is logged by the pool's breaker too.
      const reason = error instanceof Error ? error.message : 'connection ended'
      log.warn({ channel, reason }, 'LISTEN connection lost; reconnecting')
    }
    retry = setTimeout(() => void connect(), retryMs)
    retry.unref()
  }

  const connect = async (): Promise<void> => {
    if (closed) return
    const c = new pg.Client({
      connectionString: options.databaseUrl,
      application_name: 'kurus-listen',
    })
    c.on('notification', (message) => {
      if (message.channel === channel) options.onMessage(message.payload ?? '')
    })
    c.on('error', (error) => lost(error))
    c.on('end', () => lost())
    try {
      client = c
      await c.connect()
      await c.query(`listen ${channel}`)
    } catch (error) {
      lost(error)
      return
    }
    if (closed) {
      await c.end().catch(() => undefined)
      return
    }
    if (down) log.info({ channel }, 'LISTEN connection back')
    down = false
    options.onConnected()
  }

  await connect()
  return {
    async close() {
      closed = true
      if (retry) clearTimeout(retry)
      const c = client
      client = undefined
      if (c) {
        c.removeAllListeners()
        c.on('error', () => undefined)
        await c.end().catch(() => undefined)
      }
    },
  }
}
