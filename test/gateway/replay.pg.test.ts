// Goal (issue 22 §3): a state-changing signed request is accepted once. A byte-identical replay
// inside the ±5 minute window is 401 SVC-GW-1006 and acts not at all, whichever API process it
// reaches; a replay that carries the original's Idempotency-Key is answered by the idempotency
// record (the stored response); reads are not remembered (docs/security.md says why); the SDK
// signs every call afresh, so its retries and identical calls are never taken for replays;
// the database's record of accepted signatures is swept once their window has passed.
// Method: test-only signed routes that count their effect, requests signed by hand so a test
// can send the same bytes twice, two app instances over one database, the server clock frozen
// (so two requests can share a timestamp) and moved past the window for the sweep. With
// TEST_REDIS_URL, the same over Redis (`SET NX PX`), and its fall-back to the database.
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { test, type TestContext } from 'node:test'
import { sql } from 'kysely'
import { Redis } from 'ioredis'
import { timestampFor } from '../../sdk/index.ts'
import { purgeExpiredAcceptedSignatures } from '../../src/modules/gateway/index.ts'
import { memoryReplayStore } from '../../src/modules/gateway/replay.ts'
import { startTestApp, type TestApp, type TestMerchant } from '../helpers/app.ts'
import {
  FreezableClock,
  hmacHex,
  probeRoutes,
  probeState,
  rawSigned,
  sha256Hex,
  UUID_V4,
  type ProbeState,
  type RawResponse,
  type RawSignedRequest,
} from './_support.ts'

const EFFECTS = '/v1/test/effects'
const REDIS_URL = process.env['TEST_REDIS_URL']

interface Ctx {
  h: TestApp
  m: TestMerchant
  state: ProbeState
  clock: FreezableClock
}

async function setup(t: TestContext, env: Record<string, string> = {}): Promise<Ctx> {
  const state = probeState()
  state.holdMs = 0
  const clock = new FreezableClock()
  const h = await startTestApp(t, { clock, env, extraSignedRoutes: [probeRoutes(state)] })
  const m = await h.newMerchant()
  clock.freeze()
  return { h, m, state, clock }
}

/** One signed request, captured: the same bytes and headers every time it is sent. */
function captured(c: Ctx, extra: Partial<RawSignedRequest> = {}): RawSignedRequest {
  return {
    keys: c.m,
    timestamp: timestampFor(c.clock.now()),
    method: 'POST',
    path: EFFECTS,
    body: JSON.stringify({ amount: 100, note: `capture ${randomUUID()}` }),
    ...extra,
  }
}

function assertReplayRefused(res: RawResponse): void {
  assert.equal(res.status, 401, res.text)
  assert.equal(res.body['code'], 'SVC-GW-1006')
  assert.match(String(res.body['message']), /already accepted/)
  assert.match(String(res.body['requestId']), UUID_V4)
  assert.equal(res.body['requestId'], res.headers.get('x-request-id'))
}

test('a byte-identical replay of an accepted POST is 401 SVC-GW-1006 and acts not at all', async (t) => {
  const c = await setup(t)
  const request = captured(c)
  const first = await rawSigned(c.h.url, request)
  assert.equal(first.status, 201, first.text)
  // Seconds or minutes later, inside the window: refused every time.
  for (const after of [0, 1_000, 4 * 60_000]) {
    c.clock.advance(after)
    assertReplayRefused(await rawSigned(c.h.url, request))
  }
  assert.equal(c.state.effects, 1)
  // Past the window the timestamp itself is refused, as before.
  c.clock.advance(2 * 60_000)
  const late = await rawSigned(c.h.url, request)
  assert.equal(late.body['code'], 'SVC-GW-1001')
  // The same payload signed afresh is a new request and acts.
  const fresh = await rawSigned(c.h.url, { ...request, timestamp: timestampFor(c.clock.now()) })
  assert.equal(fresh.status, 201, fresh.text)
  assert.equal(c.state.effects, 2)
})

test('a replay carrying the original Idempotency-Key gets the stored response; any other key is refused', async (t) => {
  const c = await setup(t)
  const key = randomUUID()
  const request = captured(c, { headers: { 'idempotency-key': key } })
  const first = await rawSigned(c.h.url, request)
  assert.equal(first.status, 201, first.text)
  const again = await rawSigned(c.h.url, request)
  assert.equal(again.status, 201, again.text)
  assert.deepEqual(again.body, first.body)
  assert.equal(again.headers.get('idempotent-replayed'), 'true')
  assert.equal(again.headers.get('x-request-id'), first.headers.get('x-request-id'))
  // The key is a UUID: its case does not matter.
  const upper = await rawSigned(c.h.url, {
    ...request,
    headers: { 'idempotency-key': key.toUpperCase() },
  })
  assert.equal(upper.headers.get('idempotent-replayed'), 'true')
  // The key is not signed, so a replay may not choose it: another key, or none, is refused.
  assertReplayRefused(
    await rawSigned(c.h.url, { ...request, headers: { 'idempotency-key': randomUUID() } }),
  )
  assertReplayRefused(
    await rawSigned(c.h.url, { ...request, headers: { 'idempotency-key': undefined } }),
  )
  // Nor may a key be added to the replay of a request that had none.
  const bare = captured(c)
  assert.equal((await rawSigned(c.h.url, bare)).status, 201)
  assertReplayRefused(
    await rawSigned(c.h.url, { ...bare, headers: { 'idempotency-key': randomUUID() } }),
  )
  assert.equal(c.state.effects, 2)
})

test('a 202 replayed with its Idempotency-Key is re-evaluated, as a retry with the key is', async (t) => {
  const c = await setup(t)
  const request = captured(c, {
    path: '/v1/test/accepted',
    headers: { 'idempotency-key': randomUUID() },
  })
  assert.equal((await rawSigned(c.h.url, request)).status, 202)
  assert.equal((await rawSigned(c.h.url, request)).status, 202)
  assert.equal(c.state.effects, 2)
  assertReplayRefused(
    await rawSigned(c.h.url, { ...request, headers: { 'idempotency-key': undefined } }),
  )
})

test('reads are not remembered: a replayed GET answers again', async (t) => {
  const c = await setup(t)
  const request: RawSignedRequest = {
    keys: c.m,
    timestamp: timestampFor(c.clock.now()),
    method: 'GET',
    path: '/v1/auth/whoami',
  }
  for (let i = 0; i < 3; i++) assert.equal((await rawSigned(c.h.url, request)).status, 200)
})

test('a request refused before it was accepted is not remembered: the same bytes pass later', async (t) => {
  const c = await setup(t, { KURUS_RATE_LIMIT_RPS: '1', KURUS_RATE_LIMIT_BURST: '1' })
  assert.equal((await rawSigned(c.h.url, captured(c))).status, 201)
  const request = captured(c)
  const limited = await rawSigned(c.h.url, request)
  assert.equal(limited.status, 429, limited.text)
  c.clock.advance(2_000)
  assert.equal((await rawSigned(c.h.url, request)).status, 201)
  assert.equal(c.state.effects, 2)
})

test('20 identical requests at once: one acts, 19 are refused as replays', async (t) => {
  const c = await setup(t)
  const request = captured(c)
  const answers = await Promise.all(Array.from({ length: 20 }, () => rawSigned(c.h.url, request)))
  const statuses = answers.map((a) => a.status).sort()
  assert.deepEqual(statuses, [201, ...Array.from({ length: 19 }, () => 401)])
  for (const a of answers.filter((x) => x.status === 401)) assertReplayRefused(a)
  assert.equal(c.state.effects, 1)
})

test('a replay that reaches another API process over the same database is refused too', async (t) => {
  const c = await setup(t)
  const secondState = probeState()
  const second = await startTestApp(t, {
    clock: c.clock,
    database: c.h.database,
    extraSignedRoutes: [probeRoutes(secondState)],
  })
  const request = captured(c)
  assert.equal((await rawSigned(c.h.url, request)).status, 201)
  assertReplayRefused(await rawSigned(second.url, request))
  // And the other way round.
  const viaSecond = captured(c)
  assert.equal((await rawSigned(second.url, viaSecond)).status, 201)
  assertReplayRefused(await rawSigned(c.h.url, viaSecond))
  assert.equal(c.state.effects + secondState.effects, 2)
})

test('the SDK signs every call afresh: identical calls under a frozen clock all act', async (t) => {
  const c = await setup(t)
  const body = { amount: 100, note: 'same' }
  for (let i = 0; i < 3; i++) {
    const res = await c.m.client.request('POST', EFFECTS, { body })
    assert.equal(res.status, 201, JSON.stringify(res.body))
  }
  assert.equal(c.state.effects, 3)
})

test('accepted signatures are kept for the window, then forgotten (PostgreSQL table swept; memory on PGlite)', async (t) => {
  const c = await setup(t)
  const request = captured(c)
  const res = await rawSigned(c.h.url, request)
  assert.equal(res.status, 201, res.text)
  // This request's signature (the test signs by hand, so it knows it).
  const hex = hmacHex(
    c.m.secretKey,
    [request.timestamp, 'POST', EFFECTS, sha256Hex(request.body ?? '')].join('\n'),
  )
  const rows = async () =>
    (
      await sql<{ n: number }>`select count(*)::int as n from accepted_signatures
        where signature = ${Buffer.from(hex, 'hex')}`.execute(c.h.deps.db)
    ).rows[0]?.n
  // 5 minutes of window and a minute of margin for clocks that differ between processes.
  const window = 6 * 60_000
  if (c.h.database.handle.kind === 'postgres') {
    assert.equal(await rows(), 1)
    await purgeExpiredAcceptedSignatures(c.h.deps)
    assert.equal(await rows(), 1)
    c.clock.advance(window - 1_000)
    await purgeExpiredAcceptedSignatures(c.h.deps)
    assert.equal(await rows(), 1)
    c.clock.advance(1_000)
    assert.ok((await purgeExpiredAcceptedSignatures(c.h.deps)) >= 1)
    assert.equal(await rows(), 0)
  } else {
    // PGlite is one process: the record is in memory, shared by every app over this
    // database (the store is per database handle), and nothing is written to the table.
    assert.equal(c.h.database.handle.kind, 'pglite')
    assert.equal(await rows(), 0)
    const store = memoryReplayStore(c.h.deps.db, c.clock)
    const again = { signature: hex, idempotencyKey: null, expiresAt: new Date(0) }
    assert.deepEqual(await store.remember(again), { first: false, idempotencyKey: null })
    c.clock.advance(window - 1_000)
    assert.equal((await store.remember(again)).first, false)
    c.clock.advance(1_000)
    assert.equal((await store.remember(again)).first, true)
  }
})

async function redisContext(t: TestContext, redisUrl: string) {
  const prefix = `kurus-test:${randomUUID()}:`
  const redis = new Redis(redisUrl)
  t.after(async () => {
    const keys = await redis.keys(`${prefix}*`)
    if (keys.length > 0) await redis.del(...keys)
    await redis.quit()
  })
  return { prefix, redis, env: { REDIS_URL: redisUrl, REDIS_KEY_PREFIX: prefix } }
}

async function sharedOverRedis(t: TestContext, redisUrl: string) {
  const { prefix, redis, env } = await redisContext(t, redisUrl)
  const c = await setup(t, env)
  const secondState = probeState()
  const second = await startTestApp(t, {
    clock: c.clock,
    env,
    database: c.h.database,
    extraSignedRoutes: [probeRoutes(secondState)],
  })
  const key = randomUUID()
  const request = captured(c, { headers: { 'idempotency-key': key } })
  const first = await rawSigned(c.h.url, request)
  assert.equal(first.status, 201, first.text)
  assertReplayRefused(
    await rawSigned(second.url, { ...request, headers: { 'idempotency-key': undefined } }),
  )
  const stored = await rawSigned(second.url, request)
  assert.equal(stored.headers.get('idempotent-replayed'), 'true')
  assert.equal(c.state.effects + secondState.effects, 1)
  const keys = await redis.keys(`${prefix}sig:*`)
  assert.equal(keys.length, 1)
  assert.equal(await redis.get(keys[0] ?? ''), key)
  const ttl = await redis.pttl(keys[0] ?? '')
  assert.ok(ttl > 5 * 60_000 && ttl <= 6 * 60_000, `expires with its window (pttl ${ttl})`)
  const rows = await sql<{ n: number }>`select count(*)::int as n from accepted_signatures
    where signature = ${Buffer.from(keys[0]?.slice(-64) ?? '', 'hex')}`.execute(c.h.deps.db)
  assert.equal(rows.rows[0]?.n, 0, 'not in the database as well')
}

// Registered only where a Redis is given, as test/gateway/rate-limit-redis.pg.test.ts (CI sets
// TEST_REDIS_URL, so CI always runs it).
if (REDIS_URL !== undefined) {
  test('with Redis: accepted signatures live there (SET NX PX), shared by API processes', (t) =>
    sharedOverRedis(t, REDIS_URL))
}

test('Redis unreachable: accepted signatures fall back to the database store, replays are still refused', async (t) => {
  const c = await setup(t, {
    REDIS_URL: 'redis://127.0.0.1:1',
    REDIS_KEY_PREFIX: `t:${randomUUID()}:`,
  })
  const request = captured(c)
  assert.equal((await rawSigned(c.h.url, request)).status, 201)
  assertReplayRefused(await rawSigned(c.h.url, request))
  assert.equal(c.state.effects, 1)
  const warned = c.h.logs.filter((l) =>
    l.includes('Redis unreachable: accepted signatures fall back'),
  )
  assert.equal(warned.length, 1)
})

test('the OpenAPI document describes SVC-GW-1006 on the signature scheme and the 401 answers', async (t) => {
  const c = await setup(t)
  const doc = (await (await fetch(`${c.h.url}/openapi.json`)).json()) as {
    components: { securitySchemes: Record<string, { description?: string }> }
    paths: Record<string, Record<string, { responses: Record<string, { description: string }> }>>
  }
  assert.match(doc.components.securitySchemes['signature']?.description ?? '', /SVC-GW-1006/)
  const refund = doc.paths['/v1/payments/{id}/refund']?.['post']?.responses
  assert.match(refund?.['401']?.description ?? '', /SVC-GW-1006/)
  assert.match(refund?.['400']?.description ?? '', /deeper than 64/)
})
