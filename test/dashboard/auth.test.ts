// Goal: dashboard login and its JWT guard: one 401 for a wrong email or password, expiry by
// the clock, API keys refused on dashboard routes and dashboard tokens on signed routes,
// another merchant's store a 404. Method: the real app over HTTP; the test clock for expiry.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { SignJWT } from 'jose'
import { startTestApp } from '../helpers/app.ts'
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

  // Expiry follows the service clock.
  h.clock.advance(59 * MINUTE)
  assert.equal((await dashboardFetch(h, 'GET', path, { token })).status, 200)
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
