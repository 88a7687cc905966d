// Goal: two-factor recovery codes (issue 36; CONTRACT § "Dashboard sign-in everywhere": "Ten
// single-use recovery codes, shown once"). Enrolment makes ten, the page shows them once; the
// database keeps hashes only; each code answers the challenge once, at the web's code page and
// at the dashboard API's `POST /v1/dashboard/login/two-factor` alike; a wrong one counts
// towards the per-user lockout; a new set voids the old one; turning two-factor off voids them;
// every step leaves its audit entry.
// Method: the real app over HTTP (pages and dashboard API); codes read from the page the way a
// person reads them; the audit_log and recovery-code tables read back for the audit and the
// hashing.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { startTestApp, type TestApp } from '../helpers/app.ts'
import { dashboardFetch, login } from '../webhooks/_support.ts'
import {
  WebClient,
  newDashboardMerchant,
  signedIn,
  textOf,
  totpCode,
  type DashboardMerchant,
} from './_web.ts'

function codesOf(html: string): string[] {
  const list = /id="recovery-codes"[^>]*>([\s\S]*?)<\/ol>/.exec(html)?.[1] ?? ''
  return [...list.matchAll(/<code>([^<]+)<\/code>/g)].map((m) => m[1] ?? '')
}

/** Enrols on the web and returns the secret and the ten codes the page shows. */
async function enrol(h: TestApp, web: WebClient) {
  const page = await web.get('/dashboard/settings/two-factor')
  const secret = textOf(page.text, 'totp-secret') ?? ''
  const ok = await web.submit(
    '/dashboard/settings/two-factor/enrol',
    { code: totpCode(h, secret) },
    page,
  )
  assert.equal(ok.status, 303, ok.text.slice(0, 300))
  assert.equal(ok.location, '/dashboard/settings/two-factor')
  const shown = await web.get('/dashboard/settings/two-factor')
  const codes = codesOf(shown.text)
  h.clock.advance(30_000)
  return { secret, codes, shown }
}

async function auditActions(h: TestApp, m: DashboardMerchant) {
  const rows = await h.deps.db
    .selectFrom('audit_log')
    .select(['action', 'details'])
    .where('merchant_id', '=', m.merchantId)
    .orderBy('at')
    .execute()
  return rows.map((r) => ({
    action: r.action,
    details: (typeof r.details === 'string' ? JSON.parse(r.details) : r.details) as Record<
      string,
      unknown
    >,
  }))
}

async function webChallenge(h: TestApp, m: DashboardMerchant, code: string) {
  const web = new WebClient(h.url)
  const password = await web.signIn(m.email, m.password)
  assert.equal(password.location, '/dashboard/login/two-factor')
  const answer = await web.submit(
    '/dashboard/login/two-factor',
    { code },
    '/dashboard/login/two-factor',
  )
  return { web, answer }
}

async function apiChallenge(h: TestApp, m: DashboardMerchant, code: string) {
  const first = await login(h, m.email, m.password)
  const { challengeToken } = first.body as { challengeToken?: string }
  assert.equal(typeof challengeToken, 'string', JSON.stringify(first.body))
  return dashboardFetch<{ token?: string; code?: string }>(
    h,
    'POST',
    '/v1/dashboard/login/two-factor',
    { body: { challengeToken, code } },
  )
}

test('enrolment shows ten recovery codes once; only their hashes are kept', async (t) => {
  const h = await startTestApp(t)
  const m = await newDashboardMerchant(h)
  const web = await signedIn(h, m)
  const { codes } = await enrol(h, web)
  assert.equal(codes.length, 10)
  assert.equal(new Set(codes).size, 10)
  for (const code of codes) assert.match(code, /^[0-9a-z]{4}(-[0-9a-z]{4}){3}$/)

  // Shown once: the next visit shows how many are left, not the codes.
  const again = await web.get('/dashboard/settings/two-factor')
  assert.equal(codesOf(again.text).length, 0)
  assert.match(textOf(again.text, 'recovery-left') ?? '', /10/)
  for (const code of codes) assert.ok(!again.text.includes(code))

  const rows = await h.deps.db.selectFrom('dashboard_recovery_codes').selectAll().execute()
  assert.ok(rows.length >= 10)
  const stored = JSON.stringify(rows)
  const sessions = JSON.stringify(
    await h.deps.db.selectFrom('dashboard_sessions').selectAll().execute(),
  )
  for (const code of codes) {
    const bare = code.replace(/-/g, '')
    assert.ok(!stored.includes(bare) && !stored.includes(code), 'no code in clear at rest')
    assert.ok(!sessions.includes(bare) && !sessions.includes(code), 'nor in the session row')
  }
  assert.ok(
    (await auditActions(h, m)).some((e) => e.action === 'two_factor.enable'),
    'enrolment audited',
  )
})

test('a recovery code answers the web challenge once, and is audited as such', async (t) => {
  const h = await startTestApp(t)
  const m = await newDashboardMerchant(h)
  const { codes } = await enrol(h, await signedIn(h, m))
  const code = codes[0] ?? ''

  // Typed in capitals with spaces: still the same code.
  const typed = code.toUpperCase().replace(/-/g, ' ')
  const { web, answer } = await webChallenge(h, m, typed)
  assert.equal(answer.status, 303, answer.text.slice(0, 300))
  assert.equal(answer.location, '/dashboard')
  assert.equal((await web.get('/dashboard/payments')).status, 200)

  const second = await webChallenge(h, m, code)
  assert.equal(second.answer.status, 400, 'a spent code works no more')
  // Through the other door too.
  assert.equal((await apiChallenge(h, m, code)).status, 401)

  const page = await web.get('/dashboard/settings/two-factor')
  assert.match(textOf(page.text, 'recovery-left') ?? '', /9/)
  const signIns = (await auditActions(h, m)).filter((e) => e.action === 'session.sign_in')
  assert.ok(signIns.some((e) => e.details.secondFactor === 'recovery_code'))
})

test('a recovery code answers the API challenge once; the web then refuses it', async (t) => {
  const h = await startTestApp(t)
  const m = await newDashboardMerchant(h)
  const { codes } = await enrol(h, await signedIn(h, m))
  const code = codes[3] ?? ''

  const right = await apiChallenge(h, m, code)
  assert.equal(right.status, 200, JSON.stringify(right.body))
  const token = right.body.token ?? ''
  assert.equal((await dashboardFetch(h, 'GET', '/v1/dashboard/me', { token })).status, 200)

  assert.equal((await apiChallenge(h, m, code)).status, 401, 'spent')
  assert.equal((await webChallenge(h, m, code)).answer.status, 400, 'spent for the web too')
  const signIns = (await auditActions(h, m)).filter((e) => e.action === 'session.sign_in')
  assert.ok(
    signIns.some(
      (e) => e.details.secondFactor === 'recovery_code' && e.details.door === 'dashboard_api',
    ),
  )
})

test('wrong recovery codes count towards the per-user lockout', async (t) => {
  const h = await startTestApp(t)
  const m = await newDashboardMerchant(h)
  const { codes } = await enrol(h, await signedIn(h, m))
  for (let i = 0; i < 5; i++) {
    const res = await apiChallenge(h, m, 'zzzz-zzzz-zzzz-zzzz')
    assert.equal(res.status, 401)
  }
  // Locked: even a right recovery code is refused now, through either door.
  assert.equal((await apiChallenge(h, m, codes[0] ?? '')).status, 401)
  assert.equal((await webChallenge(h, m, codes[1] ?? '')).answer.status, 400)
})

test('new recovery codes void the old set; turning two-factor off voids them all', async (t) => {
  const h = await startTestApp(t)
  const m = await newDashboardMerchant(h)
  const web = await signedIn(h, m)
  const { secret, codes: old } = await enrol(h, web)

  // A wrong app code makes nothing.
  const refused = await web.submit(
    '/dashboard/settings/two-factor/recovery-codes',
    { code: '000000' },
    '/dashboard/settings/two-factor',
  )
  assert.equal(refused.status, 400)
  const made = await web.submit(
    '/dashboard/settings/two-factor/recovery-codes',
    { code: totpCode(h, secret) },
    '/dashboard/settings/two-factor',
  )
  assert.equal(made.status, 303, made.text.slice(0, 300))
  const fresh = codesOf((await web.get('/dashboard/settings/two-factor')).text)
  assert.equal(fresh.length, 10)
  assert.ok(fresh.every((code) => !old.includes(code)))
  h.clock.advance(30_000)

  assert.equal((await apiChallenge(h, m, old[0] ?? '')).status, 401, 'the old set is void')
  assert.equal((await webChallenge(h, m, old[1] ?? '')).answer.status, 400)
  const ok = await apiChallenge(h, m, fresh[0] ?? '')
  assert.equal(ok.status, 200, JSON.stringify(ok.body))
  assert.ok(
    (await auditActions(h, m)).some((e) => e.action === 'two_factor.recovery_codes_regenerate'),
  )

  const off = await web.submit(
    '/dashboard/settings/two-factor/disable',
    { code: totpCode(h, secret) },
    '/dashboard/settings/two-factor',
  )
  assert.equal(off.status, 303, off.text.slice(0, 300))
  const user = await h.deps.db
    .selectFrom('dashboard_users')
    .select('id')
    .where('email', '=', m.email)
    .executeTakeFirstOrThrow()
  const left = await h.deps.db
    .selectFrom('dashboard_recovery_codes')
    .selectAll()
    .where('user_id', '=', user.id)
    .execute()
  assert.equal(left.length, 0)
  assert.ok((await auditActions(h, m)).some((e) => e.action === 'two_factor.disable'))
})
