// Goal: TOTP codes cannot be guessed without limit (issue 36, finding 3; CONTRACT § "Dashboard
// sign-in everywhere"): 5 wrong codes per user within 15 minutes lock that user's second factor
// for 15 minutes, whatever the session and the door: signing in again does not reset the
// count, a right code is refused while locked (web and dashboard API), and works after.
// Method: the real app over HTTP; codes from the enrolled secret at the app's clock; the test
// clock for the window and the lock.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { startTestApp, type TestApp } from '../helpers/app.ts'
import { dashboardFetch, login, MINUTE } from '../webhooks/_support.ts'
import { WebClient, newDashboardMerchant, signedIn, textOf, totpCode } from './_web.ts'

async function enrol(h: TestApp, web: WebClient): Promise<string> {
  const page = await web.get('/dashboard/settings/two-factor')
  const secret = textOf(page.text, 'totp-secret') ?? ''
  const ok = await web.submit(
    '/dashboard/settings/two-factor/enrol',
    { code: totpCode(h, secret) },
    page,
  )
  assert.equal(ok.status, 303)
  h.clock.advance(30_000)
  return secret
}

async function webCode(h: TestApp, m: { email: string; password: string }, code: string) {
  const web = new WebClient(h.url)
  const signIn = await web.signIn(m.email, m.password)
  assert.equal(signIn.location, '/dashboard/login/two-factor')
  return web.submit('/dashboard/login/two-factor', { code }, '/dashboard/login/two-factor')
}

async function apiCode(h: TestApp, m: { email: string; password: string }, code: string) {
  const { challengeToken } = (await login(h, m.email, m.password)).body as unknown as {
    challengeToken: string
  }
  return dashboardFetch<{ token?: string }>(h, 'POST', '/v1/dashboard/login/two-factor', {
    body: { challengeToken, code },
  })
}

test('5 wrong codes across sessions and doors lock the user’s second factor for 15 minutes', async (t) => {
  const h = await startTestApp(t)
  const m = await newDashboardMerchant(h)
  const secret = await enrol(h, await signedIn(h, m))

  // Wrong codes spread over fresh sign-ins and both doors: one count per user.
  for (let i = 0; i < 3; i++) assert.equal((await webCode(h, m, '000000')).status, 400)
  for (let i = 0; i < 2; i++) assert.equal((await apiCode(h, m, '000000')).status, 401)

  // Locked: the right code is refused through either door, in a new session.
  const web = await webCode(h, m, totpCode(h, secret))
  assert.equal(web.status, 400)
  h.clock.advance(30_000)
  const api = await apiCode(h, m, totpCode(h, secret))
  assert.equal(api.status, 401)
  assert.equal(api.body.token, undefined)

  // After 15 minutes the right code works again.
  h.clock.advance(15 * MINUTE)
  const later = await apiCode(h, m, totpCode(h, secret))
  assert.equal(later.status, 200)
  assert.ok(later.body.token)
})

test('wrong codes older than 15 minutes do not count, and a right code clears the count', async (t) => {
  const h = await startTestApp(t)
  const m = await newDashboardMerchant(h)
  const secret = await enrol(h, await signedIn(h, m))
  for (let i = 0; i < 4; i++) assert.equal((await apiCode(h, m, '000000')).status, 401)
  h.clock.advance(16 * MINUTE)
  for (let i = 0; i < 4; i++) assert.equal((await apiCode(h, m, '000000')).status, 401)
  assert.equal((await apiCode(h, m, totpCode(h, secret))).status, 200)
  h.clock.advance(30_000)
  for (let i = 0; i < 4; i++) assert.equal((await apiCode(h, m, '000000')).status, 401)
  assert.equal((await apiCode(h, m, totpCode(h, secret))).status, 200)
})
