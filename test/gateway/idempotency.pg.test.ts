// Goal: the Idempotency-Key contract: verbatim replay, 2001 on another payload, 2002 while running, one effect under concurrency, 24 h lifetime, 5xx releases the key.
// Method: test-only signed routes that count their effect (a gate holds a request open when overlap matters), over HTTP, clock moved for expiry.
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { test, type TestContext } from 'node:test'
import type { KurusResponse } from '../../sdk/index.ts'
import { startTestApp, type TestApp, type TestMerchant } from '../helpers/app.ts'
import { sql } from 'kysely'
import { purgeExpiredIdempotencyKeys } from '../../src/modules/gateway/index.ts'
import { probeRoutes, probeState, until, type ProbeState } from './_support.ts'

interface Ctx {
  h: TestApp
  m: TestMerchant
  state: ProbeState
}

async function setup(t: TestContext): Promise<Ctx> {
  const state = probeState()
  const h = await startTestApp(t, { extraSignedRoutes: [probeRoutes(state)] })
  const m = await h.newMerchant()
  return { h, m, state }
}

type Body = Record<string, unknown>

function assertEnvelope(res: KurusResponse, status: number, code: string): void {
  const body = res.body as Body
  assert.equal(res.status, status, JSON.stringify(body))
  assert.equal(body['code'], code)
  assert.equal(body['requestId'], res.requestId)
}

test('same key and same body: the original response verbatim, marked as a replay', async (t) => {
  const { m, state } = await setup(t)
  const key = randomUUID()
  const first = await m.client.request('POST', '/v1/test/effects', {
    rawBody: '{"amount":100, "note":"Çay"}',
    idempotencyKey: key,
  })
  assert.equal(first.status, 201)
  assert.equal(first.headers.get('idempotent-replayed'), null)
  const second = await m.client.request('POST', '/v1/test/effects', {
    rawBody: '{"amount":100, "note":"Çay"}',
    idempotencyKey: key,
    requestId: randomUUID(),
  })
  assert.equal(second.status, 201)
  assert.deepEqual(second.body, first.body)
  assert.equal(second.requestId, first.requestId)
  assert.equal(second.headers.get('idempotent-replayed'), 'true')
  assert.equal(second.headers.get('content-type'), first.headers.get('content-type'))
  assert.equal(state.effects, 1)
  // The key is case-insensitive (a UUID), and other keys or no key act again.
  const upper = await m.client.request('POST', '/v1/test/effects', {
    rawBody: '{"amount":100, "note":"Çay"}',
    idempotencyKey: key.toUpperCase(),
  })
  assert.equal(upper.headers.get('idempotent-replayed'), 'true')
  assert.equal(upper.requestId, first.requestId)
  await m.client.request('POST', '/v1/test/effects', {
    body: { amount: 100 },
    idempotencyKey: true,
  })
  await m.client.request('POST', '/v1/test/effects', { body: { amount: 100 } })
  assert.equal(state.effects, 3)
})

test('same key and another body (even re-serialised) → 409 SVC-GW-2001', async (t) => {
  const { m, state } = await setup(t)
  const key = randomUUID()
  const first = await m.client.request('POST', '/v1/test/effects', {
    rawBody: '{"a":1, "b":2}',
    idempotencyKey: key,
  })
  assert.equal(first.status, 201)
  for (const rawBody of ['{"a":1,"b":2}', '{"a":1, "b":3}', '{}']) {
    const res = await m.client.request('POST', '/v1/test/effects', { rawBody, idempotencyKey: key })
    assertEnvelope(res, 409, 'SVC-GW-2001')
    assert.equal(res.headers.get('idempotent-replayed'), null)
  }
  assert.equal(state.effects, 1)
})

test('the record is per API key and endpoint', async (t) => {
  const { h, m, state } = await setup(t)
  const other = await h.newMerchant()
  const key = randomUUID()
  const a = await m.client.request('POST', '/v1/test/effects', {
    body: { x: 1 },
    idempotencyKey: key,
  })
  const b = await other.client.request('POST', '/v1/test/effects', {
    body: { x: 1 },
    idempotencyKey: key,
  })
  const c = await m.client.request('POST', '/v1/test/echo', { body: { x: 2 }, idempotencyKey: key })
  assert.equal(a.status, 201)
  assert.equal(b.status, 201)
  assert.equal(b.headers.get('idempotent-replayed'), null)
  assert.equal(c.status, 200)
  assert.equal(state.effects, 2)
})

test('an Idempotency-Key that is not a UUID v4 → 400 before anything runs', async (t) => {
  const { m, state } = await setup(t)
  for (const key of ['abc', '123', '6f1c2f4e-1c1b-1c1b-8c1b-1c1b1c1b1c1b', `${randomUUID()}x`]) {
    const res = await m.client.request('POST', '/v1/test/effects', {
      body: { a: 1 },
      idempotencyKey: key,
    })
    assertEnvelope(res, 400, 'SVC-VAL-3001')
  }
  assert.equal(state.effects, 0)
})

test('20 concurrent requests with one key produce exactly one effect', async (t) => {
  const { m, state } = await setup(t)
  state.holdMs = 150
  const key = randomUUID()
  const results = await Promise.all(
    Array.from({ length: 20 }, () =>
      m.client.request('POST', '/v1/test/effects', {
        rawBody: '{"amount":500}',
        idempotencyKey: key,
      }),
    ),
  )
  assert.equal(state.effects, 1)
  const originals = results.filter(
    (r) => r.status === 201 && r.headers.get('idempotent-replayed') === null,
  )
  assert.equal(originals.length, 1)
  const original = originals[0]!
  // Each other request either met the running claim or arrived after it finished.
  for (const r of results) {
    if (r === original) continue
    if (r.status === 409) {
      assertEnvelope(r, 409, 'SVC-GW-2002')
    } else {
      assert.equal(r.status, 201)
      assert.equal(r.headers.get('idempotent-replayed'), 'true')
      assert.deepEqual(r.body, original.body)
      assert.equal(r.requestId, original.requestId)
    }
  }
  // Once finished, a retry is a verbatim replay.
  const retry = await m.client.request('POST', '/v1/test/effects', {
    rawBody: '{"amount":500}',
    idempotencyKey: key,
  })
  assert.equal(retry.headers.get('idempotent-replayed'), 'true')
  assert.equal(retry.requestId, original.requestId)
  assert.equal(state.effects, 1)
})

test('while the first of 20 concurrent requests runs, the other 19 get 409 SVC-GW-2002', async (t) => {
  const { m, state } = await setup(t)
  let open = (): void => undefined
  state.gate = new Promise<void>((resolve) => (open = resolve))
  const key = randomUUID()
  let settled = 0
  const pending = Array.from({ length: 20 }, () =>
    m.client
      .request('POST', '/v1/test/effects', { rawBody: '{"amount":500}', idempotencyKey: key })
      .finally(() => (settled += 1)),
  )
  // The claimant is held inside the handler until every other request has been answered.
  await until(() => settled === 19 && state.inFlight === 1)
  open()
  const results = await Promise.all(pending)
  const statuses = results.map((r) => r.status).sort()
  assert.deepEqual(statuses, [201, ...Array.from({ length: 19 }, () => 409)])
  for (const r of results.filter((x) => x.status === 409)) assertEnvelope(r, 409, 'SVC-GW-2002')
  assert.equal(state.effects, 1)
})

test('a key lives 24 hours: after that the same key acts again', async (t) => {
  const { h, m, state } = await setup(t)
  const key = randomUUID()
  const first = await m.client.request('POST', '/v1/test/effects', {
    body: { a: 1 },
    idempotencyKey: key,
  })
  h.clock.advance(24 * 3600_000 - 60_000)
  const replay = await m.client.request('POST', '/v1/test/effects', {
    body: { a: 1 },
    idempotencyKey: key,
  })
  assert.equal(replay.headers.get('idempotent-replayed'), 'true')
  assert.equal(state.effects, 1)
  h.clock.advance(61_000)
  const fresh = await m.client.request('POST', '/v1/test/effects', {
    body: { a: 1 },
    idempotencyKey: key,
  })
  assert.equal(fresh.status, 201)
  assert.equal(fresh.headers.get('idempotent-replayed'), null)
  assert.notEqual(fresh.requestId, first.requestId)
  assert.equal(state.effects, 2)
  // The reclaimed record starts a new 24 hours, with whatever payload claimed it.
  const other = await m.client.request('POST', '/v1/test/effects', {
    body: { a: 2 },
    idempotencyKey: key,
  })
  assertEnvelope(other, 409, 'SVC-GW-2001')
  h.clock.advance(24 * 3600_000 + 1_000)
  const otherLater = await m.client.request('POST', '/v1/test/effects', {
    body: { a: 2 },
    idempotencyKey: key,
  })
  assert.equal(otherLater.status, 201)
  assert.equal(state.effects, 3)
})

test('a 5xx releases the key: the retry runs, and the error leaks nothing', async (t) => {
  const { h, m, state } = await setup(t)
  state.failuresLeft = 1
  const key = randomUUID()
  const failed = await m.client.request('POST', '/v1/test/flaky', {
    body: { a: 1 },
    idempotencyKey: key,
  })
  assertEnvelope(failed, 500, 'SVC-INT-9001')
  assert.ok(!JSON.stringify(failed.body).includes('hunter2'))
  const retry = await m.client.request('POST', '/v1/test/flaky', {
    body: { a: 1 },
    idempotencyKey: key,
  })
  assert.equal(retry.status, 201)
  assert.equal(retry.headers.get('idempotent-replayed'), null)
  assert.notEqual(retry.requestId, failed.requestId)
  const replay = await m.client.request('POST', '/v1/test/flaky', {
    body: { a: 1 },
    idempotencyKey: key,
  })
  assert.equal(replay.headers.get('idempotent-replayed'), 'true')
  assert.equal(state.effects, 1)
  // The request id of the 5xx is in the logs for support.
  assert.ok(h.logs.some((l) => l.includes(failed.requestId!) && l.includes('unhandled error')))
})

test('a 202 is not cached: a retry with the key runs again', async (t) => {
  const { m, state } = await setup(t)
  const key = randomUUID()
  const a = await m.client.request('POST', '/v1/test/accepted', {
    body: { a: 1 },
    idempotencyKey: key,
  })
  const b = await m.client.request('POST', '/v1/test/accepted', {
    body: { a: 1 },
    idempotencyKey: key,
  })
  assert.equal(a.status, 202)
  assert.equal(b.status, 202)
  assert.equal(b.headers.get('idempotent-replayed'), null)
  assert.equal(state.effects, 2)
  const other = await m.client.request('POST', '/v1/test/accepted', {
    body: { a: 2 },
    idempotencyKey: key,
  })
  assertEnvelope(other, 409, 'SVC-GW-2001')
})

test('Idempotency-Key on a GET is ignored', async (t) => {
  const { m } = await setup(t)
  const key = randomUUID()
  const a = await m.client.request('GET', '/v1/auth/whoami', { idempotencyKey: key })
  const b = await m.client.request('GET', '/v1/auth/whoami', { idempotencyKey: key })
  assert.equal(a.status, 200)
  assert.equal(b.status, 200)
  assert.equal(b.headers.get('idempotent-replayed'), null)
  assert.notEqual(a.requestId, b.requestId)
})

test('a live holder keeps its claim past 60 s; a dead one loses it, and only the new holder records its answer', async (t) => {
  const { h, m, state } = await setup(t)
  let open = (): void => undefined
  state.gate = new Promise<void>((resolve) => (open = resolve))
  const key = randomUUID()
  const first = m.client.request('POST', '/v1/test/effects', {
    body: { a: 1 },
    idempotencyKey: key,
  })
  await until(() => state.inFlight === 1)
  const busy = await m.client.request('POST', '/v1/test/effects', {
    body: { a: 1 },
    idempotencyKey: key,
  })
  assertEnvelope(busy, 409, 'SVC-GW-2002')
  // Still running in a live process: no stale window takes it over (decision 0035).
  h.clock.advance(61_000)
  const stillBusy = await m.client.request('POST', '/v1/test/effects', {
    body: { a: 1 },
    idempotencyKey: key,
  })
  assertEnvelope(stillBusy, 409, 'SVC-GW-2002')
  // Its owner gone (another process, no lease): the retry takes the key over.
  await sql`update idempotency_keys set owner = ${randomUUID()}
            where idempotency_key = ${key}::uuid`.execute(h.deps.db)
  state.gate = undefined
  const takeover = await m.client.request('POST', '/v1/test/effects', {
    body: { a: 1 },
    idempotencyKey: key,
  })
  assert.equal(takeover.status, 201)
  assert.equal(takeover.headers.get('idempotent-replayed'), null)
  open()
  const late = await first
  assert.equal(late.status, 201)
  // The late finisher no longer holds the claim, so the record keeps the takeover's answer.
  const replay = await m.client.request('POST', '/v1/test/effects', {
    body: { a: 1 },
    idempotencyKey: key,
  })
  assert.equal(replay.headers.get('idempotent-replayed'), 'true')
  assert.equal(replay.requestId, takeover.requestId)
  assert.deepEqual(replay.body, takeover.body)
  assert.equal(state.effects, 2)
})

test('expired idempotency records are purged', async (t) => {
  const { h, m } = await setup(t)
  const count = async () =>
    (
      await sql<{ n: number }>`select count(*)::int as n from idempotency_keys
        where api_key_id = ${m.apiKeyId}`.execute(h.deps.db)
    ).rows[0]?.n
  for (let i = 0; i < 3; i++) {
    await m.client.request('POST', '/v1/test/echo', { body: { i }, idempotencyKey: true })
  }
  await purgeExpiredIdempotencyKeys(h.deps)
  assert.equal(await count(), 3)
  h.clock.advance(12 * 3600_000)
  const young = await m.client.request('POST', '/v1/test/echo', { body: {}, idempotencyKey: true })
  assert.equal(young.status, 200)
  h.clock.advance(12 * 3600_000 + 1_000)
  assert.ok((await purgeExpiredIdempotencyKeys(h.deps)) >= 3)
  assert.equal(await count(), 1)
})
