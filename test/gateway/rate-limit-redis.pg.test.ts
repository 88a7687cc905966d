// Goal: with REDIS_URL the per-key and per-IP buckets live in Redis (one atomic script, shared
// by app instances on either database, the same maths as the PostgreSQL bucket), and an
// unreachable Redis fails open to the database's limiter with one warning.
// Method: rps 5 / burst 10 with the server clock frozen, as test/gateway/rate-limit.pg.test.ts;
// a key prefix of its own per test. The shared-bucket test needs a Redis: TEST_REDIS_URL
// (scripts/test.ts requires it when CI=true; .ci/run sets it).
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { test, type TestContext } from 'node:test'
import { sql } from 'kysely'
import { Redis } from 'ioredis'
import { startTestApp, type TestMerchant } from '../helpers/app.ts'
import { FreezableClock } from './_support.ts'

const ENV = { KURUS_RATE_LIMIT_RPS: '5', KURUS_RATE_LIMIT_BURST: '10' }
const REDIS_URL = process.env['TEST_REDIS_URL']

async function burst(m: TestMerchant, n: number): Promise<number[]> {
  const statuses: number[] = []
  for (let i = 0; i < n; i++)
    statuses.push((await m.client.request('GET', '/v1/auth/whoami')).status)
  return statuses
}

function times(n: number, status: number): number[] {
  return Array.from({ length: n }, () => status)
}

function messages(logs: string[]): string[] {
  return logs.map((l) => String((JSON.parse(l) as { msg?: unknown }).msg))
}

test('Redis unreachable: rate limits fail open to the database limiter, with one warning', async (t) => {
  const clock = new FreezableClock()
  const h = await startTestApp(t, {
    env: { ...ENV, REDIS_URL: 'redis://127.0.0.1:1', REDIS_KEY_PREFIX: `t:${randomUUID()}:` },
    clock,
  })
  const m = await h.newMerchant()
  clock.freeze()
  // Still limited (by the database's bucket), never refused and never unlimited.
  assert.deepEqual(await burst(m, 12), [...times(10, 200), 429, 429])
  const logged = messages(h.logs)
  assert.equal(logged.filter((msg) => msg.startsWith('Redis is not reachable at start')).length, 1)
  assert.equal(logged.filter((msg) => msg.startsWith('Redis unreachable: rate limits')).length, 1)
})

async function sharedBucket(t: TestContext, redisUrl: string) {
  const prefix = `kurus-test:${randomUUID()}:`
  const redis = new Redis(redisUrl)
  t.after(async () => {
    const keys = await redis.keys(`${prefix}*`)
    if (keys.length > 0) await redis.del(...keys)
    await redis.quit()
  })
  const evalshaCalls = async () =>
    Number(/cmdstat_evalsha:calls=(\d+)/.exec(await redis.info('commandstats'))?.[1] ?? 0)
  const env = { ...ENV, REDIS_URL: redisUrl, REDIS_KEY_PREFIX: prefix }
  const clock = new FreezableClock()
  const first = await startTestApp(t, { env, clock })
  const m = await first.newMerchant()
  const second = await startTestApp(t, { env, clock, database: first.database })
  clock.freeze()
  const callsBefore = await evalshaCalls()

  // One bucket for both instances, on PGlite as on PostgreSQL: 6 spent on the first, 4 left.
  assert.deepEqual(await burst(m, 6), times(6, 200))
  const viaSecond = { ...m, client: second.clientFor(m) }
  assert.deepEqual(await burst(viaSecond, 11), [...times(4, 200), ...times(7, 429)])
  assert.deepEqual(await burst(m, 1), [429])
  // The PostgreSQL bucket's maths: one second at 5/s refills 5 tokens from -1.
  clock.advance(1_000)
  assert.deepEqual(await burst(viaSecond, 6), [200, 200, 200, 200, 429, 429])

  const key = `${prefix}rl:key:${m.apiKeyId}`
  assert.equal(await redis.hget(key, 'tokens'), '-1')
  const ttlMs = await redis.pttl(key)
  assert.ok(ttlMs > 0 && ttlMs <= 60_000, `the bucket expires (pttl ${ttlMs})`)
  const inDatabase = await sql<{ n: number }>`select count(*)::int as n from rate_limit_buckets
    where bucket = ${'key:' + m.apiKeyId}`.execute(first.deps.db)
  assert.equal(inDatabase.rows[0]?.n, 0, 'no bucket in the database')
  // One script call per request (EVALSHA; other clients may share this Redis, hence >=).
  assert.ok((await evalshaCalls()) - callsBefore >= 24)

  // Per-IP limits of the unsigned endpoints use the same Redis bucket store.
  const res = await fetch(`${first.url}/v1/public/sessions/cs_missing`)
  assert.notEqual(res.status, 429)
  assert.equal(await redis.exists(`${prefix}rl:ip:127.0.0.1`), 1)
  // No warning: Redis answered every time.
  assert.equal(
    messages([...first.logs, ...second.logs]).filter((msg) => msg.startsWith('Redis')).length,
    0,
  )
}

async function leasedBucket(t: TestContext, redisUrl: string) {
  const prefix = `kurus-test:${randomUUID()}:`
  const redis = new Redis(redisUrl)
  t.after(async () => {
    const keys = await redis.keys(`${prefix}*`)
    if (keys.length > 0) await redis.del(...keys)
    await redis.quit()
  })
  const env = {
    KURUS_RATE_LIMIT_RPS: '1',
    KURUS_RATE_LIMIT_BURST: '200',
    REDIS_URL: redisUrl,
    REDIS_KEY_PREFIX: prefix,
  }
  const clock = new FreezableClock()
  const first = await startTestApp(t, { env, clock })
  const m = await first.newMerchant()
  const second = await startTestApp(t, { env, clock, database: first.database })
  clock.freeze()
  assert.deepEqual(await burst(m, 150), times(150, 200))
  const key = `${prefix}rl:key:${m.apiKeyId}`
  // Leases of 1, 2, 4, 8, 16, then the cap (a tenth of the burst): 11 script calls, not 150.
  assert.equal(await redis.hget(key, 'granted'), '20')
  assert.equal(await redis.hget(key, 'tokens'), '49')
  // The two instances together: the burst, no more.
  const viaSecond = { ...m, client: second.clientFor(m) }
  const rest = [...(await burst(viaSecond, 60)), ...(await burst(m, 30))]
  assert.equal(rest.filter((s) => s === 200).length, 50)
}

// Registered only where a Redis is given, like the PostgreSQL suite (scripts/test.ts refuses
// to run without TEST_REDIS_URL in CI, so CI always runs it).
if (REDIS_URL !== undefined) {
  test('two app instances with REDIS_URL share one bucket in Redis', (t) =>
    sharedBucket(t, REDIS_URL))
  test('a busy bucket leases tokens from Redis in batches, never beyond the bucket', (t) =>
    leasedBucket(t, REDIS_URL))
}
