// Goal: TOTP two-factor sign-in (RFC 6238). Enrolment shows a QR code and needs a right code;
// once on, a password alone reaches only the code page; the right code gives a NEW session id;
// a code is good once; five wrong codes end the attempt; a merchant can require two-factor of
// owners and admins, who are then held at enrolment until they set it up. Method: the real
// app over HTTP; codes computed with otpauth from the secret the page shows, at the app's
// clock.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { listMailbox } from '../../src/modules/mail/index.ts'
import { startTestApp, type TestApp } from '../helpers/app.ts'
import {
  WebClient,
  alertOf,
  newDashboardMerchant,
  signedIn,
  tableText,
  textOf,
  totpCode,
} from './_web.ts'

async function enrol(h: TestApp, web: WebClient): Promise<string> {
  const page = await web.get('/dashboard/settings/two-factor')
  assert.equal(page.status, 200)
  assert.match(page.text, /<img src="data:image\/svg\+xml;base64,[^"]+" alt="[^"]+"/)
  const secret = textOf(page.text, 'totp-secret')
  assert.ok(secret && /^[A-Z2-7]{32}$/.test(secret), `a base32 secret: ${secret}`)
  const wrong = await web.submit('/dashboard/settings/two-factor/enrol', { code: '000000' }, page)
  assert.equal(wrong.status, 400)
  assert.ok(alertOf(wrong.text))
  const ok = await web.submit(
    '/dashboard/settings/two-factor/enrol',
    { code: totpCode(h, secret) },
    page,
  )
  assert.equal(ok.status, 303, ok.text.slice(0, 300))
  return secret
}

test('enrolment, then signing in asks for the code and swaps the session id', async (t) => {
  const h = await startTestApp(t)
  const m = await newDashboardMerchant(h)
  const web = await signedIn(h, m)
  const secret = await enrol(h, web)
  const settings = await web.get('/dashboard/settings/two-factor')
  assert.match(settings.text, /Açık/)
  await web.submit('/dashboard/logout', {}, '/dashboard')

  const next = new WebClient(h.url)
  const password = await next.signIn(m.email, m.password)
  assert.equal(password.status, 303)
  assert.equal(password.location, '/dashboard/login/two-factor')
  const halfway = next.cookies.get('kurus_dash')
  // Only the code page works with a password alone.
  assert.equal((await next.get('/dashboard/payments')).location, '/dashboard/login/two-factor')
  const codePage = await next.get('/dashboard/login/two-factor')
  assert.match(codePage.text, /autocomplete="one-time-code"/)
  const wrong = await next.submit('/dashboard/login/two-factor', { code: '123456' }, codePage)
  assert.equal(wrong.status, 400)
  assert.match(alertOf(wrong.text) ?? '', /Kod geçersiz/)

  h.clock.advance(30_000) // a fresh step: the enrolment's code is spent
  const right = await next.submit(
    '/dashboard/login/two-factor',
    { code: totpCode(h, secret) },
    codePage,
  )
  assert.equal(right.status, 303)
  assert.equal(right.location, '/dashboard')
  const full = next.cookies.get('kurus_dash')
  assert.notEqual(full, halfway, 'a new session id after the second factor')
  assert.equal((await next.get('/dashboard')).status, 200)
  // The half-signed-in id is over.
  const old = new WebClient(h.url)
  old.cookies.set('kurus_dash', halfway ?? '')
  assert.equal((await old.get('/dashboard')).location, '/dashboard/login')

  // The same code again (another sign-in within the same 30 s) is refused: a code works once.
  const replay = new WebClient(h.url)
  await replay.signIn(m.email, m.password)
  const replayed = await replay.submit(
    '/dashboard/login/two-factor',
    { code: totpCode(h, secret) },
    '/dashboard/login/two-factor',
  )
  assert.equal(replayed.status, 400)

  const log = tableText((await next.get('/dashboard/settings/audit-log')).text, 'audit-table')
  assert.ok(log.includes('İki adımlı doğrulama açıldı'))
})

test('five wrong codes end the sign-in attempt', async (t) => {
  const h = await startTestApp(t)
  const m = await newDashboardMerchant(h)
  const first = await signedIn(h, m)
  const secret = await enrol(h, first)
  const web = new WebClient(h.url)
  await web.signIn(m.email, m.password)
  const halfway = web.cookies.get('kurus_dash')
  for (let i = 0; i < 4; i++) {
    const res = await web.submit(
      '/dashboard/login/two-factor',
      { code: '000000' },
      '/dashboard/login/two-factor',
    )
    assert.equal(res.status, 400)
  }
  const fifth = await web.submit(
    '/dashboard/login/two-factor',
    { code: '000000' },
    '/dashboard/login/two-factor',
  )
  assert.equal(fifth.status, 303)
  assert.equal(fifth.location, '/dashboard/login')
  // Ended on the server: the half-signed-in cookie, kept and sent again, is no session.
  assert.equal(web.cookies.get('kurus_dash'), undefined)
  web.cookies.set('kurus_dash', halfway ?? '')
  assert.equal((await web.get('/dashboard/login/two-factor')).location, '/dashboard/login')
  // Nor does the right code, with a valid CSRF token, bring it back.
  h.clock.advance(30_000)
  const late = await web.submit(
    '/dashboard/login/two-factor',
    { code: totpCode(h, secret) },
    '/dashboard/login',
  )
  assert.equal(late.status, 303)
  assert.equal(late.location, '/dashboard/login')
  assert.equal((await web.get('/dashboard')).location, '/dashboard/login')
})

test('required for owners and admins: an admin without it is held at enrolment, a viewer is not', async (t) => {
  const h = await startTestApp(t)
  const m = await newDashboardMerchant(h)
  const owner = await signedIn(h, m)
  // Requiring it before using it oneself is refused (it would lock the owner out).
  const early = await owner.submit(
    '/dashboard/settings/two-factor/required',
    { required: 'yes' },
    '/dashboard/settings/two-factor',
  )
  assert.equal(early.status, 409)
  await enrol(h, owner)

  const invite = async (role: string) => {
    const email = `${role}-${crypto.randomUUID()}@example.com`
    await owner.submit('/dashboard/settings/team/invite', { email, role }, '/dashboard/settings')
    const [mail] = await listMailbox(h.deps, { to: email, limit: 1 })
    const path = /\/dashboard\/invite\/[\w-]+/.exec(mail?.text ?? '')?.[0] ?? ''
    const guest = new WebClient(h.url)
    const password = 'a long enough password'
    await guest.submit(path, { password, passwordConfirm: password }, path)
    return { email, password }
  }
  const admin = await invite('admin')
  const viewer = await invite('viewer')
  const required = await owner.submit(
    '/dashboard/settings/two-factor/required',
    { required: 'yes' },
    '/dashboard/settings/two-factor',
  )
  assert.equal(required.status, 303)

  const adminWeb = new WebClient(h.url)
  const signIn = await adminWeb.signIn(admin.email, admin.password)
  assert.equal(signIn.location, '/dashboard/settings/two-factor')
  assert.equal(
    (await adminWeb.get('/dashboard/payments')).location,
    '/dashboard/settings/two-factor',
  )
  const held = await adminWeb.get('/dashboard/settings/two-factor')
  assert.equal(held.status, 200)
  assert.doesNotMatch(held.text, /<nav[\s>]/, 'no navigation while held')
  const secret = textOf(held.text, 'totp-secret') ?? ''
  const done = await adminWeb.submit(
    '/dashboard/settings/two-factor/enrol',
    { code: totpCode(h, secret) },
    held,
  )
  assert.equal(done.status, 303)
  // To the two-factor page, which shows the new recovery codes once (recovery-codes.test.ts).
  assert.equal(done.location, '/dashboard/settings/two-factor')
  assert.equal((await adminWeb.get('/dashboard/payments')).status, 200)

  const viewerWeb = await signedIn(h, viewer)
  assert.equal((await viewerWeb.get('/dashboard/payments')).status, 200)
})
