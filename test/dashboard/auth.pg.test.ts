// Goal: dashboard login and its JWT guard: one 401 for a wrong email or password, expiry by
// the clock, API keys refused on dashboard routes and dashboard tokens on signed routes,
// another merchant's store a 404; the sign-in lockout (5 failures in 15 min lock an email for
// 15 min whatever the client address, unknown emails alike, across processes).
// Method: the real app over HTTP (clients on several loopback addresses); the test clock for
// expiry and the lockout window.
import assert from 'node:assert/strict'
import { randomBytes, scryptSync } from 'node:crypto'
import { test } from 'node:test'
import { SignJWT } from 'jose'
import { TestClock } from '../../src/platform/clock.ts'
import { startTestApp, type TestApp } from '../helpers/app.ts'
import { rawRequest } from '../security/_support.ts'
import {
  HOUR,
  MINUTE,
  dashboardFetch,
  login,
  newDashboardMerchant,
  startReceiver,
} from '../webhooks/_support.ts'

test('login: a token for an hour; a wrong password and an unknown email get the same 401', async (t) => {
  const h = await startTestApp(t)
  const m = await newDashboardMerchant(h)
  const ok = await login(h, m.email, m.password)
  assert.equal(ok.status, 200)
  assert.match(ok.body.token, /^[\w-]+\.[\w-]+\.[\w-]+$/)
  const ttl = Date.parse(ok.body.expiresAt) - h.clock.now().getTime()
  assert.ok(ttl > 59 * MINUTE && ttl <= HOUR, `ttl ${ttl}`)
  const header = JSON.parse(Buffer.from(ok.body.token.split('.')[0]!, 'base64url').toString()) as {
    alg: string
  }
  assert.equal(header.alg, 'HS256')

  const me = await dashboardFetch<{ merchantId: string; email: string }>(
    h,
    'GET',
    '/v1/dashboard/me',
    {
      token: ok.body.token,
    },
  )
  assert.equal(me.status, 200)
  assert.equal(me.body.merchantId, m.merchantId)
  assert.equal(me.body.email, m.email)

  const wrongPassword = await login(h, m.email, `${m.password}x`)
  const unknownEmail = await login(h, `nobody-${m.email}`, m.password)
  for (const res of [wrongPassword, unknownEmail]) {
    assert.equal(res.status, 401)
    assert.equal(res.body.code, 'SVC-GW-1003')
  }
  assert.equal(wrongPassword.body.message, unknownEmail.body.message)
  const noBody = await dashboardFetch(h, 'POST', '/v1/dashboard/login', {
    body: { email: m.email },
  })
  assert.equal(noBody.status, 400)
  // Emails are matched case-insensitively.
  assert.equal((await login(h, m.email.toUpperCase(), m.password)).status, 200)
})

test('the guard: expired, forged, missing tokens and API keys are 401', async (t) => {
  const h = await startTestApp(t)
  const m = await newDashboardMerchant(h)
  const path = `/v1/stores/${m.storeId}/webhooks`
  const token = await m.token()
  assert.equal((await dashboardFetch(h, 'GET', path, { token })).status, 200)

  const missing = await dashboardFetch<{ code: string }>(h, 'GET', path)
  assert.equal(missing.status, 401)
  assert.equal(missing.body.code, 'SVC-GW-1003')
  const garbage = await dashboardFetch(h, 'GET', path, { token: 'not.a.jwt' })
  assert.equal(garbage.status, 401)
  // Signed with another key (or alg none): refused.
  const forged = await new SignJWT({ mid: m.merchantId, email: m.email, env: 'demo' })
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject('usr_x')
    .setIssuer('kurus')
    .setAudience('kurus-dashboard')
    .setIssuedAt()
    .setExpirationTime('1h')
    .sign(new Uint8Array(32).fill(1))
  assert.equal((await dashboardFetch(h, 'GET', path, { token: forged })).status, 401)
  const [, payload] = token.split('.')
  const unsigned = `${Buffer.from('{"alg":"none"}').toString('base64url')}.${payload}.`
  assert.equal((await dashboardFetch(h, 'GET', path, { token: unsigned })).status, 401)

  // A merchant's signed API key is no dashboard credential, even next to a bearer token.
  const signedToDashboard = await m.client.request<{ code: string }>('GET', path)
  assert.equal(signedToDashboard.status, 401)
  assert.equal(signedToDashboard.body.code, 'SVC-GW-1003')
  const keyAsBearer = await dashboardFetch(h, 'GET', path, { token: m.secretKey })
  assert.equal(keyAsBearer.status, 401)
  const both = await dashboardFetch(h, 'GET', path, {
    token,
    headers: { 'x-api-key': m.publicKey },
  })
  assert.equal(both.status, 401)

  // A dashboard token is no signed-API credential.
  const onSigned = await dashboardFetch<{ code: string }>(h, 'GET', '/v1/auth/whoami', { token })
  assert.equal(onSigned.status, 401)
  assert.equal(onSigned.body.code, 'SVC-GW-1003')

  // Expiry follows the service clock: an hour at most, even in use (30 idle minutes end it
  // sooner: test/dashboard/api-sign-in.test.ts).
  for (const step of [20, 20, 19]) {
    h.clock.advance(step * MINUTE)
    assert.equal((await dashboardFetch(h, 'GET', path, { token })).status, 200)
  }
  h.clock.advance(2 * MINUTE)
  const expired = await dashboardFetch<{ code: string }>(h, 'GET', path, { token })
  assert.equal(expired.status, 401)
  assert.equal(expired.body.code, 'SVC-GW-1003')
})

test("another merchant's store is a 404 on every dashboard route", async (t) => {
  const h = await startTestApp(t)
  const a = await newDashboardMerchant(h)
  const b = await newDashboardMerchant(h)
  const receiver = await startReceiver(t)
  const created = await a.dash<{ id: string }>('POST', `/v1/stores/${a.storeId}/webhooks`, {
    url: receiver.url,
  })
  assert.equal(created.status, 201)
  const keys = await a.dash<{ items: { apiKeyId: string }[] }>(
    'GET',
    `/v1/stores/${a.storeId}/api-keys`,
  )
  const keyId = keys.body.items[0]!.apiKeyId
  const s = a.storeId
  const calls: [string, string, unknown?][] = [
    ['GET', `/v1/stores/${s}/webhooks`],
    ['POST', `/v1/stores/${s}/webhooks`, { url: receiver.url }],
    ['DELETE', `/v1/stores/${s}/webhooks/${created.body.id}`],
    ['POST', `/v1/stores/${s}/webhooks/${created.body.id}/rotate-secret`],
    ['POST', `/v1/stores/${s}/webhooks/${created.body.id}/enable`],
    ['GET', `/v1/stores/${s}/webhooks/deliveries`],
    ['GET', `/v1/stores/${s}/webhooks/callback-secret`],
    ['GET', `/v1/stores/${s}/api-keys`],
    ['POST', `/v1/stores/${s}/api-keys`],
    ['POST', `/v1/stores/${s}/api-keys/${keyId}/roll`],
    ['DELETE', `/v1/stores/${s}/api-keys/${keyId}`],
  ]
  for (const [method, path, body] of calls) {
    const res = await b.dash<{ code: string }>(method, path, body)
    assert.equal(res.status, 404, `${method} ${path}`)
    assert.equal(res.body.code, 'SVC-RES-3301')
  }
  // b's own endpoint id under b's own store is also a 404 for a's endpoint.
  const crossId = await b.dash('DELETE', `/v1/stores/${b.storeId}/webhooks/${created.body.id}`)
  assert.equal(crossId.status, 404)
  // Nothing of a's changed.
  const still = await a.dash<{ items: unknown[] }>('GET', `/v1/stores/${a.storeId}/webhooks`)
  assert.equal(still.body.items.length, 1)
})

// ---- sign-in lockout (issue 22 §4): 5 failures in 15 min lock the email for 15 min

/** A clock that stands still until moved: the window edges are exact however slow scrypt is. */
class FrozenClock extends TestClock {
  #at = Date.now()
  override now(): Date {
    return new Date(this.#at)
  }
  override advance(ms: number): void {
    this.#at += ms
  }
  override set(date: Date): void {
    this.#at = date.getTime()
  }
}

interface Attempt {
  status: number
  code: string | undefined
  message: string | undefined
}

/** A sign-in from a given loopback address (another client IP each time if asked). */
async function signIn(
  h: TestApp,
  email: string,
  password: string,
  from = '127.0.0.1',
): Promise<Attempt> {
  const res = await rawRequest(h, {
    method: 'POST',
    path: '/v1/dashboard/login',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password }),
    localAddress: from,
  })
  const body = res.json as { code?: string; message?: string }
  return { status: res.status, code: body.code, message: body.message }
}

/** Failed sign-ins, each from another client address: the lock must not care about it. */
async function fail(h: TestApp, email: string, times: number, firstIp = 10): Promise<void> {
  for (let i = 0; i < times; i++) {
    const res = await signIn(h, email, `wrong-${i}`, `127.0.0.${firstIp + i}`)
    assert.equal(res.status, 401)
  }
}

test('lockout: 5 failures from 5 addresses lock the email for 15 min, the right password included', async (t) => {
  const h = await startTestApp(t, { clock: new FrozenClock() })
  const m = await newDashboardMerchant(h)
  const other = await newDashboardMerchant(h)
  const wrong = await signIn(h, m.email, 'wrong-0', '127.0.0.9')
  await fail(h, m.email, 4)

  // Locked: the right password, from a fresh address, gets the wrong password's answer.
  const locked = await signIn(h, m.email, m.password, '127.0.0.30')
  assert.deepEqual(locked, wrong)
  assert.equal(locked.code, 'SVC-GW-1003')
  assert.equal((await signIn(h, m.email.toUpperCase(), m.password, '127.0.0.31')).status, 401)
  // Only that email: another user signs in from the same addresses.
  assert.equal((await signIn(h, other.email, other.password, '127.0.0.10')).status, 200)

  h.clock.advance(14 * MINUTE + 59_000)
  assert.equal((await signIn(h, m.email, m.password)).status, 401, 'still locked at 14:59')
  h.clock.advance(2_000)
  assert.equal((await signIn(h, m.email, m.password)).status, 200, 'unlocked after 15 min')
})

test('lockout: an unknown email is counted and locked exactly like a known one', async (t) => {
  const h = await startTestApp(t, { clock: new FrozenClock() })
  const m = await newDashboardMerchant(h)
  const unknown = `nobody-${m.email}`
  const known: Attempt[] = []
  const stranger: Attempt[] = []
  for (let i = 0; i < 7; i++) {
    known.push(await signIn(h, m.email, `wrong-${i}`, `127.0.0.${20 + i}`))
    stranger.push(await signIn(h, unknown, `wrong-${i}`, `127.0.0.${20 + i}`))
  }
  // Same status, code and message at every step, before and after the lock.
  assert.deepEqual(stranger, known)
  assert.ok(known.every((a) => a.status === 401))
  // Both are locked now, and answer the same to the known email's right password.
  assert.deepEqual(await signIn(h, unknown, m.password), await signIn(h, m.email, m.password))
  // The lock table keys the emails by a keyed hash: no attempted address is stored.
  const rows = await h.deps.db.selectFrom('dashboard_login_throttles').selectAll().execute()
  assert.ok(rows.length >= 2)
  for (const row of rows) {
    assert.match(row.email_key, /^[0-9a-f]{64}$/)
    assert.ok(!JSON.stringify(row).includes('@'), JSON.stringify(row))
  }
})

test('lockout: the window slides over 15 min and a success clears the count', async (t) => {
  const h = await startTestApp(t, { clock: new FrozenClock() })
  const m = await newDashboardMerchant(h)

  // 4 failures, a success: the count starts over, so 4 more do not lock.
  await fail(h, m.email, 4)
  assert.equal((await signIn(h, m.email, m.password)).status, 200)
  await fail(h, m.email, 4)
  assert.equal((await signIn(h, m.email, m.password)).status, 200)

  // Failures older than 15 min drop out of the count.
  await fail(h, m.email, 4)
  h.clock.advance(15 * MINUTE + 1_000)
  await fail(h, m.email, 1)
  assert.equal((await signIn(h, m.email, m.password)).status, 200)

  // A sliding window, not fixed blocks from the first failure: 1 failure at 0:00 and 3 at
  // 14:00, then at 16:00 the first has dropped out (3 left) and 2 more make 5: locked.
  await fail(h, m.email, 1)
  h.clock.advance(14 * MINUTE)
  await fail(h, m.email, 3)
  h.clock.advance(2 * MINUTE)
  await fail(h, m.email, 2)
  assert.equal((await signIn(h, m.email, m.password)).status, 401, '5 in the last 15 min')
})

test('lockout: parallel guesses and two processes share one count', async (t) => {
  const h = await startTestApp(t, { clock: new FrozenClock() })
  // A second API process over the same database (and the same clock).
  const h2 = await startTestApp(t, { database: h.database, clock: h.clock })
  const m = await newDashboardMerchant(h)
  await fail(h, m.email, 3)
  await fail(h2, m.email, 2, 40)
  assert.equal((await signIn(h2, m.email, m.password)).status, 401, 'locked on the second')
  assert.equal((await signIn(h, m.email, m.password)).status, 401, 'and on the first')

  // Twenty guesses at once from twenty addresses: the email ends up locked all the same.
  const n = await newDashboardMerchant(h)
  const guesses = await Promise.all(
    Array.from({ length: 20 }, (_, i) =>
      signIn(i % 2 ? h : h2, n.email, `guess-${i}`, `127.0.1.${i + 1}`),
    ),
  )
  assert.ok(guesses.every((g) => g.status === 401))
  assert.equal((await signIn(h, n.email, n.password)).status, 401)
  h.clock.advance(16 * MINUTE)
  assert.equal((await signIn(h2, n.email, n.password)).status, 200)
})

test('passwords: the scrypt cost is stored in each hash, and a sign-in upgrades a cheaper one', async (t) => {
  const cheap = await startTestApp(t, { env: { KURUS_PASSWORD_HASH_COST: '10' } })
  const m = await newDashboardMerchant(cheap)
  const stored = async () =>
    (
      await cheap.deps.db
        .selectFrom('dashboard_users')
        .select('password_hash')
        .where('email', '=', m.email.toLowerCase())
        .executeTakeFirstOrThrow()
    ).password_hash
  assert.match(await stored(), /^scrypt\$ln=10\$/)

  // The cost raised (a redeploy): the old hash still signs in, and is rewritten at the new cost.
  const dearer = await startTestApp(t, {
    database: cheap.database,
    env: { KURUS_PASSWORD_HASH_COST: '11' },
  })
  assert.equal((await signIn(dearer, m.email, `${m.password}x`)).status, 401)
  assert.match(await stored(), /^scrypt\$ln=10\$/, 'a wrong password upgrades nothing')
  assert.equal((await signIn(dearer, m.email, m.password)).status, 200)
  assert.match(await stored(), /^scrypt\$ln=11\$/)
  assert.equal((await signIn(dearer, m.email, m.password)).status, 200)
  assert.equal((await signIn(cheap, m.email, m.password)).status, 200, 'never downgraded')
  assert.match(await stored(), /^scrypt\$ln=11\$/)

  // A hash from before the cost was stored (`scrypt$salt$key`, N = 2^15) still signs in.
  const salt = randomBytes(16)
  const key = scryptSync(m.password, salt, 32, { N: 2 ** 15, r: 8, p: 1, maxmem: 64 << 20 })
  await cheap.deps.db
    .updateTable('dashboard_users')
    .set({ password_hash: `scrypt$${salt.toString('base64url')}$${key.toString('base64url')}` })
    .where('email', '=', m.email.toLowerCase())
    .execute()
  assert.equal((await signIn(cheap, m.email, m.password)).status, 200)
  assert.equal((await signIn(cheap, m.email, 'not-it')).status, 401)
})
