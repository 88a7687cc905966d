// Goal: the "Banka POS" pages do what /v1/pos-accounts does, through the same services: an
// owner adds an account with its provider's credential form (a bad field is refused and makes
// nothing; the credentials never come back in any page, answer or log), tests it (1 TRY
// pre-authorized and voided at the bank, no payment recorded, the result in words and in the
// audit log), disables, enables and renames it; the platform's accounts are listed, not
// changeable; a viewer reads but is refused every change (403), another merchant's POS id is
// the 404 page, a form without its CSRF token is refused. The payment page shows the POS that
// took the payment and each routing attempt in words, after a failover (Garanti down).
// Method: the real app over HTTP with a cookie-jar client; EST, Garanti and PosNet simulators
// on loopback; the signed API and the simulators' books say what happened.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import {
  startEstV3Simulator,
  startGarantiSimulator,
  startPosnetSimulator,
} from '../../src/modules/acquirer/index.ts'
import { startTestApp } from '../helpers/app.ts'
import { CARDS, charge } from '../helpers/payments.ts'
import { actionWords, auditText, forged, memberWeb } from './_sections.ts'
import { alertOf, newDashboardMerchant, signedIn, tableText, textOf } from './_web.ts'
import { GARANTI_TEST as GARANTI, POSNET_TEST as POSNET } from '../helpers/bank-credentials.ts'

const EST = {
  clientId: '700655000200',
  username: 'ISBANKAPI',
  password: 'ISB-secret-7',
  storeKey: 'TRPS-store-0200',
}

function credentialFields(c: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(c).map(([k, v]) => [`cred_${k}`, v]))
}

test('an owner adds an EST account by its form, tests it (1 TRY auth+void), disables, enables and renames it; credentials never come back', async (t) => {
  const h = await startTestApp(t)
  const sim = await startEstV3Simulator(EST)
  t.after(() => sim.close())
  const m = await newDashboardMerchant(h, 'Kapadokya Seramik')
  const web = await signedIn(h, m)

  const list = await web.get('/dashboard/pos')
  assert.equal(list.status, 200)
  assert.match(list.text, /Henüz POS hesabı yok/)
  const form = await web.get('/dashboard/pos/new?provider=est_v3')
  assert.equal(form.status, 200)
  assert.match(form.text, /name="cred_storeKey"/)
  assert.match(form.text, /name="bank"/)

  // A missing store key: refused with the field named, nothing made, nothing echoed back.
  const refused = await web.submit(
    '/dashboard/pos',
    {
      provider: 'est_v3',
      name: 'İşbank',
      environment: 'test',
      bank: 'isbank',
      ...credentialFields({ ...EST, storeKey: '' }),
      api: sim.api,
      threeDGate: sim.threeDGate,
    },
    form,
  )
  assert.equal(refused.status, 400, refused.text.slice(0, 300))
  assert.ok(alertOf(refused.text))
  assert.match(refused.text, /aria-invalid="true"/)
  assert.ok(!refused.text.includes(EST.password) && !refused.text.includes(EST.clientId))
  const none = await m.client.request<{ items: unknown[] }>('GET', '/v1/pos-accounts')
  assert.equal(none.body.items.length, 0)

  const made = await web.submit(
    '/dashboard/pos',
    {
      provider: 'est_v3',
      name: 'İşbank sanal POS',
      environment: 'test',
      bank: 'isbank',
      ...credentialFields(EST),
      api: sim.api,
      threeDGate: sim.threeDGate,
    },
    form,
  )
  assert.equal(made.status, 303, made.text.slice(0, 500))
  const id = /\/dashboard\/pos\/(pos_[0-9a-z]+)$/.exec(made.location ?? '')?.[1]
  assert.ok(id, made.location)
  const api = await m.client.request<Record<string, unknown>>('GET', `/v1/pos-accounts/${id}`)
  assert.equal(api.status, 200)
  assert.deepEqual(
    [api.body['provider'], api.body['bank'], api.body['name'], api.body['enabled']],
    ['est_v3', 'isbank', 'İşbank sanal POS', true],
  )

  const detail = await web.get(`/dashboard/pos/${id}`)
  assert.equal(detail.status, 200)
  assert.match(detail.text, /POS hesabı eklendi/)
  const rows = tableText((await web.get('/dashboard/pos')).text, 'pos-table')
  assert.ok(rows.includes('İşbank sanal POS') && rows.includes('İş Bankası'), rows)

  // The test: one pre-authorization of 100 kuruş and its void at the bank; no payment for us.
  const tested = await web.submit(`/dashboard/pos/${id}/test`, {}, detail)
  assert.equal(tested.status, 303)
  const shown = await web.get(`/dashboard/pos/${id}`)
  assert.match(shown.text, /Banka 1 TL provizyonu onayladı \(onay kodu [0-9A-Z]+\) ve iptal etti/)
  assert.equal(sim.authorizations(), 1)
  const [order] = [...sim.orders.values()]
  assert.equal(order?.amount, 100)
  assert.equal(order?.voided, true)
  const payments = await m.client.request<{ items: unknown[] }>('GET', '/v1/payments')
  assert.equal(payments.body.items.length, 0)

  // Down bank: the test says so in words.
  await sim.setDown(true)
  await web.submit(`/dashboard/pos/${id}/test`, {}, shown)
  assert.match((await web.get(`/dashboard/pos/${id}`)).text, /Bankaya ulaşılamadı/)
  await sim.setDown(false)

  const off = await web.submit(`/dashboard/pos/${id}/disable`, {}, `/dashboard/pos/${id}`)
  assert.equal(off.status, 303)
  const disabled = await m.client.request<{ enabled: boolean }>('GET', `/v1/pos-accounts/${id}`)
  assert.equal(disabled.body.enabled, false)
  await web.submit(`/dashboard/pos/${id}/enable`, {}, `/dashboard/pos/${id}`)
  const renamed = await web.submit(
    `/dashboard/pos/${id}/rename`,
    { name: 'İşbank (en ucuz)' },
    `/dashboard/pos/${id}`,
  )
  assert.equal(renamed.status, 303)
  const after = await m.client.request<{ enabled: boolean; name: string }>(
    'GET',
    `/v1/pos-accounts/${id}`,
  )
  assert.deepEqual([after.body.enabled, after.body.name], [true, 'İşbank (en ucuz)'])

  const audit = await auditText(web)
  for (const action of ['create', 'test', 'disable', 'enable', 'rename']) {
    assert.ok(audit.includes(actionWords(`pos_accounts.${action}`)), action)
  }
  const entries = await h.deps.db
    .selectFrom('audit_log')
    .select(['action', 'details'])
    .where('merchant_id', '=', m.merchantId)
    .execute()
  const everything = JSON.stringify([
    entries,
    h.logs,
    (await web.get(`/dashboard/pos/${id}`)).text,
    (await web.get('/dashboard/pos')).text,
    api.body,
  ])
  for (const secret of [EST.password, EST.storeKey, EST.clientId, EST.username]) {
    assert.ok(!everything.includes(secret), `${secret} leaked`)
  }
  const test1 = entries.find((e) => e.action === 'pos_accounts.test')
  assert.ok(test1)
})

test('a viewer reads the POS pages but is refused every change; another merchant’s POS is a 404; no CSRF token, no change', async (t) => {
  const h = await startTestApp(t)
  const sim = await startGarantiSimulator(GARANTI)
  t.after(() => sim.close())
  const m = await newDashboardMerchant(h)
  const created = await m.client.request<{ id: string }>('POST', '/v1/pos-accounts', {
    body: {
      provider: 'garanti',
      name: 'Garanti BBVA',
      environment: 'test',
      credentials: GARANTI,
      endpoints: { api: sim.api, threeDGate: sim.threeDGate },
    },
  })
  assert.equal(created.status, 201, JSON.stringify(created.body))
  const id = created.body.id
  const ykb = await startPosnetSimulator(POSNET)
  t.after(() => ykb.close())
  const platform = await h.operator<{ id: string }>('POST', '/operator/v1/pos-accounts', {
    provider: 'posnet',
    name: 'Platform Yapı Kredi',
    environment: 'test',
    credentials: POSNET,
    endpoints: { api: ykb.api, threeDGate: ykb.threeDGate },
  })
  assert.equal(platform.status, 201, JSON.stringify(platform.body))

  const v = await memberWeb(h, m, 'viewer')
  const list = await v.get('/dashboard/pos')
  assert.equal(list.status, 200)
  const rows = tableText(list.text, 'pos-table')
  assert.ok(rows.includes('Garanti BBVA') && rows.includes('Platform Yapı Kredi'), rows)
  assert.doesNotMatch(list.text, /id="new-est_v3"/)
  const detail = await v.get(`/dashboard/pos/${id}`)
  assert.equal(detail.status, 200)
  assert.doesNotMatch(detail.text, /1 TL provizyon ve iptal gönder/)
  assert.equal((await v.get('/dashboard/pos/new?provider=garanti')).status, 403)
  for (const action of ['test', 'disable', 'rename']) {
    const tried = await v.submit(`/dashboard/pos/${id}/${action}`, { name: 'X' }, detail)
    assert.equal(tried.status, 403, action)
  }
  const addTried = await v.submit(
    '/dashboard/pos',
    { provider: 'garanti', name: 'Mine', environment: 'test', ...credentialFields(GARANTI) },
    detail,
  )
  assert.equal(addTried.status, 403)
  assert.equal(sim.authorizations(), 0)
  const still = await m.client.request<{ enabled: boolean; name: string }>(
    'GET',
    `/v1/pos-accounts/${id}`,
  )
  assert.deepEqual([still.body.enabled, still.body.name], [true, 'Garanti BBVA'])

  // The owner sees the platform's account but has no control over it.
  const owner = await signedIn(h, m)
  const theirs = await owner.get(`/dashboard/pos/${platform.body.id}`)
  assert.equal(theirs.status, 200)
  assert.doesNotMatch(theirs.text, /1 TL provizyon ve iptal gönder/)
  const refusedPlatform = await owner.submit(
    `/dashboard/pos/${platform.body.id}/disable`,
    {},
    theirs,
  )
  assert.equal(refusedPlatform.status, 404)

  const csrf = await forged(owner, `/dashboard/pos/${id}/disable`)
  assert.equal(csrf.status, 403)

  const other = await newDashboardMerchant(h, 'Başka Mağaza')
  const stranger = await signedIn(h, other)
  assert.equal((await stranger.get(`/dashboard/pos/${id}`)).status, 404)
  const page = await stranger.get('/dashboard/pos')
  assert.equal((await stranger.submit(`/dashboard/pos/${id}/test`, {}, page)).status, 404)
  assert.equal((await stranger.submit(`/dashboard/pos/${id}/disable`, {}, page)).status, 404)
  assert.equal(sim.authorizations(), 0)
  const unchanged = await m.client.request<{ enabled: boolean }>('GET', `/v1/pos-accounts/${id}`)
  assert.equal(unchanged.body.enabled, true)
  // The file's later tests share the database: the platform account must not route them.
  const gone = await h.operator('DELETE', `/operator/v1/pos-accounts/${platform.body.id}`)
  assert.equal(gone.status, 204)
})

test('the payment page shows the POS that took a failed-over payment and each attempt in words', async (t) => {
  const h = await startTestApp(t)
  const garanti = await startGarantiSimulator(GARANTI)
  t.after(() => garanti.close())
  const posnet = await startPosnetSimulator(POSNET)
  t.after(() => posnet.close())
  const m = await newDashboardMerchant(h)
  const add = async (provider: string, name: string, credentials: object, sim: typeof garanti) => {
    const res = await m.client.request<{ id: string }>('POST', '/v1/pos-accounts', {
      body: {
        provider,
        name,
        environment: 'test',
        credentials,
        endpoints: { api: sim.api, threeDGate: sim.threeDGate },
      },
    })
    assert.equal(res.status, 201, JSON.stringify(res.body))
    return res.body.id
  }
  const first = await add('garanti', 'Garanti BBVA', GARANTI, garanti)
  const second = await add('posnet', 'Yapı Kredi', POSNET, posnet as unknown as typeof garanti)
  await m.client.request('PUT', '/v1/routing', { body: { rules: [], default: [first, second] } })
  await garanti.setDown(true)
  const { res } = await charge(m.client, CARDS.frictionless, 5_000, { threeDSecure: false })
  assert.equal(res.body.status, 'captured', JSON.stringify(res.body))
  const pos = await m.client.request<{
    acquirer: { authCode: string; hostReference: string }
  }>('GET', `/v1/payments/${res.body.paymentId}`)

  const web = await signedIn(h, m)
  const page = await web.get(`/dashboard/payments/${res.body.paymentId}`)
  assert.equal(page.status, 200)
  assert.equal(textOf(page.text, 'acquirer-pos'), 'Yapı Kredi')
  assert.ok(page.text.includes(pos.body.acquirer.authCode))
  assert.ok(page.text.includes(pos.body.acquirer.hostReference))
  const attempts = tableText(page.text, 'attempts-table')
  assert.match(attempts, /1\s+Garanti BBVA\s+Gönderilemedi \(banka kapalı\)\s+—/)
  assert.match(attempts, /2\s+Yapı Kredi\s+Onaylandı\s+00/)
  const en = await web.get(`/dashboard/payments/${res.body.paymentId}?lang=en`)
  assert.match(tableText(en.text, 'attempts-table'), /Not sent \(bank down\)/)

  // A sandbox payment (no POS) shows no acquirer panel.
  const plain = await newDashboardMerchant(h, 'Sandbox Mağaza')
  const { res: sandbox } = await charge(plain.client, CARDS.frictionless, 1_000)
  const plainWeb = await signedIn(h, plain)
  const sandboxPage = await plainWeb.get(`/dashboard/payments/${sandbox.body.paymentId}`)
  assert.equal(sandboxPage.status, 200)
  assert.doesNotMatch(sandboxPage.text, /attempts-table/)
})
