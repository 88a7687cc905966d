// Goal: the dashboard's POS reconciliation page (issue 39 in the dashboard) shows what
// /v1/acquirer-reconciliation knows, in words and lira: a day with differences planted at the
// Garanti simulator (an amount the bank changed, a sale we never made) lists each one with both
// amounts in Turkish notation and a link to the payment; "check now" runs the same service as
// POST /v1/acquirer-reconciliation, records an audit entry, and says when the bank is silent;
// a viewer reads but is refused the run (403, no form); another merchant's POS is the 404 page
// for both reading and running; a run without its CSRF token is refused.
// Method: the real app over HTTP with a cookie-jar client, Garanti's simulator on loopback and
// its books edited; the signed API says what was recorded.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { startGarantiSimulator } from '../../src/modules/acquirer/index.ts'
import { startTestApp } from '../helpers/app.ts'
import { CARDS, charge } from '../helpers/payments.ts'
import { actionWords, auditText, forged, memberWeb } from './_sections.ts'
import { alertOf, newDashboardMerchant, signedIn, tableText } from './_web.ts'
import { GARANTI_TEST as GARANTI } from '../helpers/bank-credentials.ts'

function today(): string {
  return new Date(Date.now() + 3 * 3_600_000).toISOString().slice(0, 10)
}

test('a planted difference at Garanti is listed in words and lira, linked to its payment; a viewer reads but cannot run; another merchant’s POS is a 404', async (t) => {
  const h = await startTestApp(t)
  const sim = await startGarantiSimulator(GARANTI)
  t.after(() => sim.close())
  const m = await newDashboardMerchant(h, 'Efes Kilim')
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
  const pos = created.body.id
  const { res: sale } = await charge(m.client, CARDS.frictionless, 10_000, { threeDSecure: false })
  assert.equal(sale.body.status, 'captured', JSON.stringify(sale.body))
  const paymentId = sale.body.paymentId

  const web = await signedIn(h, m)
  const listLink = await web.get('/dashboard/pos')
  assert.match(listLink.text, /href="\/dashboard\/pos\/reconciliation"/)
  const page = `/dashboard/pos/reconciliation?date=${today()}&pos=${pos}`
  const before = await web.get(page)
  assert.equal(before.status, 200, before.text.slice(0, 300))
  assert.match(before.text, /henüz kontrol edilmedi/)
  assert.match(tableText(before.text, 'reconciliation-table'), /Bu gün için fark yok/)

  // Planted at the bank: the sale's amount changed, and a sale we never made.
  const first = sim.transactions.find((x) => x.orderId === paymentId)
  assert.ok(first)
  first.amount = 10_100
  sim.transactions.push({
    orderId: 'pay_notoursatall0000000000',
    trxType: 'Satis',
    status: 'Basarili',
    amount: 7_500,
    at: new Date(),
    retrefNum: '999999999999',
    origRetrefNum: '',
  })
  const ran = await web.submit(
    '/dashboard/pos/reconciliation',
    { date: today(), posAccountId: pos },
    before,
  )
  assert.equal(ran.status, 303, ran.text.slice(0, 300))
  const after = await web.get(ran.location ?? page)
  assert.equal(after.status, 200)
  assert.match(alertOf(after.text) ?? after.text, /Mutabakat tamamlandı: 3 fark/)
  const rows = tableText(after.text, 'reconciliation-table')
  assert.match(rows, /Provizyon tutarı farklı: bizde ₺100,00, bankada ₺101,00\./)
  assert.match(rows, /Tahsil edilen tutar farklı: bizde ₺100,00, bankada ₺101,00\./)
  assert.match(rows, /Bizde yok: banka ₺75,00 onaylamış/)
  assert.ok(after.text.includes(`href="/dashboard/payments/${paymentId}"`))
  // Words, not codes; lira, not kuruş integers.
  assert.doesNotMatch(rows, /amount_differs|missing_at_us|10100|7500\b/)
  assert.match(await auditText(web), new RegExp(actionWords('pos_accounts.reconcile')))
  const api = await m.client.request<{ items: unknown[] }>(
    'GET',
    `/v1/acquirer-reconciliation?date=${today()}&posAccountId=${pos}`,
  )
  assert.equal(api.body.items.length, 3)

  // The bank down: nothing recorded, said in words.
  await sim.setDown(true)
  const silent = await web.submit(
    '/dashboard/pos/reconciliation',
    { date: today(), posAccountId: pos },
    after,
  )
  assert.equal(silent.status, 303)
  assert.match((await web.get(silent.location ?? page)).text, /Banka cevap vermedi/)
  await sim.setDown(false)

  // A bad date: refused in Turkish, no 5xx.
  const bad = await web.get(`/dashboard/pos/reconciliation?date=2999-01-01&pos=${pos}`)
  assert.equal(bad.status, 400)
  assert.ok(alertOf(bad.text))

  // A viewer reads the differences, has no button, and is refused the run.
  const viewer = await memberWeb(h, m, 'viewer')
  const seen = await viewer.get(page)
  assert.equal(seen.status, 200)
  assert.match(tableText(seen.text, 'reconciliation-table'), /Bizde yok/)
  assert.doesNotMatch(seen.text, /id="rec-run-form"/)
  const refused = await viewer.submit(
    '/dashboard/pos/reconciliation',
    { date: today(), posAccountId: pos },
    seen,
  )
  assert.equal(refused.status, 403)

  // No CSRF token: refused.
  const csrf = await forged(web, '/dashboard/pos/reconciliation', {
    date: today(),
    posAccountId: pos,
  })
  assert.equal(csrf.status, 403)

  // Another merchant: the POS is not there, for reading or running.
  const other = await newDashboardMerchant(h, 'Başka Mağaza')
  const stranger = await signedIn(h, other)
  assert.equal((await stranger.get(page)).status, 404)
  const own = await stranger.get('/dashboard/pos/reconciliation')
  assert.equal(own.status, 200)
  assert.match(own.text, /önce bir POS hesabı ekleyin/)
  const theirs = await stranger.submit(
    '/dashboard/pos/reconciliation',
    { date: today(), posAccountId: pos },
    await stranger.get('/dashboard/pos'),
  )
  assert.equal(theirs.status, 404)
  const unchanged = await m.client.request<{ items: unknown[] }>(
    'GET',
    `/v1/acquirer-reconciliation?date=${today()}&posAccountId=${pos}`,
  )
  assert.equal(unchanged.body.items.length, 3)
})
