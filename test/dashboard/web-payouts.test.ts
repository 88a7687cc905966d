// Goal: the payouts pages act through the payouts service as the API does: balances per owner
// (the merchant and each submerchant) as GET /v1/balances lists them; a CSV of payout rows
// pasted into the draft form becomes a draft with a per-row report (valid rows, problems of the
// invalid ones, destinations masked); Approve fans the valid rows out into the payouts the API
// then lists, all or nothing against the available balance (a refusal shows its reason and
// makes nothing); Cancel; each action audited; finance may act, support and viewer may not; a
// forged POST without CSRF token makes nothing; another merchant's draft is the 404 page.
// Method: the real app over HTTP, a cookie-jar client, the signed API to check results.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { startTestApp } from '../helpers/app.ts'
import { balanceOf, captureAndSettle, newSubmerchant, trIban } from '../payouts/_support.ts'
import { actionWords, auditText, forged, memberWeb } from './_sections.ts'
import {
  alertOf,
  newDashboardMerchant,
  signedIn,
  tableText,
  textOf,
  type DashboardMerchant,
} from './_web.ts'

async function apiPayouts(m: DashboardMerchant) {
  const res = await m.client.request<{ items: { amountMinor: number; holderName: string }[] }>(
    'GET',
    '/v1/payouts?limit=100',
  )
  assert.equal(res.status, 200, JSON.stringify(res.body))
  return res.body.items
}

function csv(rows: string[]): string {
  return ['rail,dest,holderName,amountMinor', ...rows].join('\n')
}

const GOOD = [`fast,${trIban('1111')},Ayşe Yılmaz,15000`, `eft,${trIban('2222')},Mehmet Demir,2500`]
const BAD = `fast,TR00123,Ali Veli,abc`

test('balances per owner; a CSV draft, its per-row report, approve: the payouts the API lists', async (t) => {
  const h = await startTestApp(t)
  const m = await newDashboardMerchant(h)
  const seller = await newSubmerchant(h, m.merchantId)
  await captureAndSettle(m, 100_000, [{ submerchantId: seller.submerchantId, amountMinor: 40_000 }])
  const web = await signedIn(h, m)

  const main = await web.get('/dashboard/payouts')
  assert.equal(main.status, 200)
  const balances = tableText(main.text, 'balances-table')
  assert.ok(balances.includes(seller.submerchantId), 'the submerchant has its row')
  const mine = await balanceOf(m.client, m.merchantId)
  const money = (minor: number) =>
    new Intl.NumberFormat('tr-TR', {
      style: 'currency',
      currency: 'TRY',
      currencyDisplay: 'narrowSymbol',
    }).format(minor / 100)
  assert.ok(balances.includes(money(mine.availableMinor)), balances)

  const form = await web.get('/dashboard/payouts/drafts/new')
  assert.equal(form.status, 200)
  // Not CSV at all: the parser's reason, nothing made.
  const junk = await web.submit(
    '/dashboard/payouts/drafts',
    { storeId: m.storeId, csv: 'who,what\n1,2' },
    form,
  )
  assert.equal(junk.status, 400)
  assert.match(alertOf(junk.text) ?? '', /bilinmeyen sütun: who, what/)

  const uploaded = await web.submit(
    '/dashboard/payouts/drafts',
    { storeId: m.storeId, csv: csv([...GOOD, BAD]) },
    form,
  )
  assert.equal(uploaded.status, 303, uploaded.text.slice(0, 300))
  const draftId = /\/payouts\/drafts\/(drf_\w+)/.exec(uploaded.location ?? '')?.[1] ?? ''
  const report = await web.get(uploaded.location ?? '')
  assert.match(report.text, /role="status"[\s\S]*3 satırın 2 tanesi geçerli/)
  assert.equal(textOf(report.text, 'valid-count'), '2')
  assert.equal(textOf(report.text, 'invalid-count'), '1')
  const rows = tableText(report.text, 'report-table')
  assert.match(rows, /Ali Veli/)
  assert.match(rows, /amountMinor: must be an integer of kuruş/)
  assert.match(rows, /TR\d{2}\*+1111/)
  assert.ok(!rows.includes(trIban('1111')), 'no destination in the report')

  const approve = await web.submit(`/dashboard/payouts/drafts/${draftId}/approve`, {}, report)
  assert.equal(approve.status, 303)
  const payouts = await apiPayouts(m)
  assert.deepEqual(
    payouts.map((p) => p.amountMinor).sort((a, b) => a - b),
    [2_500, 15_000],
  )
  const after = await web.get(approve.location ?? '')
  assert.match(after.text, /role="status"[\s\S]*2 ödeme sıraya alındı/)
  const list = await web.get('/dashboard/payouts')
  assert.match(tableText(list.text, 'payouts-table'), /Mehmet Demir/)
  assert.match(tableText(list.text, 'drafts-table'), /Onaylandı/)

  // More than the available balance: refused with its reason, all or nothing.
  const big = await web.submit(
    '/dashboard/payouts/drafts',
    { storeId: m.storeId, csv: csv([`fast,${trIban('3333')},Zeynep Kaya,900000000`]) },
    '/dashboard/payouts/drafts/new',
  )
  const bigId = /\/payouts\/drafts\/(drf_\w+)/.exec(big.location ?? '')?.[1] ?? ''
  const refused = await web.submit(
    `/dashboard/payouts/drafts/${bigId}/approve`,
    {},
    `/dashboard/payouts/drafts/${bigId}`,
  )
  assert.equal(refused.status, 409)
  assert.match(alertOf(refused.text) ?? '', /\(₺9\.000\.000,00\) kullanılabilir bakiyeyi aşıyor/)
  assert.equal((await apiPayouts(m)).length, 2)
  const cancelled = await web.submit(
    `/dashboard/payouts/drafts/${bigId}/cancel`,
    {},
    `/dashboard/payouts/drafts/${bigId}`,
  )
  assert.equal(cancelled.status, 303)
  const draftApi = await m.client.request<{ status: string }>('GET', `/v1/payout-drafts/${bigId}`)
  assert.equal(draftApi.body.status, 'cancelled')

  const log = await auditText(web)
  for (const action of ['payout_draft.create', 'payout_draft.approve', 'payout_draft.cancel']) {
    assert.ok(log.includes(actionWords(action)), action)
  }
  assert.ok(log.includes(draftId))
})

test('roles, CSRF and tenancy: finance uploads and approves, support and viewer get 403, another merchant’s draft is 404', async (t) => {
  const h = await startTestApp(t)
  const m = await newDashboardMerchant(h)
  const other = await newDashboardMerchant(h, 'Başka Mağaza')
  await captureAndSettle(m, 50_000)
  const theirs = await other.client.request<{ draftId: string }>('POST', '/v1/payout-drafts', {
    body: {
      storeId: other.storeId,
      rows: [
        { rail: 'fast', dest: trIban('4444'), holderName: 'X', amountMinor: 100, currency: 'TRY' },
      ],
    },
  })
  assert.equal(theirs.status, 201, JSON.stringify(theirs.body))
  const fields = { storeId: m.storeId, csv: csv(GOOD) }

  const viewer = await memberWeb(h, m, 'viewer')
  const page = await viewer.get('/dashboard/payouts')
  assert.equal(page.status, 200)
  assert.doesNotMatch(page.text, /Toplu ödeme yükle/)
  assert.equal((await viewer.submit('/dashboard/payouts/drafts', fields, page)).status, 403)
  const support = await memberWeb(h, m, 'support')
  assert.equal(
    (await support.submit('/dashboard/payouts/drafts', fields, '/dashboard/payouts')).status,
    403,
  )
  const finance = await memberWeb(h, m, 'finance')
  assert.equal((await forged(finance, '/dashboard/payouts/drafts', fields)).status, 403)

  const foreignPath = `/dashboard/payouts/drafts/${theirs.body.draftId}`
  assert.equal((await finance.get(foreignPath)).status, 404)
  assert.equal(
    (await finance.submit(`${foreignPath}/approve`, {}, '/dashboard/payouts')).status,
    404,
  )
  assert.equal((await apiPayouts(other)).length, 0)
  const foreignStore = await finance.submit(
    '/dashboard/payouts/drafts',
    { ...fields, storeId: other.storeId },
    '/dashboard/payouts/drafts/new',
  )
  assert.equal(foreignStore.status, 404)

  const made = await finance.submit('/dashboard/payouts/drafts', fields, '/dashboard/payouts')
  assert.equal(made.status, 303)
  const approved = await finance.submit(`${made.location ?? ''}/approve`, {}, made.location ?? '')
  assert.equal(approved.status, 303)
  assert.equal((await apiPayouts(m)).length, 2)
})
