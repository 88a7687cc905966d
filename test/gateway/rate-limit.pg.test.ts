// Goal: per-key token bucket: 429 SVC-GW-1004 with Retry-After past the burst, isolated per key, shared by app instances on PostgreSQL.
// Method: rps 5 / burst 10 with the server clock frozen, so tokens come back only when the test moves time.
import assert from 'node:assert/strict'
import { test, type TestContext } from 'node:test'
import { sql } from 'kysely'
import type { KurusResponse } from '../../sdk/index.ts'
import { startTestApp, type TestMerchant } from '../helpers/app.ts'
import { FreezableClock, send } from './_support.ts'

const ENV = { KURUS_RATE_LIMIT_RPS: '5', KURUS_RATE_LIMIT_BURST: '10' }

async function setup(t: TestContext) {
  const clock = new FreezableClock()
  const h = await startTestApp(t, { env: ENV, clock })
  const m = await h.newMerchant()
  clock.freeze()
  return { h, m, clock }
}

function whoami(m: TestMerchant): Promise<KurusResponse> {
  return m.client.request('GET', '/v1/auth/whoami')
}

/** Sends n requests one after another and returns their statuses. */
async function burst(m: TestMerchant, n: number): Promise<number[]> {
  const statuses: number[] = []
  for (let i = 0; i < n; i++) statuses.push((await whoami(m)).status)
  return statuses
}

function times(n: number, status: number): number[] {
  return Array.from({ length: n }, () => status)
}

function count(statuses: number[], status: number): number {
  return statuses.filter((s) => s === status).length
}

test('past the burst: 429 SVC-GW-1004 with Retry-After; tokens come back at the configured rate', async (t) => {
  const { m, clock } = await setup(t)
  assert.deepEqual(await burst(m, 10), times(10, 200))
  const limited = await whoami(m)
  assert.equal(limited.status, 429)
  const body = limited.body as Record<string, unknown>
  assert.equal(body['code'], 'SVC-GW-1004')
  assert.equal(body['requestId'], limited.requestId)
  assert.equal(limited.headers.get('retry-after'), '1')
  // Hammering while limited does not dig the hole deeper.
  assert.deepEqual(await burst(m, 5), times(5, 429))
  // One second at 5/s refills 5 tokens from a balance of -1: four requests pass.
  clock.advance(1_000)
  const after = await burst(m, 6)
  assert.deepEqual(after, [200, 200, 200, 200, 429, 429])
  // A long pause refills to the burst, never beyond it.
  clock.advance(3_600_000)
  const refilled = await burst(m, 12)
  assert.equal(count(refilled, 200), 10)
  assert.deepEqual(refilled.slice(10), [429, 429])
})

test("one key's burst does not throttle another merchant's key or another key of the same merchant", async (t) => {
  const { h, m } = await setup(t)
  const other = await h.newMerchant()
  const store = await h.operator<{ publicKey: string; secretKey: string }>(
    'POST',
    `/operator/v1/merchants/${m.merchantId}/stores`,
    {},
  )
  assert.equal(store.status, 201)
  const storeClient = h.clientFor(store.body)
  assert.equal(count(await burst(m, 15), 429), 5)
  assert.deepEqual(await burst(other, 10), times(10, 200))
  for (let i = 0; i < 10; i++) assert.equal((await storeClient.whoami()).merchantId, m.merchantId)
  assert.equal((await whoami(m)).status, 429)
})

test('requests that fail authentication do not spend the key’s tokens', async (t) => {
  const { h, m } = await setup(t)
  for (let i = 0; i < 20; i++) {
    const res = await send(h.url + '/v1/auth/whoami', 'GET', {
      'x-api-key': m.publicKey,
      'x-timestamp': h.clock.now().toISOString(),
      'x-signature': '0'.repeat(64),
    })
    assert.equal(res.status, 401)
  }
  assert.deepEqual(await burst(m, 10), times(10, 200))
})

test('the bucket lives in PostgreSQL (shared by app instances) or in memory on PGlite', async (t) => {
  const { h, m, clock } = await setup(t)
  const second = await startTestApp(t, { env: ENV, clock, database: h.database })
  const viaSecond = second.clientFor(m)
  assert.deepEqual(await burst(m, 6), times(6, 200))
  const rows = await sql<{ n: number }>`select count(*)::int as n from rate_limit_buckets
    where bucket = ${'key:' + m.apiKeyId}`.execute(h.deps.db)
  const onSecond: number[] = []
  for (let i = 0; i < 11; i++)
    onSecond.push((await viaSecond.request('GET', '/v1/auth/whoami')).status)
  if (h.database.handle.kind === 'postgres') {
    // One bucket for both processes: 6 spent on the first, 4 left for the second.
    assert.equal(rows.rows[0]?.n, 1)
    assert.deepEqual(onSecond, [...times(4, 200), ...times(7, 429)])
    assert.equal((await whoami(m)).status, 429)
  } else {
    // PGlite is one process by construction; each app keeps its own bucket in memory.
    assert.equal(h.database.handle.kind, 'pglite')
    assert.equal(rows.rows[0]?.n, 0)
    assert.deepEqual(onSecond, [...times(10, 200), 429])
    assert.deepEqual(await burst(m, 5), [200, 200, 200, 200, 429])
  }
})

test('concurrent requests never get more than the burst', async (t) => {
  const { m } = await setup(t)
  const results = await Promise.all(Array.from({ length: 30 }, () => whoami(m)))
  assert.equal(
    count(
      results.map((r) => r.status),
      200,
    ),
    10,
  )
  assert.equal(
    count(
      results.map((r) => r.status),
      429,
    ),
    20,
  )
})

// Issue 29: a busy bucket leases tokens in batches (one shared take per batch, not per
// request), and the requests let through still never exceed what the shared bucket holds.
test('busy buckets lease tokens in batches and never let more through than the bucket holds', async (t) => {
  const clock = new FreezableClock()
  const env = { KURUS_RATE_LIMIT_RPS: '1', KURUS_RATE_LIMIT_BURST: '200' }
  const h = await startTestApp(t, { env, clock })
  const m = await h.newMerchant()
  const second = await startTestApp(t, { env, clock, database: h.database })
  const viaSecond = { ...m, client: second.clientFor(m) }
  clock.freeze()
  const first = await burst(m, 150)
  assert.deepEqual(first, times(150, 200))
  const bucket = async () =>
    (
      await sql<{ tokens: number; granted: number }>`select tokens, granted from rate_limit_buckets
        where bucket = ${'key:' + m.apiKeyId}`.execute(h.deps.db)
    ).rows[0]
  if (h.database.handle.kind === 'postgres') {
    const row = await bucket()
    // Leases grew 1, 2, 4, 8, 16, then the cap (a tenth of the burst): the last take was 20.
    assert.equal(row?.granted, 20)
    // Handed out: at least the 150 spent, at most one lease more.
    assert.ok(row && row.tokens <= 50 && row.tokens > 30, `tokens left ${row?.tokens}`)
    // Both instances together: exactly the burst, then refusals, whoever asks.
    const rest = [...(await burst(viaSecond, 100)), ...(await burst(m, 30))]
    assert.equal(count(rest, 200), 50)
    assert.equal(count(rest, 429), 80)
    assert.deepEqual(await burst(viaSecond, 3), times(3, 429))
  } else {
    // PGlite is one process: its bucket is in memory, no lease, no row.
    assert.equal(await bucket(), undefined)
    assert.deepEqual(await burst(m, 51), [...times(50, 200), 429])
  }
})
