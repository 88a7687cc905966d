// Goal (issue 42): the LISTEN connection behind the key and merchant caches notices a server
// that goes silent — a failover's dead primary or a cut link sends no RST, so an idle
// connection would otherwise wait forever while NOTIFYs go elsewhere — reports it lost (the
// caches stop trusting themselves) and reconnects; and a server that accepts but never
// answers does not hold the reconnect loop.
// Method: a TCP proxy of the test's own in front of the server, which can freeze the
// connections it carries (stop forwarding, close nothing: a host that vanished). PGlite has
// no LISTEN (one process): that pass runs the part that needs no server, a listener aimed at
// a port that accepts and never answers.
import assert from 'node:assert/strict'
import { createServer, connect, type AddressInfo, type Server, type Socket } from 'node:net'
import { test } from 'node:test'
import { setTimeout as delay } from 'node:timers/promises'
import pg from 'pg'
import { listenChannel } from '../../src/platform/db/listen.ts'
import { createLogger } from '../../src/platform/logger.ts'
import { adminUrl, testBackend } from '../helpers/db.ts'

interface Proxy {
  port: number
  connections: number
  /** Every connection carried so far stops forwarding, in both directions, without closing. */
  freeze(): void
  close(): Promise<void>
}

async function proxy(target: { host: string; port: number } | null): Promise<Proxy> {
  const pairs: [Socket, Socket | null][] = []
  const state = { connections: 0 }
  const server: Server = createServer((inbound) => {
    state.connections++
    inbound.on('error', () => undefined)
    if (!target) {
      // A black hole: accepts, reads, never answers.
      inbound.resume()
      pairs.push([inbound, null])
      return
    }
    const outbound = connect(target.port, target.host)
    outbound.on('error', () => inbound.destroy())
    inbound.pipe(outbound)
    outbound.pipe(inbound)
    pairs.push([inbound, outbound])
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    port: (server.address() as AddressInfo).port,
    get connections() {
      return state.connections
    },
    freeze() {
      for (const [inbound, outbound] of pairs) {
        inbound.unpipe()
        outbound?.unpipe()
        // Keep reading and drop it, as the void behind a cut cable does.
        inbound.removeAllListeners('data')
        inbound.on('data', () => undefined)
        outbound?.removeAllListeners('data')
        outbound?.on('data', () => undefined)
      }
    },
    async close() {
      for (const [inbound, outbound] of pairs) {
        inbound.destroy()
        outbound?.destroy()
      }
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}

async function until(what: string, check: () => boolean, ms = 10_000): Promise<void> {
  for (const end = Date.now() + ms; Date.now() < end;) {
    if (check()) return
    await delay(20)
  }
  assert.fail(`timed out waiting for: ${what}`)
}

test('a LISTEN connection to a server gone silent is reported lost and replaced; a silent server holds nothing', async (t) => {
  const log = createLogger('silent')
  const heartbeatMs = 300

  // A port that accepts and never answers: listenChannel returns, keeps trying, never connects.
  const hole = await proxy(null)
  t.after(() => hole.close())
  let holeConnected = false
  const toHole = await listenChannel({
    databaseUrl: `postgres://postgres@127.0.0.1:${hole.port}/x`,
    channel: 'kurus_listen_test',
    log,
    heartbeatMs,
    retryMs: 50,
    onMessage: () => undefined,
    onConnected: () => (holeConnected = true),
    onLost: () => undefined,
  })
  await until('a second attempt at the silent server', () => hole.connections >= 2)
  await toHole.close()
  assert.equal(holeConnected, false)
  if (testBackend() === 'pglite') return

  // PostgreSQL through the proxy: connected, frozen, lost, reconnected, hearing NOTIFYs again.
  const server = new URL(adminUrl())
  const relay = await proxy({ host: server.hostname, port: Number(server.port || 5432) })
  t.after(() => relay.close())
  const url = new URL(adminUrl())
  url.host = `127.0.0.1:${relay.port}`
  const channel = `kurus_listen_test_${process.pid}`
  const edges: string[] = []
  const heard: string[] = []
  const listener = await listenChannel({
    databaseUrl: url.toString(),
    channel,
    log,
    heartbeatMs,
    retryMs: 50,
    onMessage: (payload) => heard.push(payload),
    onConnected: () => edges.push('connected'),
    onLost: () => edges.push('lost'),
  })
  t.after(() => listener.close())
  assert.deepEqual(edges, ['connected'])
  const notifier = new pg.Client({ connectionString: adminUrl() })
  await notifier.connect()
  t.after(() => notifier.end())
  await notifier.query(`select pg_notify($1, 'before')`, [channel])
  await until('the first NOTIFY', () => heard.includes('before'))

  relay.freeze()
  await until('the frozen connection reported lost', () => edges.includes('lost'))
  await until('connected again', () => edges.length >= 3)
  assert.deepEqual(edges.slice(0, 3), ['connected', 'lost', 'connected'])
  await notifier.query(`select pg_notify($1, 'after')`, [channel])
  await until('a NOTIFY after the reconnect', () => heard.includes('after'))
})
