// Goal: a dashboard member's own account (issue 36; issue 41 "Accounts"; CONTRACT § "Dashboard
// sign-in everywhere"): the owner's real email at creation (operator `ownerEmail`); a password
// change that ends every other session and every API token; a reset by an emailed single-use
// link valid 30 minutes that answers the same for any email, is throttled, and does not skip
// two-factor; an email change confirmed from the new address while the old one stays the
// login until then. Each step leaves its audit entry.
// Method: the real app over HTTP (the web pages as a browser posts them, the dashboard API with
// its bearer token, the operator API); mails read from the demo mailbox as a person would
// open them; the test clock moved past the link's 30 minutes.
import assert from 'node:assert/strict'
import type { AddressInfo } from 'node:net'
import { test } from 'node:test'
import { SMTPServer } from 'smtp-server'
import { listMailbox } from '../../src/modules/mail/index.ts'
import { startTestApp, type TestApp } from '../helpers/app.ts'
import { dashboardFetch, login } from '../webhooks/_support.ts'
import {
  WebClient,
  alertOf,
  newDashboardMerchant,
  signedIn,
  textOf,
  totpCode,
  type DashboardMerchant,
} from './_web.ts'

/** The flash message a page shows (an error's alert or a notice's status). */
function flashOf(html: string): string | undefined {
  return /class="flash[^"]*" role="(?:alert|status)"[^>]*>\s*<p>([\s\S]*?)<\/p>/
    .exec(html)?.[1]
    ?.trim()
}

const NEW_PASSWORD = 'a-new-password-of-mine'

async function auditActions(h: TestApp, merchantId: string): Promise<string[]> {
  const rows = await h.deps.db
    .selectFrom('audit_log')
    .select('action')
    .where('merchant_id', '=', merchantId)
    .orderBy('at')
    .execute()
  return rows.map((r) => r.action)
}

async function apiToken(h: TestApp, email: string, password: string): Promise<string> {
  const res = await login(h, email, password)
  assert.equal(res.status, 200, JSON.stringify(res.body))
  return res.body.token
}

async function meStatus(h: TestApp, token: string): Promise<number> {
  return (await dashboardFetch(h, 'GET', '/v1/dashboard/me', { token })).status
}

/** The link of the newest mail to `to` whose text has `path`. */
async function linkIn(h: TestApp, to: string, path: string): Promise<string> {
  const [mail] = await listMailbox(h.deps, { to, limit: 1 })
  const match = new RegExp(`https?://[^\\s]+(${path}[A-Za-z0-9_-]+)`).exec(mail?.text ?? '')
  assert.ok(match?.[1], `a ${path} link in the mail to ${to}: ${mail?.text ?? '(none)'}`)
  return match[1]
}

async function mailCount(h: TestApp, to: string): Promise<number> {
  return (await listMailbox(h.deps, { to, limit: 500 })).length
}

async function ownerWithEmail(h: TestApp, name = 'Hesap Ltd') {
  const email = `owner-${crypto.randomUUID()}@example.com`
  const created = await h.operator<{
    merchantId: string
    dashboard: { email: string; password: string }
  }>('POST', '/operator/v1/merchants', { name, kycStatus: 'approved', ownerEmail: email })
  assert.equal(created.status, 201, JSON.stringify(created.body))
  return { merchantId: created.body.merchantId, ...created.body.dashboard }
}

async function forgot(h: TestApp, email: string) {
  const web = new WebClient(h.url)
  const res = await web.submit(
    '/dashboard/password/forgot',
    { email },
    '/dashboard/password/forgot',
  )
  return { status: res.status, alert: flashOf(res.text) }
}

test('operator: ownerEmail is the owner’s login; taken → 409, not an email → 400, absent → synthetic', async (t) => {
  const h = await startTestApp(t)
  const owner = await ownerWithEmail(h)
  assert.match(owner.email, /^owner-.*@example\.com$/)
  await signedIn(h, owner)

  const again = await h.operator('POST', '/operator/v1/merchants', {
    name: 'İkinci',
    ownerEmail: owner.email.toUpperCase(),
  })
  assert.equal(again.status, 409, JSON.stringify(again.body))
  const bad = await h.operator('POST', '/operator/v1/merchants', {
    name: 'Üçüncü',
    ownerEmail: 'not an email',
  })
  assert.equal(bad.status, 400, JSON.stringify(bad.body))
  const plain = await newDashboardMerchant(h, 'Dördüncü')
  assert.match(plain.email, /^mrc_.*@merchants\.kurus\.local$/)
})

test('password change: current password required; every other session and API token ends; audited', async (t) => {
  const h = await startTestApp(t)
  const m = await newDashboardMerchant(h)
  const here = await signedIn(h, m)
  const elsewhere = await signedIn(h, m)
  const token = await apiToken(h, m.email, m.password)
  assert.equal(await meStatus(h, token), 200)

  const wrong = await here.submit(
    '/dashboard/settings/account/password',
    { currentPassword: 'not-my-password', password: NEW_PASSWORD, passwordConfirm: NEW_PASSWORD },
    '/dashboard/settings/account',
  )
  assert.equal(wrong.status, 400)
  assert.match(alertOf(wrong.text) ?? '', /Mevcut şifre doğru değil/)
  const short = await here.submit(
    '/dashboard/settings/account/password',
    { currentPassword: m.password, password: 'short', passwordConfirm: 'short' },
    '/dashboard/settings/account',
  )
  assert.equal(short.status, 400)
  assert.match(alertOf(short.text) ?? '', /12/)
  assert.equal(await meStatus(h, token), 200, 'a refused change ends nothing')

  const ok = await here.submit(
    '/dashboard/settings/account/password',
    { currentPassword: m.password, password: NEW_PASSWORD, passwordConfirm: NEW_PASSWORD },
    '/dashboard/settings/account',
  )
  assert.equal(ok.status, 303, ok.text.slice(0, 400))
  assert.equal(ok.location, '/dashboard/settings/account')
  const after = await here.get('/dashboard/settings/account')
  assert.equal(after.status, 200, 'the session that changed it goes on')
  assert.match(flashOf(after.text) ?? '', /Şifreniz değişti/)

  const other = await elsewhere.get('/dashboard')
  assert.equal(other.status, 303)
  assert.match(other.location ?? '', /^\/dashboard\/login/)
  assert.equal(await meStatus(h, token), 401, 'the API token ended')
  assert.equal((await login(h, m.email, m.password)).status, 401, 'the old password is refused')
  const [told] = await listMailbox(h.deps, { to: m.email, limit: 1 })
  assert.match(told?.subject ?? '', /your password was changed/)
  await signedIn(h, { email: m.email, password: NEW_PASSWORD })
  assert.ok((await auditActions(h, m.merchantId)).includes('account.password_change'))
})

test('forgot password: the same answer for any email; mail only to an account; throttled', async (t) => {
  const h = await startTestApp(t)
  const m = await newDashboardMerchant(h)
  const unknown = `nobody-${crypto.randomUUID()}@example.com`
  const known = await forgot(h, m.email)
  const stranger = await forgot(h, unknown)
  assert.deepEqual(known, stranger)
  assert.equal(known.status, 200)
  assert.equal(await mailCount(h, unknown), 0)
  assert.equal(await mailCount(h, m.email), 1)
  await linkIn(h, m.email, '/dashboard/password/reset/')

  // Three mails per 15 minutes at most, and the fourth request still answers the same.
  await forgot(h, m.email)
  await forgot(h, m.email)
  assert.deepEqual(await forgot(h, m.email), known)
  assert.equal(await mailCount(h, m.email), 3)

  const bad = await forgot(h, 'not-an-email')
  assert.equal(bad.status, 400)
  assert.match(bad.alert ?? '', /E-posta/)
})

test('password reset: sets the password, ends every session and token, works once, 30 minutes', async (t) => {
  const h = await startTestApp(t)
  const m = await newDashboardMerchant(h)
  const web = await signedIn(h, m)
  const token = await apiToken(h, m.email, m.password)
  await forgot(h, m.email)
  const path = await linkIn(h, m.email, '/dashboard/password/reset/')

  const visitor = new WebClient(h.url)
  const form = await visitor.get(path)
  assert.equal(form.status, 200)
  const mismatch = await visitor.submit(
    path,
    { password: NEW_PASSWORD, passwordConfirm: 'something-else-entirely' },
    form,
  )
  assert.equal(mismatch.status, 400, 'a refused form leaves the link usable')
  const done = await visitor.submit(
    path,
    { password: NEW_PASSWORD, passwordConfirm: NEW_PASSWORD },
    path,
  )
  assert.equal(done.status, 303, done.text.slice(0, 400))
  assert.equal(done.location, '/dashboard/login')

  assert.match((await web.get('/dashboard')).location ?? '', /^\/dashboard\/login/)
  assert.equal(await meStatus(h, token), 401)
  assert.equal((await login(h, m.email, m.password)).status, 401)
  await signedIn(h, { email: m.email, password: NEW_PASSWORD })
  assert.ok((await auditActions(h, m.merchantId)).includes('account.password_reset'))

  // Single use: the form is gone and posting again changes nothing.
  const second = await visitor.get(path)
  assert.equal(second.status, 404)
  assert.ok(textOf(second.text, 'link-invalid'))
  const reuse = await visitor.submit(
    path,
    { password: 'yet-another-password', passwordConfirm: 'yet-another-password' },
    '/dashboard/password/forgot',
  )
  assert.equal(reuse.status, 404)
  await signedIn(h, { email: m.email, password: NEW_PASSWORD })

  // Expiry: a fresh link is refused after 30 minutes.
  await forgot(h, m.email)
  const late = await linkIn(h, m.email, '/dashboard/password/reset/')
  h.clock.advance(30 * 60_000 + 1_000)
  assert.equal((await visitor.get(late)).status, 404)
  const expired = await visitor.submit(
    late,
    { password: 'yet-another-password', passwordConfirm: 'yet-another-password' },
    '/dashboard/password/forgot',
  )
  assert.equal(expired.status, 404)
  assert.equal((await login(h, m.email, 'yet-another-password')).status, 401)
})

test('one reset link used twice at once sets one password', async (t) => {
  const h = await startTestApp(t)
  const m = await newDashboardMerchant(h)
  await forgot(h, m.email)
  const path = await linkIn(h, m.email, '/dashboard/password/reset/')
  const a = new WebClient(h.url)
  const b = new WebClient(h.url)
  const [pageA, pageB] = await Promise.all([a.get(path), b.get(path)])
  const [first, second] = await Promise.all([
    a.submit(
      path,
      { password: 'first-new-password', passwordConfirm: 'first-new-password' },
      pageA,
    ),
    b.submit(
      path,
      { password: 'second-new-password', passwordConfirm: 'second-new-password' },
      pageB,
    ),
  ])
  assert.deepEqual([first.status, second.status].sort(), [303, 404])
  const won = first.status === 303 ? 'first-new-password' : 'second-new-password'
  const lost = won === 'first-new-password' ? 'second-new-password' : 'first-new-password'
  await signedIn(h, { email: m.email, password: won })
  assert.equal((await login(h, m.email, lost)).status, 401)
  const resets = (await auditActions(h, m.merchantId)).filter((a) => a === 'account.password_reset')
  assert.equal(resets.length, 1, 'one audit entry for the one change')
})

test('password reset does not skip two-factor: signing in afterwards still asks for the code', async (t) => {
  const h = await startTestApp(t)
  const m: DashboardMerchant = await newDashboardMerchant(h)
  const web = await signedIn(h, m)
  const page = await web.get('/dashboard/settings/two-factor')
  const secret = textOf(page.text, 'totp-secret') ?? ''
  const enrolled = await web.submit(
    '/dashboard/settings/two-factor/enrol',
    { code: totpCode(h, secret) },
    page,
  )
  assert.equal(enrolled.status, 303)

  await forgot(h, m.email)
  const path = await linkIn(h, m.email, '/dashboard/password/reset/')
  const visitor = new WebClient(h.url)
  const done = await visitor.submit(
    path,
    { password: NEW_PASSWORD, passwordConfirm: NEW_PASSWORD },
    path,
  )
  assert.equal(done.status, 303)
  const again = await visitor.signIn(m.email, NEW_PASSWORD)
  assert.equal(again.location, '/dashboard/login/two-factor')
  assert.equal((await visitor.get('/dashboard')).location, '/dashboard/login/two-factor')
  const api = await login(h, m.email, NEW_PASSWORD)
  assert.equal((api.body as { twoFactorRequired?: boolean }).twoFactorRequired, true)
})

test('email change: current password, confirmed from the new address; old stays the login until then', async (t) => {
  const h = await startTestApp(t)
  const m = await ownerWithEmail(h)
  const web = await signedIn(h, m)
  const to = `moved-${crypto.randomUUID()}@example.com`

  const wrong = await web.submit(
    '/dashboard/settings/account/email',
    { email: to, currentPassword: 'not-my-password' },
    '/dashboard/settings/account',
  )
  assert.equal(wrong.status, 400)
  assert.equal(await mailCount(h, to), 0)
  const notEmail = await web.submit(
    '/dashboard/settings/account/email',
    { email: 'x@', currentPassword: m.password },
    '/dashboard/settings/account',
  )
  assert.equal(notEmail.status, 400)

  const asked = await web.submit(
    '/dashboard/settings/account/email',
    { email: to, currentPassword: m.password },
    '/dashboard/settings/account',
  )
  assert.equal(asked.status, 303, asked.text.slice(0, 400))
  const path = await linkIn(h, to, '/dashboard/account/email/')
  const [toldOld] = await listMailbox(h.deps, { to: m.email, limit: 1 })
  assert.match(toldOld?.text ?? '', new RegExp(to.replace(/[.]/g, '\\.')))
  assert.doesNotMatch(toldOld?.text ?? '', /\/dashboard\/account\/email\//)

  // Not confirmed yet: the old email signs in, the new one does not.
  assert.equal((await login(h, to, m.password)).status, 401)
  await signedIn(h, m)

  const visitor = new WebClient(h.url)
  const confirmPage = await visitor.get(path)
  assert.equal(confirmPage.status, 200)
  assert.match(confirmPage.text, new RegExp(to.replace(/[.]/g, '\\.')))
  const confirmed = await visitor.submit(path, {}, confirmPage)
  assert.equal(confirmed.status, 303, confirmed.text.slice(0, 400))
  assert.equal(confirmed.location, '/dashboard/login')

  await signedIn(h, { email: to, password: m.password })
  assert.equal((await login(h, m.email, m.password)).status, 401)
  const [changed] = await listMailbox(h.deps, { to: m.email, limit: 1 })
  assert.match(changed?.subject ?? '', /your email was changed/)
  assert.equal(textOf((await web.get('/dashboard/settings/account')).text, 'account-email'), to)

  // Single use.
  assert.equal((await visitor.get(path)).status, 404)
  assert.equal((await visitor.submit(path, {}, '/dashboard/password/forgot')).status, 404)
  const actions = await auditActions(h, m.merchantId)
  assert.ok(actions.includes('account.email_change_request'))
  assert.ok(actions.includes('account.email_change'))
})

test('email change to an address with an account: the same answer, a mail without a link', async (t) => {
  const h = await startTestApp(t)
  const a = await ownerWithEmail(h, 'Birinci')
  const b = await ownerWithEmail(h, 'İkinci')
  const web = await signedIn(h, a)
  const fresh = `fresh-${crypto.randomUUID()}@example.com`
  const answers = []
  for (const email of [fresh, b.email]) {
    const res = await web.submit(
      '/dashboard/settings/account/email',
      { email, currentPassword: a.password },
      '/dashboard/settings/account',
    )
    answers.push({ status: res.status, location: res.location })
  }
  assert.deepEqual(answers[1], answers[0])
  const [toTaken] = await listMailbox(h.deps, { to: b.email, limit: 1 })
  assert.match(toTaken?.text ?? '', /already has an account/)
  assert.doesNotMatch(toTaken?.text ?? '', /\/dashboard\/account\/email\//)
  await signedIn(h, a)
  await signedIn(h, b)
})

test('the account pages speak English too', async (t) => {
  const h = await startTestApp(t)
  const m = await newDashboardMerchant(h)
  const web = await signedIn(h, m)
  web.lang = 'en'
  const page = await web.get('/dashboard/settings/account')
  assert.match(page.text, /Change password/)
  const visitor = new WebClient(h.url)
  visitor.lang = 'en'
  const login = await visitor.get('/dashboard/login')
  assert.match(textOf(login.text, 'forgot-link') ?? '', /Forgot your password\?/)
  const res = await visitor.submit(
    '/dashboard/password/forgot',
    { email: m.email },
    '/dashboard/password/forgot',
  )
  assert.match(res.text, /If an account uses this address/)
})

test('over SMTP the forgot-password answer does not wait for the mail (its time tells nothing)', async (t) => {
  // An SMTP server that holds every message until the test has its answer: were the answer
  // waiting for the mail, it would never come.
  let release: () => void = () => undefined
  const held = new Promise<void>((resolve) => (release = resolve))
  let arrive: () => void = () => undefined
  const arrived = new Promise<void>((resolve) => (arrive = resolve))
  let deliver: () => void = () => undefined
  const delivered = new Promise<void>((resolve) => (deliver = resolve))
  const received: string[] = []
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      stream.resume()
      stream.on('end', () => {
        arrive()
        void held.then(() => {
          received.push(...session.envelope.rcptTo.map((r) => r.address))
          callback()
          deliver()
        })
      })
    },
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())))
  const { port } = server.server.address() as AddressInfo
  const h = await startTestApp(t, { env: { SMTP_URL: `smtp://127.0.0.1:${port}` } })
  const m = await newDashboardMerchant(h)

  const known = await forgot(h, m.email)
  const unknown = await forgot(h, `nobody-${crypto.randomUUID()}@example.com`)
  assert.deepEqual(known, unknown)
  assert.equal(known.status, 200)
  assert.deepEqual(received, [], 'answered while the mail was still held')
  await arrived
  const links = await h.deps.db
    .selectFrom('dashboard_account_links')
    .select('user_id')
    .where('purpose', '=', 'password_reset')
    .where('merchant_id', '=', m.merchantId)
    .execute()
  assert.equal(links.length, 1, 'the account got its link')
  release()
  await delivered
  assert.deepEqual(received, [m.email])
})
