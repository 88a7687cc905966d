// Goal: the dashboard API's login applies the web's sign-in policy (issue 36, finding 1;
// CONTRACT § "Dashboard sign-in everywhere"): a user with two-factor gets a challenge and no
// token, and only the challenge plus a right code gives a token; no token ever mints an API key
// without the second factor; tokens end after 30 idle minutes and at web sign-out (removal:
// test/dashboard/web-roles.test.ts); an owner or admin the merchant requires to use two-factor,
// who has none, gets no token.
// Method: the real app over HTTP; TOTP enrolled through the web pages, codes computed from the
// secret the page shows at the app's clock; the test clock for idleness.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { startTestApp, type TestApp } from '../helpers/app.ts'
import { dashboardFetch, login, MINUTE } from '../webhooks/_support.ts'
import {
  WebClient,
  newDashboardMerchant,
  signedIn,
  textOf,
  totpCode,
  type DashboardMerchant,
} from './_web.ts'

async function enrol(h: TestApp, web: WebClient): Promise<string> {
  const page = await web.get('/dashboard/settings/two-factor')
  const secret = textOf(page.text, 'totp-secret') ?? ''
  const ok = await web.submit(
    '/dashboard/settings/two-factor/enrol',
    { code: totpCode(h, secret) },
    page,
  )
  assert.equal(ok.status, 303, ok.text.slice(0, 300))
  // The enrolment's code is spent: later codes come from later steps.
  h.clock.advance(30_000)
  return secret
}

interface LoginAnswer {
  token?: string
  expiresAt?: string
  twoFactorRequired?: boolean
  challengeToken?: string
  code?: string
}

async function twoFactor(h: TestApp, challengeToken: string | undefined, code: string) {
  return dashboardFetch<LoginAnswer>(h, 'POST', '/v1/dashboard/login/two-factor', {
    body: { challengeToken, code },
  })
}

async function mintKey(h: TestApp, m: DashboardMerchant, token: string | undefined) {
  return dashboardFetch<{ secretKey?: string; code?: string }>(
    h,
    'POST',
    `/v1/stores/${m.storeId}/api-keys`,
    { ...(token ? { token } : {}), body: {} },
  )
}

test('a user with two-factor gets a challenge, not a token; the code gives the token, once', async (t) => {
  const h = await startTestApp(t)
  const m = await newDashboardMerchant(h)
  const web = await signedIn(h, m)
  const secret = await enrol(h, web)

  const first = await login(h, m.email, m.password)
  assert.equal(first.status, 200, JSON.stringify(first.body))
  const answer = first.body as LoginAnswer
  assert.equal(answer.twoFactorRequired, true)
  assert.equal(typeof answer.challengeToken, 'string')
  assert.equal(answer.token, undefined, 'no token before the second factor')
  assert.ok(!JSON.stringify(answer).includes('eyJ'), 'nothing token-like in the answer')

  // The challenge is no credential: it mints no key, reads nothing.
  const challenge = answer.challengeToken
  assert.equal((await mintKey(h, m, challenge)).status, 401)
  const me = await dashboardFetch(h, 'GET', '/v1/dashboard/me', { token: challenge ?? '' })
  assert.equal(me.status, 401)

  const wrong = await twoFactor(h, challenge, '000000')
  assert.equal(wrong.status, 401)
  assert.equal(wrong.body.code, 'SVC-GW-1003')
  assert.equal(wrong.body.token, undefined)

  const right = await twoFactor(h, challenge, totpCode(h, secret))
  assert.equal(right.status, 200, JSON.stringify(right.body))
  assert.match(right.body.token ?? '', /^[\w-]+\.[\w-]+\.[\w-]+$/)
  const minted = await mintKey(h, m, right.body.token)
  assert.equal(minted.status, 201)

  // A challenge is good once, even with another right code.
  h.clock.advance(30_000)
  const again = await twoFactor(h, challenge, totpCode(h, secret))
  assert.equal(again.status, 401)
  // A made-up challenge is refused the same way.
  assert.equal((await twoFactor(h, 'x'.repeat(43), totpCode(h, secret))).status, 401)
})

test('five wrong codes end the challenge: the right code after them gives nothing', async (t) => {
  const h = await startTestApp(t)
  const m = await newDashboardMerchant(h)
  const secret = await enrol(h, await signedIn(h, m))
  const { challengeToken } = (await login(h, m.email, m.password)).body as LoginAnswer
  for (let i = 0; i < 5; i++)
    assert.equal((await twoFactor(h, challengeToken, '111111')).status, 401)
  const late = await twoFactor(h, challengeToken, totpCode(h, secret))
  assert.equal(late.status, 401)
  assert.equal(late.body.token, undefined)
})

test('a challenge lasts five minutes', async (t) => {
  const h = await startTestApp(t)
  const m = await newDashboardMerchant(h)
  const secret = await enrol(h, await signedIn(h, m))
  const { challengeToken } = (await login(h, m.email, m.password)).body as LoginAnswer
  h.clock.advance(5 * MINUTE + 1000)
  assert.equal((await twoFactor(h, challengeToken, totpCode(h, secret))).status, 401)
})

test('a token ends after 30 idle minutes, and not while in use', async (t) => {
  const h = await startTestApp(t)
  const m = await newDashboardMerchant(h)
  const { token } = (await login(h, m.email, m.password)).body as LoginAnswer
  const me = () => dashboardFetch(h, 'GET', '/v1/dashboard/me', { token: token ?? '' })
  for (let i = 0; i < 2; i++) {
    h.clock.advance(25 * MINUTE)
    assert.equal((await me()).status, 200, `in use after ${(i + 1) * 25} minutes`)
  }
  h.clock.advance(31 * MINUTE)
  assert.equal((await me()).status, 401)
  // Idle once, ended for good: using it again does not revive it.
  assert.equal((await me()).status, 401)
})

test('signing out of the web ends the user’s tokens', async (t) => {
  const h = await startTestApp(t)
  const m = await newDashboardMerchant(h)
  const { token } = (await login(h, m.email, m.password)).body as LoginAnswer
  assert.equal((await mintKey(h, m, token)).status, 201)
  const web = await signedIn(h, m)
  await web.submit('/dashboard/logout', {}, '/dashboard')
  assert.equal((await mintKey(h, m, token)).status, 401)
})

test('an owner the merchant requires to use two-factor, without it, gets no token', async (t) => {
  const h = await startTestApp(t)
  const m = await newDashboardMerchant(h)
  const owner = await signedIn(h, m)
  await enrol(h, owner)
  const required = await owner.submit(
    '/dashboard/settings/two-factor/required',
    { required: 'yes' },
    '/dashboard/settings/two-factor',
  )
  assert.equal(required.status, 303)
  const email = `admin-${crypto.randomUUID()}@example.com`
  await owner.submit(
    '/dashboard/settings/team/invite',
    { email, role: 'admin' },
    '/dashboard/settings',
  )
  const { listMailbox } = await import('../../src/modules/mail/index.ts')
  const [mail] = await listMailbox(h.deps, { to: email, limit: 1 })
  const path = /\/dashboard\/invite\/[\w-]+/.exec(mail?.text ?? '')?.[0] ?? ''
  const password = 'a long enough password'
  await new WebClient(h.url).submit(path, { password, passwordConfirm: password }, path)

  const res = await login(h, email, password)
  assert.equal(res.status, 403, JSON.stringify(res.body))
  assert.equal(res.body.token, undefined)
  assert.match(res.body.message ?? '', /two-factor/)
})

test('signing out through the API ends that token only, and is audited', async (t) => {
  const h = await startTestApp(t)
  const m = await newDashboardMerchant(h)
  const first = ((await login(h, m.email, m.password)).body as LoginAnswer).token ?? ''
  const second = ((await login(h, m.email, m.password)).body as LoginAnswer).token ?? ''
  const web = await signedIn(h, m)
  const out = await dashboardFetch(h, 'POST', '/v1/dashboard/logout', { token: first })
  assert.equal(out.status, 204, JSON.stringify(out.body))
  assert.equal((await mintKey(h, m, first)).status, 401, 'the signed-out token ends at once')
  assert.equal((await dashboardFetch(h, 'GET', '/v1/dashboard/me', { token: first })).status, 401)
  // The same user's other token and web session go on.
  assert.equal((await dashboardFetch(h, 'GET', '/v1/dashboard/me', { token: second })).status, 200)
  assert.equal((await web.get('/dashboard/payments')).status, 200)
  // Signing out twice is refused like any ended token.
  assert.equal(
    (await dashboardFetch(h, 'POST', '/v1/dashboard/logout', { token: first })).status,
    401,
  )
  const rows = await h.deps.db
    .selectFrom('audit_log')
    .select(['action', 'details'])
    .where('merchant_id', '=', m.merchantId)
    .where('action', '=', 'session.sign_out')
    .execute()
  assert.equal(rows.length, 1)
})
