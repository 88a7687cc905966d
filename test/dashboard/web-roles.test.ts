// Goal: authorization is the server's. A POST without its CSRF token (or with a wrong one, or
// one made for another session) is a 403 that changes nothing; each role may do what the
// contract's table says and nothing else (a viewer's forged refund is a 403, its page has no
// refund button); invitations are single-use links that expire after 72 hours; team changes
// keep one owner; every action is in the audit log. Method: the real app over HTTP, a
// cookie-jar client, invitation links read from the demo mailbox (the mail module).
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { pageRouteRules } from '../../src/modules/dashboard/index.ts'
import { listMailbox } from '../../src/modules/mail/index.ts'
import { startTestApp, type TestApp } from '../helpers/app.ts'
import { actionWords } from './_sections.ts'
import {
  WebClient,
  alertOf,
  apiPayment,
  newDashboardMerchant,
  paidPayment,
  signedIn,
  tableText,
  type DashboardMerchant,
} from './_web.ts'

const PASSWORD = 'correct horse battery staple'

async function invitationPath(h: TestApp, email: string): Promise<string> {
  const [mail] = await listMailbox(h.deps, { to: email, limit: 1 })
  assert.ok(mail, `a mail to ${email}`)
  const path = /\/dashboard\/invite\/[\w-]+/.exec(mail.text)?.[0]
  assert.ok(path, mail.text)
  return path
}

/** Invites `email` with `role` as the owner, accepts the link, signs the new member in. */
async function member(h: TestApp, m: DashboardMerchant, role: string, email?: string) {
  const owner = await signedIn(h, m)
  const address = email ?? `${role}-${crypto.randomUUID()}@example.com`
  const invited = await owner.submit(
    '/dashboard/settings/team/invite',
    { email: address, role },
    '/dashboard/settings',
  )
  assert.equal(invited.status, 303, invited.text.slice(0, 300))
  const path = await invitationPath(h, address)
  const guest = new WebClient(h.url)
  const accepted = await guest.submit(path, { password: PASSWORD, passwordConfirm: PASSWORD }, path)
  assert.equal(accepted.status, 303, accepted.text.slice(0, 500))
  return { web: await signedIn(h, { email: address, password: PASSWORD }), email: address, path }
}

test('a POST without its CSRF token, with a wrong one or with another session’s is a 403 and changes nothing', async (t) => {
  const h = await startTestApp(t)
  const m = await newDashboardMerchant(h)
  const { paymentId } = await paidPayment(m, 30_000)
  const web = await signedIn(h, m)
  const other = await signedIn(h, m)
  const fields = { amount: '100', idempotencyKey: crypto.randomUUID(), confirm: 'yes' }
  const path = `/dashboard/payments/${paymentId}/refund`

  const missing = await web.request('POST', path, new URLSearchParams(fields))
  assert.equal(missing.status, 403)
  assert.match(missing.text, /Bu işlem için yetkiniz yok/)
  const wrong = await web.request('POST', path, new URLSearchParams({ ...fields, _csrf: 'x-y-z' }))
  assert.equal(wrong.status, 403)
  // A real token, but made for the other session: bound to its cookie, it does not verify.
  const theirs = /name="_csrf" value="([^"]+)"/.exec((await other.get('/dashboard')).text)?.[1]
  assert.ok(theirs)
  const foreign = await web.request('POST', path, new URLSearchParams({ ...fields, _csrf: theirs }))
  assert.equal(foreign.status, 403)
  // Sign-out and sign-in forms are checked too.
  assert.equal((await web.request('POST', '/dashboard/logout', new URLSearchParams())).status, 403)
  assert.equal((await web.get('/dashboard')).status, 200, 'still signed in')
  const login = await new WebClient(h.url).request(
    'POST',
    '/dashboard/login',
    new URLSearchParams({ email: m.email, password: m.password }),
  )
  assert.equal(login.status, 403)

  assert.equal((await apiPayment(m, paymentId))['refundAmount'], 0)
  // With its token the same request works: the 403s were the token's doing.
  const ok = await web.submit(path, fields, `/dashboard/payments/${paymentId}`)
  assert.equal(ok.status, 303)
  assert.equal((await apiPayment(m, paymentId))['refundAmount'], 10_000)
})

test('a viewer sees no refund button and a forged refund POST is a 403 that changes nothing', async (t) => {
  const h = await startTestApp(t)
  const m = await newDashboardMerchant(h)
  const { paymentId } = await paidPayment(m, 30_000)
  const auth = await paidPayment(m, 5_000, { capture: false })
  const { web } = await member(h, m, 'viewer')

  const page = await web.get(`/dashboard/payments/${paymentId}`)
  assert.equal(page.status, 200)
  assert.doesNotMatch(page.text, /İade et/)
  assert.doesNotMatch(page.text, /id="refund-form"/)
  const forged = await web.submit(
    `/dashboard/payments/${paymentId}/refund`,
    { amount: '100', idempotencyKey: crypto.randomUUID(), confirm: 'yes' },
    page,
  )
  assert.equal(forged.status, 403)
  assert.match(forged.text, /Bu işlem için yetkiniz yok/)
  assert.equal((await apiPayment(m, paymentId))['refundAmount'], 0)
  const capture = await web.submit(`/dashboard/payments/${auth.paymentId}/capture`, {}, page)
  assert.equal(capture.status, 403)
  assert.equal((await apiPayment(m, auth.paymentId))['status'], 'authorized')
  // Developers' and team pages: readable, not actionable.
  const dev = await web.get('/dashboard/developers')
  assert.equal(dev.status, 200)
  assert.doesNotMatch(dev.text, /Yeni anahtar oluştur/)
  assert.equal(
    (await web.submit('/dashboard/developers/keys', { storeId: m.storeId }, dev)).status,
    403,
  )
  assert.equal(
    (
      await web.submit(
        '/dashboard/settings/team/invite',
        { email: 'x@example.com', role: 'owner' },
        dev,
      )
    ).status,
    403,
  )
})

/** Each declared POST page route with its ids filled with ones that name nothing. */
function declaredActions() {
  return [...pageRouteRules()]
    .filter(([route, rule]) => route.startsWith('POST ') && rule)
    .map(([route, rule]) => ({
      route,
      path: route.slice('POST '.length).replace(/:(\w+)/g, 'none_$1'),
      permission: rule?.permission,
      kyc: rule?.kyc === true,
    }))
}

test('every page action is refused before its handler to a role without its declared permission', async (t) => {
  // Ids that name nothing: were the handler to run, the answer would be a 404 or the form's
  // error, not the 403 the declared rule gives first.
  const h = await startTestApp(t)
  const m = await newDashboardMerchant(h)
  const { web } = await member(h, m, 'viewer')
  const page = await web.get('/dashboard')
  const checked: string[] = []
  for (const action of declaredActions()) {
    // A viewer holds `read` only; the sign-in steps and the member's own two factor need none.
    if (['public', 'signedIn', 'read'].includes(action.permission ?? '')) continue
    const res = await web.submit(action.path, {}, page)
    assert.equal(res.status, 403, `${action.route}: ${res.text.slice(0, 200)}`)
    assert.match(res.text, /Bu işlem için yetkiniz yok/, action.route)
    checked.push(action.route)
  }
  assert.ok(checked.length > 40, `every permissioned action checked (${String(checked.length)})`)
})

test('a merchant whose KYC is not approved is refused every KYC-gated page action, as the API, with the reason', async (t) => {
  const h = await startTestApp(t)
  const m = await newDashboardMerchant(h)
  const draft = await m.client.request<{ id: string; status: string }>('POST', '/v1/invoices', {
    body: {
      storeId: m.storeId,
      amountMinor: 1_000,
      currency: 'TRY',
      buyerEmail: 'alici@example.com',
      lineItems: [{ name: 'x', qty: 1, unitPriceMinor: 1_000, lineTotalMinor: 1_000 }],
    },
  })
  assert.equal(draft.status, 201, JSON.stringify(draft.body))
  const kyc = await m.client.request('POST', '/v1/sandbox/kyc', { body: { status: 'suspended' } })
  assert.equal(kyc.status, 200)
  const web = await signedIn(h, m)
  const page = await web.get('/dashboard')
  const gated = declaredActions().filter((a) => a.kyc)
  assert.equal(gated.length, 6)
  for (const action of gated) {
    // Ids that name nothing: only the gate, before the handler, makes this a 403.
    const res = await web.submit(action.path, { confirm: 'yes' }, page)
    assert.equal(res.status, 403, `${action.route}: ${res.text.slice(0, 200)}`)
    assert.match(alertOf(res.text) ?? '', /KYC/, `${action.route} says why`)
  }
  // A real invoice: the page refuses to send it, as the API does, and it stays a draft.
  const sent = await web.submit(`/dashboard/invoices/${draft.body.id}/send`, {}, page)
  assert.equal(sent.status, 403)
  const api = await m.client.request<{ code: string }>(
    'POST',
    `/v1/invoices/${draft.body.id}/send`,
    { body: {} },
  )
  assert.equal(api.body.code, 'SVC-KYC-3101')
  const after = await m.client.request<{ status: string }>('GET', `/v1/invoices/${draft.body.id}`)
  assert.equal(after.body.status, draft.body.status)
  // Cancelling is not gated, on the page as on the API.
  const cancelled = await web.submit(`/dashboard/invoices/${draft.body.id}/cancel`, {}, page)
  assert.equal(cancelled.status, 303)
})

test('each role may do what the permission table says: support refunds, developer keys, finance no capture', async (t) => {
  const h = await startTestApp(t)
  const m = await newDashboardMerchant(h)
  const support = await member(h, m, 'support')
  const developer = await member(h, m, 'developer')
  const finance = await member(h, m, 'finance')
  const admin = await member(h, m, 'admin')
  const { paymentId } = await paidPayment(m, 20_000)
  const auth = await paidPayment(m, 5_000, { capture: false })
  const refund = (web: WebClient) =>
    web.submit(
      `/dashboard/payments/${paymentId}/refund`,
      { amount: '10', idempotencyKey: crypto.randomUUID(), confirm: 'yes' },
      `/dashboard/payments/${paymentId}`,
    )
  assert.equal((await refund(support.web)).status, 303)
  assert.equal((await refund(finance.web)).status, 303)
  assert.equal((await refund(developer.web)).status, 403)
  assert.equal((await apiPayment(m, paymentId))['refundAmount'], 2_000)

  const capture = (web: WebClient) =>
    web.submit(`/dashboard/payments/${auth.paymentId}/capture`, {}, '/dashboard')
  assert.equal((await capture(finance.web)).status, 403)
  assert.equal((await capture(support.web)).status, 403)
  assert.equal((await capture(admin.web)).status, 303)

  const key = (web: WebClient) =>
    web.submit('/dashboard/developers/keys', { storeId: m.storeId }, '/dashboard/developers')
  const made = await key(developer.web)
  assert.equal(made.status, 200)
  assert.match(made.text, /id="new-secret"[^>]*>sk_demo_/)
  assert.equal((await key(finance.web)).status, 403)
  assert.equal((await key(support.web)).status, 403)

  // Admins manage the team but cannot make or unmake owners.
  const asOwner = await admin.web.submit(
    '/dashboard/settings/team/invite',
    { email: `o-${crypto.randomUUID()}@example.com`, role: 'owner' },
    '/dashboard/settings',
  )
  assert.equal(asOwner.status, 403)
  const asViewer = await admin.web.submit(
    '/dashboard/settings/team/invite',
    { email: `v-${crypto.randomUUID()}@example.com`, role: 'viewer' },
    '/dashboard/settings',
  )
  assert.equal(asViewer.status, 303)
})

test('an invitation link works once, within 72 hours, and sets the password it was given', async (t) => {
  const h = await startTestApp(t)
  const m = await newDashboardMerchant(h)
  const { email, path } = await member(h, m, 'viewer')
  // The link is a bearer: it is not in the request log.
  const token = path.split('/').pop() ?? ''
  assert.ok(token.length > 20 && !h.logs.some((line) => line.includes(token)), 'token not logged')
  // Used: the same link again is the invalid-link page, and makes no second member.
  const again = new WebClient(h.url)
  const reused = await again.get(path)
  assert.equal(reused.status, 404)
  assert.match(reused.text, /Davet bağlantısı geçersiz/)
  // A wrong password for the new member fails like any other.
  assert.equal((await new WebClient(h.url).signIn(email, 'not the password')).status, 401)

  // Expired: 72 hours later the link is refused.
  const owner = await signedIn(h, m)
  const late = `late-${crypto.randomUUID()}@example.com`
  await owner.submit(
    '/dashboard/settings/team/invite',
    { email: late, role: 'viewer' },
    '/dashboard/settings',
  )
  const latePath = await invitationPath(h, late)
  h.clock.advance(72 * 3600_000 + 1000)
  const guest = new WebClient(h.url)
  const expired = await guest.get(latePath)
  assert.equal(expired.status, 404)
  const forced = await guest.submit(
    latePath,
    { password: PASSWORD, passwordConfirm: PASSWORD },
    '/dashboard/login',
  )
  assert.equal(forced.status, 404)
  assert.equal((await new WebClient(h.url).signIn(late, PASSWORD)).status, 401)

  // A short password is refused on the page, and the link still works afterwards.
  h.clock.reset()
  const short = `short-${crypto.randomUUID()}@example.com`
  const fresh = await signedIn(h, m)
  await fresh.submit(
    '/dashboard/settings/team/invite',
    { email: short, role: 'viewer' },
    '/dashboard/settings',
  )
  const shortPath = await invitationPath(h, short)
  const weak = await guest.submit(
    shortPath,
    { password: 'short', passwordConfirm: 'short' },
    shortPath,
  )
  assert.equal(weak.status, 400)
  assert.match(alertOf(weak.text) ?? '', /12/)
  assert.equal((await guest.get(shortPath)).status, 200)
})

test('the team keeps an owner, a removed member is signed out, and every change is audited', async (t) => {
  const h = await startTestApp(t)
  const m = await newDashboardMerchant(h)
  const viewer = await member(h, m, 'viewer')
  const owner = await signedIn(h, m)
  const team = await owner.get('/dashboard/settings')
  const ids = [...team.text.matchAll(/\/dashboard\/settings\/team\/(usr_\w+)\/remove/g)].map(
    (x) => x[1],
  )
  assert.equal(ids.length, 1, 'only the viewer is removable by the owner (not themselves)')
  const viewerId = ids[0] ?? ''

  const promoted = await owner.submit(
    `/dashboard/settings/team/${viewerId}/role`,
    { role: 'support' },
    team,
  )
  assert.equal(promoted.status, 303)
  const page = await viewer.web.get('/dashboard/settings')
  assert.match(page.text, /Destek/, 'the new role applies at the next request')

  const removed = await owner.submit(
    `/dashboard/settings/team/${viewerId}/remove`,
    {},
    '/dashboard/settings',
  )
  assert.equal(removed.status, 303)
  assert.equal((await viewer.web.get('/dashboard')).location, '/dashboard/login')
  assert.equal((await new WebClient(h.url).signIn(viewer.email, PASSWORD)).status, 401)

  const log = tableText((await owner.get('/dashboard/settings/audit-log')).text, 'audit-table')
  for (const action of ['team.invite', 'team.join', 'team.change_role', 'team.remove']) {
    assert.ok(log.includes(actionWords(action)), action)
  }
  assert.ok(log.includes(viewer.email))
})

test('the dashboard API applies the same roles: a viewer token reads but cannot make keys; a removed member’s token stops at once', async (t) => {
  const h = await startTestApp(t)
  const m = await newDashboardMerchant(h)
  const viewer = await member(h, m, 'viewer')
  const api = async (method: string, path: string, token: string, body?: unknown) => {
    const res = await fetch(h.url + path, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    })
    return { status: res.status, body: (await res.json()) as { code?: string; token?: string } }
  }
  const login = await fetch(`${h.url}/v1/dashboard/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: viewer.email, password: PASSWORD }),
  })
  const { token } = (await login.json()) as { token: string }
  assert.equal((await api('GET', `/v1/stores/${m.storeId}/api-keys`, token)).status, 200)
  assert.equal((await api('GET', `/v1/stores/${m.storeId}/webhooks`, token)).status, 200)
  const key = await api('POST', `/v1/stores/${m.storeId}/api-keys`, token, {})
  assert.equal(key.status, 403)
  assert.equal(key.body.code, 'SVC-AUTH-3201')
  const hook = await api('POST', `/v1/stores/${m.storeId}/webhooks`, token, {
    url: 'http://127.0.0.1:9/hook',
  })
  assert.equal(hook.status, 403)
  assert.equal(
    (await api('GET', `/v1/stores/${m.storeId}/webhooks/callback-secret`, token)).status,
    403,
  )

  const owner = await signedIn(h, m)
  const team = await owner.get('/dashboard/settings')
  const viewerId = /\/dashboard\/settings\/team\/(usr_\w+)\/remove/.exec(team.text)?.[1] ?? ''
  await owner.submit(`/dashboard/settings/team/${viewerId}/remove`, {}, team)
  assert.equal((await api('GET', `/v1/stores/${m.storeId}/api-keys`, token)).status, 401)
})
