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
  /**
   * A `select 1` on the connection this often; one unanswered for as long counts as a lost
   * connection. A host that vanishes (failover, a cut link) sends no RST: without this an idle
   * LISTEN connection would wait for it forever while NOTIFYs go to the new primary.
   */
  heartbeatMs?: number
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
  const heartbeatMs = options.heartbeatMs ?? 5_000
  let client: pg.Client | undefined
  let closed = false
  let retry: NodeJS.Timeout | undefined
  let heartbeat: NodeJS.Timeout | undefined
  let down = false

  const lost = (error?: unknown) => {
    if (closed || client === undefined) return
    const gone = client
    client = undefined
    clearInterval(heartbeat)
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
      // A silent server must hold neither the reconnect loop nor the heartbeat: connecting,
      // LISTEN and each `select 1` give up after heartbeatMs, and the connection is replaced.
      connectionTimeoutMillis: heartbeatMs,
      query_timeout: heartbeatMs,
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
    let pending = false
    heartbeat = setInterval(() => {
      if (client !== c || pending) return
      pending = true
      c.query('select 1').then(
        () => (pending = false),
        (error: unknown) => {
          if (client === c) lost(error)
        },
      )
    }, heartbeatMs)
    heartbeat.unref()
    options.onConnected()
  }

  await connect()
  return {
    async close() {
      closed = true
      if (retry) clearTimeout(retry)
      clearInterval(heartbeat)
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
