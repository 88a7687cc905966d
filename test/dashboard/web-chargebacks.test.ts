// Goal: the chargebacks pages act through the disputes service as the API does: the list shows
// each chargeback with the deadline to answer it (received + 7 days, Istanbul time); Accept and
// Reverse change what the API then reports (a reversed amount is refundable again), each
// audited; a resolved chargeback offers no action and a forged one is refused with its reason;
// finance may act, viewer and developer may not; a forged POST without CSRF token changes
// nothing; another merchant's chargeback is the 404 page. The evidence form is
// web-evidence.test.ts's.
// Method: the real app over HTTP, a cookie-jar client, the signed API to check results.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { formatDate } from '../../src/platform/web/format.ts'
import { startTestApp } from '../helpers/app.ts'
import { actionWords, auditText, forged, memberWeb } from './_sections.ts'
import {
  alertOf,
  apiPayment,
  newDashboardMerchant,
  paidPayment,
  signedIn,
  tableText,
  textOf,
  type DashboardMerchant,
} from './_web.ts'

interface ChargebackBody {
  id: string
  status: string
  amount: number
  receivedAt: string
}

async function raise(m: DashboardMerchant, paymentId: string, amount: number) {
  const res = await m.client.request<ChargebackBody>(
    'POST',
    `/v1/sandbox/payments/${paymentId}/chargebacks`,
    { body: { amount, reasonCode: '4853' } },
  )
  assert.equal(res.status, 201, JSON.stringify(res.body))
  return res.body
}

async function apiChargebacks(m: DashboardMerchant, paymentId: string) {
  const res = await m.client.request<{ items: ChargebackBody[] }>(
    'GET',
    `/v1/payments/${paymentId}/chargebacks`,
  )
  assert.equal(res.status, 200)
  return res.body.items
}

test('the list shows the deadline; accept and reverse are what the API then reports', async (t) => {
  const h = await startTestApp(t)
  const m = await newDashboardMerchant(h)
  const { paymentId } = await paidPayment(m, 50_000)
  const first = await raise(m, paymentId, 10_000)
  const second = await raise(m, paymentId, 5_000)
  const web = await signedIn(h, m)

  const list = await web.get('/dashboard/chargebacks')
  assert.equal(list.status, 200)
  const rows = tableText(list.text, 'chargebacks-table')
  const due = formatDate(
    new Date(Date.parse(first.receivedAt) + 7 * 24 * 3600_000),
    'tr',
    'datetime',
  )
  assert.ok(rows.includes(due), `the deadline ${due} in ${rows}`)
  assert.ok(rows.includes('₺100,00') && rows.includes('₺50,00'))
  // The reason code with its meaning, not the bare "4853".
  assert.ok(rows.includes('4853 · Kart sahibi itirazı: kusurlu, açıklandığı gibi değil'), rows)

  const detail = await web.get(`/dashboard/chargebacks/${first.id}`)
  assert.equal(detail.status, 200)
  assert.equal(textOf(detail.text, 'deadline'), due)
  assert.match(detail.text, new RegExp(`href="/dashboard/payments/${paymentId}"`))
  assert.match(detail.text, /id="evidence-form"/)
  // What the code means and what to send, in the reader's language.
  assert.equal(
    textOf(detail.text, 'reason'),
    '4853 · Kart sahibi itirazı: kusurlu, açıklandığı gibi değil',
  )
  assert.match(textOf(detail.text, 'reason-evidence') ?? '', /açıklamasını/)
  const english = await web.get(`/dashboard/chargebacks/${first.id}?lang=en`)
  assert.equal(
    textOf(english.text, 'reason'),
    '4853 · Cardholder dispute: defective or not as described',
  )
  assert.match(textOf(english.text, 'reason-evidence') ?? '', /product description/)
  await web.get(`/dashboard/chargebacks/${first.id}?lang=tr`)

  const accepted = await web.submit(`/dashboard/chargebacks/${first.id}/accept`, {}, detail)
  assert.equal(accepted.status, 303)
  const afterAccept = await web.get(accepted.location ?? '')
  assert.match(afterAccept.text, /role="status"[\s\S]*Ters ibraz kabul edildi/)
  assert.equal(textOf(afterAccept.text, 'deadline'), '—', 'no deadline once resolved')
  assert.doesNotMatch(afterAccept.text, /\/accept"/)

  // Accepting it again is refused with its reason, and nothing changes.
  const again = await web.submit(`/dashboard/chargebacks/${first.id}/reverse`, {}, afterAccept)
  assert.equal(again.status, 409)
  assert.match(alertOf(again.text) ?? '', /zaten sonuçlanmış/)

  const refundableBefore = (await apiPayment(m, paymentId))['refundableAmount'] as number
  const reversed = await web.submit(
    `/dashboard/chargebacks/${second.id}/reverse`,
    {},
    `/dashboard/chargebacks/${second.id}`,
  )
  assert.equal(reversed.status, 303)
  const byId = new Map((await apiChargebacks(m, paymentId)).map((c) => [c.id, c.status]))
  assert.equal(byId.get(first.id), 'accepted')
  assert.equal(byId.get(second.id), 'reversed')
  assert.equal((await apiPayment(m, paymentId))['refundableAmount'], refundableBefore + 5_000)

  const open = await web.get('/dashboard/chargebacks?status=received')
  assert.match(open.text, /Kayıt yok/)
  const log = await auditText(web)
  assert.ok(
    log.includes(actionWords('chargeback.accept')) &&
      log.includes(actionWords('chargeback.reverse')),
  )
  assert.ok(log.includes(first.id) && log.includes(second.id))
})

test('roles, CSRF and tenancy: finance accepts, viewer and developer get 403, another merchant’s is 404', async (t) => {
  const h = await startTestApp(t)
  const m = await newDashboardMerchant(h)
  const other = await newDashboardMerchant(h, 'Başka Mağaza')
  const mine = await paidPayment(m, 20_000)
  const cb = await raise(m, mine.paymentId, 20_000)
  const theirPayment = await paidPayment(other, 20_000)
  const theirs = await raise(other, theirPayment.paymentId, 20_000)
  const path = `/dashboard/chargebacks/${cb.id}/accept`

  const viewer = await memberWeb(h, m, 'viewer')
  const page = await viewer.get(`/dashboard/chargebacks/${cb.id}`)
  assert.equal(page.status, 200)
  assert.doesNotMatch(page.text, /Kabul et/)
  assert.equal((await viewer.submit(path, {}, page)).status, 403)
  const developer = await memberWeb(h, m, 'developer')
  assert.equal((await developer.submit(path, {}, '/dashboard/chargebacks')).status, 403)
  const finance = await memberWeb(h, m, 'finance')
  assert.equal((await forged(finance, path)).status, 403)
  assert.equal((await apiChargebacks(m, mine.paymentId))[0]?.status, 'received')

  assert.equal((await finance.get(`/dashboard/chargebacks/${theirs.id}`)).status, 404)
  const foreign = await finance.submit(
    `/dashboard/chargebacks/${theirs.id}/accept`,
    {},
    '/dashboard/chargebacks',
  )
  assert.equal(foreign.status, 404)
  assert.equal((await apiChargebacks(other, theirPayment.paymentId))[0]?.status, 'received')
  const list = await finance.get('/dashboard/chargebacks')
  assert.doesNotMatch(list.text, new RegExp(theirs.id))

  assert.equal((await finance.submit(path, {}, '/dashboard/chargebacks')).status, 303)
  assert.equal((await apiChargebacks(m, mine.paymentId))[0]?.status, 'accepted')
})
