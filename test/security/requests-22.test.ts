// Goal (issue 22 §2–3, as an attacker would try them): a captured signed refund or payout
// replayed inside the ±5 minute window is refused (401 SVC-GW-1006) and moves no money again,
// while the same replay with the original Idempotency-Key gets the stored answer; every
// state-changing signed route of the route table refuses a replay; and a body nested 10,000
// deep is a 400 naming the limit on every JSON route (signed, public, dashboard, operator),
// never a 500.
// Method: the captured request is signed by hand once and its exact headers and bytes sent
// again (at the app's own clock, inside the window); effects are read back through the API.
// The route sweeps come from the app's route table, so a route added later is covered.
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { test } from 'node:test'
import { timestampFor } from '../../sdk/index.ts'
import { OPERATOR_TOKEN, startTestApp } from '../helpers/app.ts'
import { CATALOG, type World } from './_catalog.ts'
import { fillPath, MUTATING, routeTable, type RouteClass } from './_routes.ts'
import { assertEnvelope, newActor, rawRequest, signed, type RawResponse } from './_support.ts'

const JSON_CLASSES = new Set<RouteClass>([
  'signed',
  'public',
  'dashboard',
  'dashboard-login',
  'operator',
])

function code(res: RawResponse): string | undefined {
  return (res.json as { code?: string } | undefined)?.code
}

function assertReplayRefused(res: RawResponse, where: string): void {
  assert.equal(res.status, 401, `${where}: ${res.text}`)
  assertEnvelope(res, where)
  assert.equal(code(res), 'SVC-GW-1006', where)
}

test('a captured signed refund or payout replayed inside the window moves no money again', async (t) => {
  const h = await startTestApp(t)
  const m = await newActor(h)
  const w: World = { h, receiverUrl: 'http://127.0.0.1:9/hooks' }

  await t.test('refund: replay refused; with its Idempotency-Key, the stored answer', async () => {
    const fixture = await CATALOG['POST /v1/payments/{id}/refund']?.(w, m)
    const paymentId = fixture?.params['id'] ?? ''
    const path = `/v1/payments/${paymentId}/refund`
    const key = randomUUID()
    const capture = {
      method: 'POST',
      path,
      body: JSON.stringify({ amount: 1_000 }),
      timestamp: timestampFor(h.clock.now()),
      headers: { 'idempotency-key': key },
    }
    const first = await signed(h, m, capture)
    assert.equal(first.status, 200, first.text)
    h.clock.advance(60_000)
    // The attacker has the bytes and the headers, not the secret: without the key, or with
    // another one, it is refused.
    assertReplayRefused(
      await signed(h, m, { ...capture, headers: { 'idempotency-key': randomUUID() } }),
      'refund replayed with another key',
    )
    const { headers: _omit, ...withoutKey } = capture
    assertReplayRefused(await signed(h, m, withoutKey), 'refund replayed without a key')
    // The merchant's own retry (same key): the stored answer, nothing refunded again.
    const retry = await signed(h, m, capture)
    assert.equal(retry.status, 200, retry.text)
    assert.equal(retry.headers['idempotent-replayed'], 'true')
    assert.equal(retry.text, first.text)
    const payment = await m.client.call<{ refundAmount: number }>(
      'GET',
      `/v1/payments/${paymentId}`,
    )
    assert.equal(payment.refundAmount, 1_000)

    // A refund sent without any Idempotency-Key: its replay is refused outright.
    const bare = {
      method: 'POST',
      path,
      body: JSON.stringify({ amount: 500 }),
      timestamp: timestampFor(h.clock.now()),
    }
    assert.equal((await signed(h, m, bare)).status, 200)
    assertReplayRefused(await signed(h, m, bare), 'refund replayed')
    const after = await m.client.call<{ refundAmount: number }>('GET', `/v1/payments/${paymentId}`)
    assert.equal(after.refundAmount, 1_500)
  })

  await t.test('payout: replay refused, one payout made', async () => {
    const fixture = await CATALOG['POST /v1/payouts']?.(w, m)
    const body = fixture?.body as { submerchantId: string }
    const capture = {
      method: 'POST',
      path: '/v1/payouts',
      body: JSON.stringify(body),
      timestamp: timestampFor(h.clock.now()),
    }
    const first = await signed(h, m, capture)
    assert.equal(first.status, 201, first.text)
    h.clock.advance(4 * 60_000)
    assertReplayRefused(await signed(h, m, capture), 'payout replayed')
    const list = await m.client.call<{ items: { submerchantId: string }[] }>('GET', '/v1/payouts', {
      query: { submerchantId: body.submerchantId },
    })
    assert.equal(list.items.filter((p) => p.submerchantId === body.submerchantId).length, 1)
  })
})

test('every state-changing signed route refuses a byte-identical replay', async (t) => {
  const h = await startTestApp(t)
  const m = await newActor(h)
  const routes = routeTable(h.app.fastify).filter(
    (r) => r.cls === 'signed' && MUTATING.has(r.method),
  )
  assert.ok(routes.length >= 30, `${routes.length} state-changing signed routes`)
  for (const route of routes) {
    // Ids that name nothing: the replay check comes before the route looks anything up.
    const path = fillPath(
      route.path,
      Object.fromEntries(route.params.map((p) => [p, `x_${randomUUID().slice(0, 8)}`])),
    )
    const capture = { method: route.method, path, timestamp: timestampFor(h.clock.now()) }
    const first = await signed(h, m, capture)
    assert.ok(first.status !== 401 && first.status < 500, `${route.key}: ${first.text}`)
    assertReplayRefused(await signed(h, m, capture), route.key)
  }
})

test('a body nested 10,000 deep is 400 SVC-VAL-3001 on every JSON route, never a 500', async (t) => {
  const h = await startTestApp(t)
  const m = await newActor(h)
  const jwt = await m.token()
  const deep = '{"extraData":' + '['.repeat(10_000) + ']'.repeat(10_000) + '}'
  const routes = routeTable(h.app.fastify).filter(
    (r) => r.cls !== undefined && JSON_CLASSES.has(r.cls) && MUTATING.has(r.method),
  )
  assert.ok(routes.length >= 50, `${routes.length} JSON routes`)
  for (const route of routes) {
    const path = fillPath(
      route.path,
      Object.fromEntries(route.params.map((p) => [p, `x_${randomUUID().slice(0, 8)}`])),
    )
    const req = {
      method: route.method,
      path,
      body: deep,
      headers: {
        'content-type': 'application/json',
        ...(route.cls === 'dashboard' ? { authorization: `Bearer ${jwt}` } : {}),
        ...(route.cls === 'operator' ? { authorization: `Bearer ${OPERATOR_TOKEN}` } : {}),
      },
    }
    const res = route.cls === 'signed' ? await signed(h, m, req) : await rawRequest(h, req)
    assert.equal(res.status, 400, `${route.key}: ${res.text.slice(0, 300)}`)
    assertEnvelope(res, route.key)
    assert.equal(code(res), 'SVC-VAL-3001', route.key)
    assert.match((res.json as { message: string }).message, /deeper than 64 levels/)
  }
})
