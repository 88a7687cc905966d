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
// Method: a limit of 4, a route that answers slowly (a database query, then 400 ms, as a slow
// database would), 16 clients that disconnect in three different ways and 8 more that are shed;
// then, within 1 s of the last disconnect, a real signed charge and a GET must succeed and the
// in-flight gauge in /metrics must read 0 once they are done.
test('the service serves again at once after an overload of clients that disconnect', async (t) => {
  const slow: FastifyPluginAsync = async (app) => {
    app.post('/v1/test/slow-db', async () => {
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
  const rawRequest = (contentLength: number, sent: string) => {
    const headers = signedHeaders(m, 'POST', '/v1/test/slow-db', body)
    return (
      `POST /v1/test/slow-db HTTP/1.1\r\nhost: ${hostname}:${port}\r\n` +
      `content-type: application/json\r\ncontent-length: ${contentLength}\r\n` +
      Object.entries(headers)
        .map(([k, v]) => `${k}: ${v}\r\n`)
        .join('') +
      `\r\n${sent}`
    )
  }
  const disconnectAfter = (payload: string, ms: number) =>
    new Promise<void>((resolve) => {
      const socket = connect(Number(port), hostname, () => {
        socket.write(payload)
        setTimeout(() => {
          socket.destroy()
          resolve()
        }, ms)
      })
      socket.on('error', () => undefined)
    })
  const overload: Promise<unknown>[] = []
  // A whole body sent, then the client goes away before the answer (a closed tab).
  for (let i = 0; i < 6; i++) {
    overload.push(disconnectAfter(rawRequest(Buffer.byteLength(body), body), 60))
  }
  // A client-side timeout: fetch aborts its request after 50 ms.
  for (let i = 0; i < 6; i++) {
    overload.push(
      fetch(`${h.url}/v1/test/slow-db`, {
        method: 'POST',
        headers: {
          ...signedHeaders(m, 'POST', '/v1/test/slow-db', body),
          'content-type': 'application/json',
        },
        body,
        signal: AbortSignal.timeout(50),
      }).catch(() => undefined),
    )
  }
  // Half a body, then gone (a phone changing networks).
  for (let i = 0; i < 4; i++) {
    overload.push(disconnectAfter(rawRequest(Buffer.byteLength(body), body.slice(0, 100)), 30))
  }
  // Shed while the slots are taken.
  const shed = await Promise.all(
    Array.from({ length: 8 }, () => m.client.request('GET', '/v1/auth/whoami')),
  )
  assert.ok(
    shed.some((r) => r.status === 503),
    'the overload went past the in-flight limit',
  )
  await Promise.all(overload)
  const ended = Date.now()
  // Within a second of the last disconnect: a charge and a read, with no retry.
  const { res: paid } = await charge(m.client, CARDS.frictionless, 10_000)
  assert.equal(paid.status, 201, JSON.stringify(paid.body))
  const read = await m.client.request('GET', `/v1/payments/${paid.body.paymentId}`)
  assert.equal(read.status, 200)
  assert.ok(Date.now() - ended < 1000, `served ${Date.now() - ended} ms after the overload`)
  // The slow handlers the clients left behind finish; the gauge reads 0 at rest.
  await sleep(500)
  const metrics = await (await fetch(`${h.url}/metrics`)).text()
  assert.match(metrics, /^kurus_http_inflight_requests 0$/m)
})
