// Goal: every error, ours or Fastify's own (404, 413, 415, bad JSON), is {code, message, requestId} with requestId = X-Request-Id; a client's UUID v4 request id is echoed.
// Method: real app over HTTP with test-only signed routes; raw fetch for what the SDK would never send.
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { test } from 'node:test'
import type { KurusResponse } from '../../sdk/index.ts'
import { startTestApp } from '../helpers/app.ts'
import { probeRoutes, probeState, send, UUID_V4, type RawResponse } from './_support.ts'

function assertEnvelope(res: RawResponse, status: number, code: string): void {
  assert.equal(res.status, status, res.text)
  assert.match(res.headers.get('content-type') ?? '', /^application\/json/)
  const keys = Object.keys(res.body).filter((k) => k !== 'details')
  assert.deepEqual(keys.sort(), ['code', 'message', 'requestId'], res.text)
  assert.equal(res.body['code'], code, res.text)
  assert.equal(typeof res.body['message'], 'string')
  assert.match(String(res.body['requestId']), UUID_V4)
  assert.equal(res.body['requestId'], res.headers.get('x-request-id'))
}

function fromSdk(res: KurusResponse): RawResponse {
  return {
    status: res.status,
    headers: res.headers,
    body: res.body as Record<string, unknown>,
    text: '',
  }
}

async function setup(t: Parameters<typeof startTestApp>[0]) {
  const state = probeState()
  const h = await startTestApp(t, { extraSignedRoutes: [probeRoutes(state)] })
  const m = await h.newMerchant()
  return { h, m, state }
}

test("Fastify's own 404 is an envelope, on and off the signed prefix", async (t) => {
  const { h } = await setup(t)
  for (const path of ['/nope', '/v1/nope', '/v1/auth/whoami/extra', '/operator/v1/nope']) {
    assertEnvelope(await send(h.url + path, 'GET', {}), 404, 'SVC-RES-3301')
  }
  assertEnvelope(await send(h.url + '/v1/auth/whoami', 'DELETE', {}), 404, 'SVC-RES-3301')
})

test('a body that is not application/json → 415 SVC-VAL-3004', async (t) => {
  const { m } = await setup(t)
  for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'application/xml']) {
    const res = await m.client.request('POST', '/v1/test/echo', {
      rawBody: 'a=1',
      headers: { 'content-type': type },
    })
    assertEnvelope(fromSdk(res), 415, 'SVC-VAL-3004')
  }
  // A JSON media type with parameters is JSON.
  const ok = await m.client.request('POST', '/v1/test/echo', {
    rawBody: '{"a":1}',
    headers: { 'content-type': 'application/json; charset=utf-8' },
  })
  assert.equal(ok.status, 200)
})

test('a body over 1 MiB → 413 SVC-VAL-3003; exactly 1 MiB is accepted', async (t) => {
  const { h, m } = await setup(t)
  const fill = (bytes: number) => `{"pad":"${'x'.repeat(bytes - 10)}"}`
  assert.equal(Buffer.byteLength(fill(1024 * 1024)), 1024 * 1024)
  const fits = await m.client.request('POST', '/v1/test/echo', { rawBody: fill(1024 * 1024) })
  assert.equal(fits.status, 200)
  const over = await m.client.request('POST', '/v1/test/echo', { rawBody: fill(1024 * 1024 + 1) })
  assertEnvelope(fromSdk(over), 413, 'SVC-VAL-3003')
  // Same on the operator API.
  const op = await send(
    h.url + '/operator/v1/merchants',
    'POST',
    { authorization: 'Bearer test-operator-token-0123456789', 'content-type': 'application/json' },
    fill(2 * 1024 * 1024),
  )
  assertEnvelope(op, 413, 'SVC-VAL-3003')
})

test('malformed JSON → 400 SVC-VAL-3002, but only after authentication', async (t) => {
  const { h, m, state } = await setup(t)
  for (const rawBody of ['{"a":', '{a:1}', 'nul', '{"a":1}}']) {
    const res = await m.client.request('POST', '/v1/test/effects', {
      rawBody,
      idempotencyKey: true,
    })
    assertEnvelope(fromSdk(res), 400, 'SVC-VAL-3002')
  }
  assert.equal(state.effects, 0)
  const unsigned = await send(
    h.url + '/v1/test/echo',
    'POST',
    { 'content-type': 'application/json' },
    '{"a":',
  )
  assertEnvelope(unsigned, 401, 'SVC-GW-1003')
  const operator = await send(
    h.url + '/operator/v1/merchants',
    'POST',
    { authorization: 'Bearer test-operator-token-0123456789', 'content-type': 'application/json' },
    '{"name":',
  )
  assertEnvelope(operator, 400, 'SVC-VAL-3002')
})

test('validation errors carry details; unknown fields are rejected, not dropped', async (t) => {
  const { h } = await setup(t)
  const res = await h.operator('POST', '/operator/v1/merchants', { name: 'X', nmae: 'typo' })
  assert.equal(res.status, 400)
  const body = res.body as { code: string; details: { field: string; reason: string }[] }
  assert.equal(body.code, 'SVC-VAL-3001')
  assert.deepEqual(body.details, [{ field: 'nmae', reason: 'unknown field' }])
  const wrongType = await h.operator('POST', '/operator/v1/merchants', { name: 42 })
  assert.equal(wrongType.status, 400)
})

test('a client X-Request-Id (UUID v4) is echoed; anything else is replaced', async (t) => {
  const { h, m } = await setup(t)
  const mine = randomUUID()
  const ok = await m.client.request('GET', '/v1/auth/whoami', { requestId: mine })
  assert.equal(ok.status, 200)
  assert.equal(ok.requestId, mine)
  const upper = randomUUID().toUpperCase()
  const okUpper = await m.client.request('GET', '/v1/auth/whoami', { requestId: upper })
  assert.equal(okUpper.requestId, upper.toLowerCase())
  const failed = await send(h.url + '/v1/auth/whoami', 'GET', { 'x-request-id': mine })
  assertEnvelope(failed, 401, 'SVC-GW-1003')
  assert.equal(failed.body['requestId'], mine)
  for (const given of ['abc', '6f1c2f4e-1c1b-1c1b-8c1b-1c1b1c1b1c1b', `${mine}-x`]) {
    const res = await m.client.request('GET', '/v1/auth/whoami', { requestId: given })
    assert.equal(res.status, 200)
    assert.match(res.requestId ?? '', UUID_V4)
    assert.notEqual(res.requestId, given)
  }
  // Each request without one gets a fresh id, also on unsigned endpoints.
  const a = await send(h.url + '/healthz', 'GET', {})
  const b = await send(h.url + '/healthz', 'GET', {})
  assert.match(a.headers.get('x-request-id') ?? '', UUID_V4)
  assert.notEqual(a.headers.get('x-request-id'), b.headers.get('x-request-id'))
})

test('health, readiness and the OpenAPI document answer unsigned', async (t) => {
  const { h } = await setup(t)
  const health = await send(h.url + '/healthz', 'GET', {})
  assert.equal(health.status, 200)
  const ready = await send(h.url + '/readyz', 'GET', {})
  assert.equal(ready.status, 200)
  assert.equal(ready.body['status'], 'ready')
  const openapi = await send(h.url + '/openapi.json', 'GET', {})
  assert.equal(openapi.status, 200)
  const paths = Object.keys(openapi.body['paths'] as object)
  assert.ok(paths.includes('/v1/auth/whoami'))
  assert.ok(paths.includes('/v1/kyc/status'))
  assert.ok(paths.includes('/operator/v1/merchants'))
})
