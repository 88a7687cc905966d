// Goal: abuse controls (OWASP API4 resource consumption, API7 SSRF; PCI card-testing): per-key
// and per-IP rate limits that keep one tenant's or client's burst from slowing another's
// requests, the card-testing rules on the public pay endpoint (per session, per IP), and
// webhook destinations on private, link-local and metadata addresses refused in live.
// Method: apps with a small rate-limit budget and a frozen clock (no sleeping: the clock is
// moved), clients on several loopback addresses (127.0.0.x) to act as distinct IPs, and a
// live app for the card-testing and SSRF rules.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { TestClock } from '../../src/platform/clock.ts'
import { startTestApp } from '../helpers/app.ts'
import { CARDS } from '../helpers/payments.ts'
import { pay, reconcile, session, type World } from './_catalog.ts'
import { startReceiver } from './_receiver.ts'
import { assertEnvelope, newActor, rawRequest, signed, type RawResponse } from './_support.ts'

/** A clock that stands still until moved, so token buckets refill only when the test says. */
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

function isRateLimited(res: RawResponse): boolean {
  if (res.status !== 429) return false
  assertEnvelope(res, 'rate limited')
  assert.equal((res.json as { code: string }).code, 'SVC-GW-1004')
  assert.match(String(res.headers['retry-after']), /^[1-9]\d*$/)
  return true
}

/** A Luhn-valid 16-digit number on the given prefix. */
function luhn(prefix: string): string {
  let sum = 0
  for (let i = 0; i < prefix.length; i++) {
    let d = Number(prefix[prefix.length - 1 - i])
    if (i % 2 === 0) {
      d *= 2
      if (d > 9) d -= 9
    }
    sum += d
  }
  return prefix + String((10 - (sum % 10)) % 10)
}

test('rate limits: per key and per IP, one burst does not slow anyone else', async (t) => {
  const clock = new FrozenClock()
  const h = await startTestApp(t, {
    clock,
    env: { KURUS_RATE_LIMIT_RPS: '2', KURUS_RATE_LIMIT_BURST: '6' },
  })
  const a = await newActor(h, { name: 'Bursty' })
  const b = await newActor(h, { name: 'Calm' })
  const c = await newActor(h, { name: 'Checkout owner' })
  const s = await session(c, 5_000)

  await t.test('per API key', async () => {
    const burst: RawResponse[] = []
    for (let i = 0; i < 10; i++)
      burst.push(await signed(h, a, { method: 'GET', path: '/v1/auth/whoami' }))
    const limited = burst.filter(isRateLimited).length
    assert.ok(limited >= 4, `${limited} of 10 limited with a burst of 6 and a frozen clock`)
    assert.equal(burst.filter((r) => r.status === 200).length, 10 - limited)
    // The other tenant is untouched by A's burst: its whole budget is there.
    for (let i = 0; i < 6; i++) {
      const res = await signed(h, b, { method: 'GET', path: '/v1/auth/whoami' })
      assert.equal(res.status, 200, `B's request ${i + 1}: ${res.text}`)
    }
    // Time refills A's bucket.
    clock.advance(10_000)
    assert.equal((await signed(h, a, { method: 'GET', path: '/v1/auth/whoami' })).status, 200)
  })

  await t.test('per client IP on the public endpoints and hosted pages', async () => {
    const from = (ip: string, path = `/v1/public/sessions/${s.sessionId}`) =>
      rawRequest(h, { method: 'GET', path, localAddress: ip })
    const burst: RawResponse[] = []
    for (let i = 0; i < 10; i++) burst.push(await from('127.0.0.2'))
    assert.ok(burst.filter(isRateLimited).length >= 4)
    // The hosted page shares that IP's budget.
    assert.equal((await from('127.0.0.2', `/s/${s.sessionId}`)).status, 429)
    // Another client is served, and the merchants' signed API has budgets of its own.
    for (let i = 0; i < 5; i++) assert.equal((await from('127.0.0.3')).status, 200)
    assert.equal((await signed(h, c, { method: 'GET', path: '/v1/auth/whoami' })).status, 200)
    // Dashboard logins are limited per IP too (password guessing).
    const guesses: RawResponse[] = []
    for (let i = 0; i < 10; i++) {
      guesses.push(
        await rawRequest(h, {
          method: 'POST',
          path: '/v1/dashboard/login',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ email: a.email, password: `guess-${i}` }),
          localAddress: '127.0.0.4',
        }),
      )
    }
    assert.ok(guesses.filter(isRateLimited).length >= 4)
    assert.ok(guesses.every((g) => g.status === 401 || g.status === 429))
  })
})

test('card testing: many cards from one checkout session are blocked with a clear error', async (t) => {
  // Declines need a bank that declines: the sandbox bank, which only demo has.
  const h = await startTestApp(t, { freshDatabase: true })
  const m = await newActor(h, { name: 'Demo Shop' })
  const year = h.clock.now().getUTCFullYear() + 2
  const attempt = (sessionId: string, number: string, ip: string) =>
    rawRequest(h, {
      method: 'POST',
      path: `/v1/public/sessions/${sessionId}/pay`,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        card: { number, expMonth: 12, expYear: year, cvc: '123', holderName: 'Kart Deneyen' },
      }),
      localAddress: ip,
    })

  await t.test('per session: after 5 declines the session takes no more cards', async () => {
    const s = await session(m, 5_000)
    for (let i = 0; i < 5; i++) {
      const res = await attempt(s.sessionId, CARDS.declined, '127.0.0.5')
      assert.equal(res.status, 402, res.text)
    }
    const blocked = await attempt(s.sessionId, CARDS.frictionless, '127.0.0.5')
    assert.equal(blocked.status, 429, blocked.text)
    assertEnvelope(blocked, 'blocked session')
    assert.match((blocked.json as { message: string }).message, /too many failed attempts/)
  })
})

test('card testing: many cards from one IP (live) are blocked with a clear error', async (t) => {
  const h = await startTestApp(t, { env: { KURUS_ENV: 'live' }, freshDatabase: true })
  const m = await newActor(h, { name: 'Live Shop' })
  const year = h.clock.now().getUTCFullYear() + 2
  const attempt = (sessionId: string, number: string, ip: string) =>
    rawRequest(h, {
      method: 'POST',
      path: `/v1/public/sessions/${sessionId}/pay`,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        card: { number, expMonth: 12, expYear: year, cvc: '123', holderName: 'Kart Deneyen' },
      }),
      localAddress: ip,
    })

  await t.test(
    'per IP: the 21st card in 10 minutes is refused (live), other IPs are not',
    async () => {
      const statuses: number[] = []
      for (let i = 0; i < 21; i++) {
        const s = await session(m, 1_000 + i)
        const res = await attempt(
          s.sessionId,
          luhn(`41556501${String(1_000_000 + i).padStart(7, '0')}`),
          '127.0.0.6',
        )
        statuses.push(res.status)
        if (i === 20) {
          assert.equal(res.status, 429, res.text)
          assertEnvelope(res, 'card testing')
          assert.match((res.json as { message: string }).message, /too many card attempts/)
          assert.equal(res.headers['retry-after'], '600')
        }
      }
      // Live has no sandbox bank and this merchant no bank POS: every attempt the guard lets
      // through reaches the charge and is 402 SVC-PAY-3504; only the guard answers 429.
      assert.ok(
        statuses.slice(0, 20).every((x) => x === 402),
        statuses.join(),
      )
      const s = await session(m, 2_000)
      const elsewhere = await attempt(s.sessionId, luhn('415565019999999'), '127.0.0.7')
      assert.equal(elsewhere.status, 402, elsewhere.text)
      // The window passes: the same IP may pay again.
      h.clock.advance(11 * 60_000)
      const later = await session(m, 3_000)
      assert.equal(
        (await attempt(later.sessionId, luhn('415565018888888'), '127.0.0.6')).status,
        402,
      )
    },
  )
})

test('webhook destinations: private, link-local and metadata addresses are refused in live', async (t) => {
  const h = await startTestApp(t, { env: { KURUS_ENV: 'live' }, freshDatabase: true })
  const m = await newActor(h, { name: 'Live Hooks' })
  const refused = [
    'http://127.0.0.1/hooks',
    'http://localhost:8080/hooks',
    'http://10.1.2.3/hooks',
    'http://172.16.5.4/hooks',
    'http://192.168.1.10/hooks',
    'http://100.64.0.1/hooks',
    'http://169.254.169.254/latest/meta-data/',
    'http://[fd00:ec2::254]/latest/meta-data/',
    'http://[::1]/hooks',
    'http://[fe80::1]/hooks',
    'http://[::ffff:169.254.169.254]/',
    'http://[::ffff:7f00:1]/',
    'http://0.0.0.0/hooks',
    'http://2130706433/hooks',
    'http://0x7f.0.0.1/hooks',
    'http://017700000001/hooks',
    'http://metadata.google.internal/computeMetadata/v1/',
    'ftp://example.com/hooks',
    'file:///etc/passwd',
  ]
  for (const url of refused) {
    const res = await m.dash('POST', `/v1/stores/${m.storeId}/webhooks`, { body: { url } })
    assert.equal(res.status, 400, `${url}: ${res.status} ${res.text}`)
    assertEnvelope(res, url)
  }
  const list = await m.dash('GET', `/v1/stores/${m.storeId}/webhooks`)
  assert.deepEqual((list.json as { items: unknown[] }).items, [])
})

test('a session callbackUrl on a metadata address is never called (demo too)', async (t) => {
  const h = await startTestApp(t)
  const receiver = await startReceiver(t)
  const w: World = { h, receiverUrl: receiver.url }
  const m = await newActor(h)
  const { res } = await pay(w, m, {
    session: { callbackUrl: 'http://169.254.169.254/latest/meta-data/iam/security-credentials/' },
  })
  assert.equal(res.status, 201)
  await reconcile(m)
  const deliveries = await m.dash('GET', `/v1/stores/${m.storeId}/webhooks/deliveries`)
  const items = (
    deliveries.json as {
      items: {
        url: string
        status: string
        lastStatusCode: number | null
        lastError: string | null
      }[]
    }
  ).items
  const toMetadata = items.filter((d) => d.url.includes('169.254.169.254'))
  assert.ok(toMetadata.length >= 1, JSON.stringify(items))
  for (const d of toMetadata) {
    assert.notEqual(d.status, 'delivered')
    assert.equal(d.lastStatusCode, null)
    assert.match(d.lastError ?? '', /reserved|not allowed|refused/i)
  }
})
