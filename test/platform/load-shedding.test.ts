// Goal: beyond KURUS_INFLIGHT_MAX concurrent requests the service answers 503 SVC-GW-1005
// with Retry-After at once instead of queueing. Method: a slow test route held open.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { connect } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import type { FastifyPluginAsync } from 'fastify'
import { signedHeaders } from '../../sdk/index.ts'
import { startTestApp } from '../helpers/app.ts'
import { CARDS, charge } from '../helpers/payments.ts'

test('requests beyond the in-flight limit are shed with 503 and Retry-After', async (t) => {
  let release: () => void = () => undefined
  const gate = new Promise<void>((resolve) => (release = resolve))
  let entered = 0
  const slow: FastifyPluginAsync = async (app) => {
    app.get('/v1/test/slow', async () => {
      entered++
      await gate
      return { ok: true }
    })
  }
  const h = await startTestApp(t, {
    env: { KURUS_INFLIGHT_MAX: '3' },
    extraSignedRoutes: [slow],
  })
  const m = await h.newMerchant()
  const held = Array.from({ length: 3 }, () => m.client.request('GET', '/v1/test/slow'))
  // Wait until all three are inside the handler; health probes are never shed.
  while (entered < 3) assert.equal((await fetch(`${h.url}/healthz`)).status, 200)
  const shed = await m.client.request<{ code: string }>('GET', '/v1/auth/whoami')
  assert.equal(shed.status, 503)
  assert.equal(shed.body.code, 'SVC-GW-1005')
  assert.equal(shed.headers.get('retry-after'), '1')
  // Issue 29: a shed request is one access line with its code, no error line or stack trace.
  const shedLines = h.logs.filter((l) => l.includes(shed.requestId!))
  assert.equal(shedLines.length, 1)
  assert.match(shedLines[0]!, /"errorCode":"SVC-GW-1005"/)
  assert.match(shedLines[0]!, /"statusCode":503/)
  release()
  for (const r of await Promise.all(held)) assert.equal(r.status, 200)
  const after = await m.client.request('GET', '/v1/auth/whoami')
  assert.equal(after.status, 200)
})

// Goal (issue 22 §1): clients that go away mid-request — after sending their whole body, on a
// client timeout, or half-way through the body — never keep an in-flight slot. Before the fix
// a slot was returned only by onResponse (never fires when the client left) or onRequestAbort
// (only while the body is unread), so after KURUS_INFLIGHT_MAX such disconnects every request
// got 503 until the process restarted.
// Method: a limit of 4 and a route that answers slowly (a database query, then 400 ms, as a
// slow database would). Three waves, one per way of leaving: 4 clients fill every slot (the
// server has them, the body read for the first two kinds), a fifth request is shed, then all
// four leave at once. Right after the last wave a real signed charge and a GET must succeed on
// their first try, and the in-flight gauge in /metrics must read 0 at rest. The waves wait on
// the server's own counters, not on timers, so a loaded machine cannot reorder them.
test('the service serves again at once after an overload of clients that disconnect', async (t) => {
  let arrived = 0
  let entered = 0
  const slow: FastifyPluginAsync = async (app) => {
    app.addHook('onRequest', async (request) => {
      if (request.url === '/v1/test/slow-db') arrived++
    })
    app.post('/v1/test/slow-db', async () => {
      entered++
      await h.deps.db.selectNoFrom((eb) => eb.val(1).as('one')).execute()
      await sleep(400)
      return { ok: true }
    })
  }
  const h = await startTestApp(t, {
    env: { KURUS_INFLIGHT_MAX: '4' },
    extraSignedRoutes: [slow],
  })
  const m = await h.newMerchant()
  const { hostname, port } = new URL(h.url)
  const body = JSON.stringify({ pad: 'x'.repeat(2000), nested: { a: [1, 2, 3] } })
  const rawRequest = (sent: string) =>
    `POST /v1/test/slow-db HTTP/1.1\r\nhost: ${hostname}:${port}\r\n` +
    `content-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n` +
    Object.entries(signedHeaders(m, 'POST', '/v1/test/slow-db', body))
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('') +
    `\r\n${sent}`
  /** A raw client that sends `payload` and leaves (socket destroyed) when told to. */
  const rawClient = (payload: string) => {
    const socket = connect(Number(port), hostname, () => socket.write(payload))
    socket.on('error', () => undefined)
    const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()))
    return { leave: () => (socket.destroy(), closed) }
  }
  /** fetch with a client-side abort (a timeout), fired when told to. */
  const abortingClient = () => {
    const controller = new AbortController()
    const done = fetch(`${h.url}/v1/test/slow-db`, {
      method: 'POST',
      headers: {
        ...signedHeaders(m, 'POST', '/v1/test/slow-db', body),
        'content-type': 'application/json',
      },
      body,
      signal: controller.signal,
    }).catch(() => undefined)
    return { leave: () => (controller.abort(), done.then(() => undefined)) }
  }
  const until = async (ok: () => boolean) => {
    for (let i = 0; i < 200 && !ok(); i++) await sleep(10)
  }
  const waves: [string, () => { leave(): Promise<void> }, () => boolean][] = [
    ['whole body sent, then gone', () => rawClient(rawRequest(body)), () => entered >= 4],
    ['client-side timeout', abortingClient, () => entered >= 8],
    [
      'half a body, then gone',
      () => rawClient(rawRequest(body.slice(0, 100))),
      () => arrived >= 12,
    ],
  ]
  for (const [name, make, filled] of waves) {
    const clients = Array.from({ length: 4 }, make)
    await until(filled)
    const shed = await m.client.request('GET', '/v1/auth/whoami')
    assert.equal(shed.status, 503, `${name}: the wave fills every slot`)
    await Promise.all(clients.map((c) => c.leave()))
  }
  // At once: the slots come back as the clients leave, not when the handlers they left behind
  // finish (nor never, as before). The gauge reaches 0 while those handlers may still run; no
  // timed assertion (the machine may be loaded), the first try of each request must succeed.
  const gauge = async () =>
    Number(
      /^kurus_http_inflight_requests (\d+)$/m.exec(
        await (await fetch(`${h.url}/metrics`)).text(),
      )?.[1],
    )
  for (let i = 0; i < 100 && (await gauge()) !== 0; i++) await sleep(10)
  const { res: paid } = await charge(m.client, CARDS.frictionless, 10_000)
  assert.equal(paid.status, 201, JSON.stringify(paid.body))
  const read = await m.client.request('GET', `/v1/payments/${paid.body.paymentId}`)
  assert.equal(read.status, 200)
  // The slow handlers the clients left behind finish; the gauge reads 0 at rest.
  await sleep(500)
  const metrics = await (await fetch(`${h.url}/metrics`)).text()
  assert.match(metrics, /^kurus_http_inflight_requests 0$/m)
})
