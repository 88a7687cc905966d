// Goal: the gateway accepts exactly the spec's canonical string and answers each mistake with the right code (1001 timestamp, 1002 signature, 1003 key).
// Method: real app over HTTP, requests signed by hand with node:crypto, server clock frozen so ±5:00 is exact.
import assert from 'node:assert/strict'
import { test, type TestContext } from 'node:test'
import { startTestApp, type TestApp, type TestMerchant } from '../helpers/app.ts'
import {
  FreezableClock,
  probeRoutes,
  probeState,
  rawSigned,
  send,
  UUID_V4,
  type RawResponse,
} from './_support.ts'

const WHOAMI = '/v1/auth/whoami'

interface Ctx {
  h: TestApp
  m: TestMerchant
  clock: FreezableClock
  now: Date
}

async function setup(t: TestContext, env?: Record<string, string>): Promise<Ctx> {
  const clock = new FreezableClock()
  const h = await startTestApp(t, {
    clock,
    extraSignedRoutes: [probeRoutes(probeState())],
    ...(env ? { env } : {}),
  })
  const m = await h.newMerchant()
  const now = clock.freeze()
  return { h, m, clock, now }
}

function at(now: Date, offsetMs: number): string {
  return new Date(now.getTime() + offsetMs).toISOString()
}

function assertError(res: RawResponse, status: number, code: string): void {
  assert.equal(res.status, status, res.text)
  assert.equal(res.body['code'], code, res.text)
  assert.equal(typeof res.body['message'], 'string')
  assert.match(String(res.body['requestId']), UUID_V4)
  assert.equal(res.body['requestId'], res.headers.get('x-request-id'))
}

test('a correctly signed GET and POST pass', async (t) => {
  const { h, m, now } = await setup(t)
  const get = await rawSigned(h.url, {
    keys: m,
    timestamp: now.toISOString(),
    method: 'GET',
    path: WHOAMI,
  })
  assert.equal(get.status, 200, get.text)
  assert.equal(get.body['merchantId'], m.merchantId)
  const body = '{"name":"Çağrı Şahin", "city":"İstanbul"}'
  const post = await rawSigned(h.url, {
    keys: m,
    timestamp: now.toISOString(),
    method: 'POST',
    path: '/v1/test/echo',
    body,
  })
  assert.equal(post.status, 200, post.text)
  assert.deepEqual(post.body['received'], { name: 'Çağrı Şahin', city: 'İstanbul' })
  // The query string is not part of the canonical path, so a signed path plus a query passes.
  const withQuery = await rawSigned(h.url, {
    keys: m,
    timestamp: now.toISOString(),
    method: 'GET',
    path: WHOAMI + '?expand=all',
    signedPath: WHOAMI,
  })
  assert.equal(withQuery.status, 200, withQuery.text)
  // A real id substituted for the route's placeholder is what gets signed.
  const item = await rawSigned(h.url, {
    keys: m,
    timestamp: now.toISOString(),
    method: 'GET',
    path: '/v1/test/items/pay_0123456789abcdefghjkmnpq',
  })
  assert.equal(item.status, 200, item.text)
})

test('each canonical-string mistake fails with SVC-GW-1002', async (t) => {
  const { h, m, now } = await setup(t)
  const ts = now.toISOString()
  const mistakes: [string, Parameters<typeof rawSigned>[1]][] = [
    [
      'query string included in the signed path',
      { keys: m, timestamp: ts, method: 'GET', path: WHOAMI + '?a=1', signedPath: WHOAMI + '?a=1' },
    ],
    [
      'trailing slash in the signed path',
      { keys: m, timestamp: ts, method: 'GET', path: WHOAMI, signedPath: WHOAMI + '/' },
    ],
    [
      'scheme and host in the signed path',
      { keys: m, timestamp: ts, method: 'GET', path: WHOAMI, signedPath: h.url + WHOAMI },
    ],
    [
      '{} hashed for a GET',
      { keys: m, timestamp: ts, method: 'GET', path: WHOAMI, signedBody: '{}' },
    ],
    [
      're-serialised body (signed with spaces, sent compact)',
      {
        keys: m,
        timestamp: ts,
        method: 'POST',
        path: '/v1/test/echo',
        signedBody: '{"a":1, "b":2}',
        body: '{"a":1,"b":2}',
      },
    ],
    [
      'body signed as Latin-1 text instead of the UTF-8 bytes',
      {
        keys: m,
        timestamp: ts,
        method: 'POST',
        path: '/v1/test/echo',
        signedBody: Buffer.from('{"n":"Çağrı"}', 'utf8').toString('latin1'),
        body: '{"n":"Çağrı"}',
      },
    ],
    [
      'lowercase method',
      { keys: m, timestamp: ts, method: 'GET', path: WHOAMI, signedMethod: 'get' },
    ],
    [
      'timestamp signed in another spelling than sent',
      {
        keys: m,
        timestamp: ts,
        method: 'GET',
        path: WHOAMI,
        headers: { 'x-timestamp': ts.replace(/\.\d+Z$/, 'Z') },
      },
    ],
    [
      'wrong secret key',
      {
        keys: { publicKey: m.publicKey, secretKey: m.secretKey + 'x' },
        timestamp: ts,
        method: 'GET',
        path: WHOAMI,
      },
    ],
    [
      'upper-case hex signature',
      {
        keys: m,
        timestamp: ts,
        method: 'GET',
        path: WHOAMI,
        headers: { 'x-signature': 'A'.repeat(64) },
      },
    ],
  ]
  for (const [name, req] of mistakes) {
    const res = await rawSigned(h.url, req)
    assert.equal(res.body['code'], 'SVC-GW-1002', `${name}: ${res.text}`)
    assertError(res, 401, 'SVC-GW-1002')
  }
})

test('a trailing slash on the wire is a different route: 404 envelope', async (t) => {
  const { h, m, now } = await setup(t)
  const res = await rawSigned(h.url, {
    keys: m,
    timestamp: now.toISOString(),
    method: 'GET',
    path: WHOAMI + '/',
  })
  assertError(res, 404, 'SVC-RES-3301')
})

test('the ±5 minute window: exactly 5:00 passes both ways, 5:01 and 5:00.001 fail with 1001', async (t) => {
  const { h, m, now } = await setup(t)
  const call = (timestamp: string) =>
    rawSigned(h.url, { keys: m, timestamp, method: 'GET', path: WHOAMI })
  for (const offset of [-300_000, 300_000, -299_999, 0]) {
    const res = await call(at(now, offset))
    assert.equal(res.status, 200, `offset ${offset}: ${res.text}`)
  }
  for (const offset of [-301_000, 301_000, -300_001, 300_001, -86_400_000]) {
    assertError(await call(at(now, offset)), 401, 'SVC-GW-1001')
  }
})

test('moving the server clock 5:01 past a signature makes it 1001', async (t) => {
  const { h, m, clock, now } = await setup(t)
  const req = { keys: m, timestamp: now.toISOString(), method: 'GET', path: WHOAMI }
  clock.advance(300_000)
  assert.equal((await rawSigned(h.url, req)).status, 200)
  clock.advance(1_000)
  assertError(await rawSigned(h.url, req), 401, 'SVC-GW-1001')
  clock.set(new Date(now.getTime() - 301_000))
  assertError(await rawSigned(h.url, req), 401, 'SVC-GW-1001')
})

test('malformed and offset timestamps fail with 1001 even when correctly signed', async (t) => {
  const { h, m, now } = await setup(t)
  // 13:00+03:00 is the same instant as 10:00Z, but the spec wants UTC ending in Z.
  const iso = now.toISOString()
  const plus3 = new Date(now.getTime() + 3 * 3600_000).toISOString().replace('Z', '+03:00')
  const bad = [
    plus3,
    iso.replace('Z', '+00:00'),
    iso.replace('Z', ''),
    iso.replace('Z', 'z'),
    iso.replace('T', ' '),
    String(Math.floor(now.getTime() / 1000)),
    new Date(now).toUTCString(),
    '2026-02-30T10:00:00Z',
    '',
  ]
  for (const timestamp of bad) {
    const res = await rawSigned(h.url, { keys: m, timestamp, method: 'GET', path: WHOAMI })
    assert.equal(res.body['code'], 'SVC-GW-1001', `${JSON.stringify(timestamp)}: ${res.text}`)
    assertError(res, 401, 'SVC-GW-1001')
  }
  // Whole seconds (no fraction) are ISO 8601 too.
  const seconds = new Date(Math.floor(now.getTime() / 1000) * 1000)
    .toISOString()
    .replace('.000Z', 'Z')
  const ok = await rawSigned(h.url, { keys: m, timestamp: seconds, method: 'GET', path: WHOAMI })
  assert.equal(ok.status, 200, ok.text)
})

test('missing headers: X-Signature → 1002, X-Timestamp → 1001, X-Api-Key → 1003', async (t) => {
  const { h, m, now } = await setup(t)
  const base = { keys: m, timestamp: now.toISOString(), method: 'GET', path: WHOAMI }
  assertError(
    await rawSigned(h.url, { ...base, headers: { 'x-signature': undefined } }),
    401,
    'SVC-GW-1002',
  )
  assertError(
    await rawSigned(h.url, { ...base, headers: { 'x-timestamp': undefined } }),
    401,
    'SVC-GW-1001',
  )
  assertError(
    await rawSigned(h.url, { ...base, headers: { 'x-api-key': undefined } }),
    401,
    'SVC-GW-1003',
  )
  assertError(await send(h.url + WHOAMI, 'GET', {}), 401, 'SVC-GW-1003')
  // An unsigned POST learns nothing about its body before authentication.
  assertError(
    await send(h.url + '/v1/test/echo', 'POST', { 'content-type': 'application/json' }, '{oops'),
    401,
    'SVC-GW-1003',
  )
})

test('unknown, malformed, revoked and other-environment keys → 1003', async (t) => {
  const { h, m, now } = await setup(t)
  const ts = now.toISOString()
  const call = (publicKey: string, secretKey = m.secretKey) =>
    rawSigned(h.url, { keys: { publicKey, secretKey }, timestamp: ts, method: 'GET', path: WHOAMI })
  assertError(await call('pk_demo_doesNotExist0123456789abc'), 401, 'SVC-GW-1003')
  assertError(await call('not-a-key'), 401, 'SVC-GW-1003')
  assertError(await call(m.publicKey.replace('pk_demo_', 'pk_live_')), 401, 'SVC-GW-1003')
  assertError(await call(m.secretKey), 401, 'SVC-GW-1003')
  const revoked = await h.operator(
    'POST',
    `/operator/v1/merchants/${m.merchantId}/api-keys/${m.apiKeyId}/revoke`,
  )
  assert.equal(revoked.status, 204)
  assertError(await call(m.publicKey), 401, 'SVC-GW-1003')
})

test('a demo key against a live app → 1003; a live key there passes', async (t) => {
  const demo = await setup(t)
  const live = await setup(t, { KURUS_ENV: 'live' })
  assert.match(live.m.publicKey, /^pk_live_/)
  assert.match(live.m.secretKey, /^sk_live_/)
  const liveOk = await rawSigned(live.h.url, {
    keys: live.m,
    timestamp: live.now.toISOString(),
    method: 'GET',
    path: WHOAMI,
  })
  assert.equal(liveOk.status, 200, liveOk.text)
  const demoOnLive = await rawSigned(live.h.url, {
    keys: demo.m,
    timestamp: live.now.toISOString(),
    method: 'GET',
    path: WHOAMI,
  })
  assertError(demoOnLive, 401, 'SVC-GW-1003')
  const liveOnDemo = await rawSigned(demo.h.url, {
    keys: live.m,
    timestamp: demo.now.toISOString(),
    method: 'GET',
    path: WHOAMI,
  })
  assertError(liveOnDemo, 401, 'SVC-GW-1003')
})

test('secrets and signatures never reach the logs', async (t) => {
  const { h, m, now } = await setup(t)
  await rawSigned(h.url, { keys: m, timestamp: now.toISOString(), method: 'GET', path: WHOAMI })
  await rawSigned(h.url, {
    keys: m,
    timestamp: now.toISOString(),
    method: 'GET',
    path: WHOAMI,
    signedMethod: 'get',
  })
  const logs = h.logs.join('')
  assert.ok(logs.length > 0)
  assert.ok(!logs.includes(m.secretKey), 'secret key in logs')
  assert.ok(!logs.includes(m.secretKey.slice(8)), 'secret key body in logs')
})
