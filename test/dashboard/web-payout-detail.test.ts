// Goal: the payouts list links each payout to its page (amount, status, destination masked,
// the draft it came from, the status timeline), another merchant's payout (or no payout) is the
// 404 page; every draft is listed in keyset pages; an invoice's Activate (the link opens
// without an email) is the invoices module's activateInvoice as the API's, audited, refused to
// viewers (no button, forged POST 403) and to a form without its CSRF token.
// Method: the real app over HTTP, a cookie-jar client, the signed API to make and check data.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { startTestApp } from '../helpers/app.ts'
import { createInvoice, getInvoice } from '../invoices/_support.ts'
import { captureAndSettle, trIban } from '../payouts/_support.ts'
import { actionWords, auditText, forged, memberWeb } from './_sections.ts'
import {
  newDashboardMerchant,
  signedIn,
  tableText,
  textOf,
  type DashboardMerchant,
} from './_web.ts'

async function approvedPayout(m: DashboardMerchant, amountMinor: number) {
  const draft = await m.client.request<{ draftId: string }>('POST', '/v1/payout-drafts', {
    body: {
      storeId: m.storeId,
      rows: [
        {
          rail: 'fast',
          dest: trIban('1111'),
          holderName: 'Ayşe Yılmaz',
          amountMinor,
          currency: 'TRY',
        },
      ],
    },
  })
  assert.equal(draft.status, 201, JSON.stringify(draft.body))
  const approved = await m.client.request<{ payoutIds: string[] }>(
    'POST',
    `/v1/payout-drafts/${draft.body.draftId}/approve`,
    { body: {} },
  )
  assert.equal(approved.status, 200, JSON.stringify(approved.body))
  const [payoutId] = approved.body.payoutIds
  assert.ok(payoutId)
  return { draftId: draft.body.draftId, payoutId }
}

test('a payout’s page from the list; another merchant’s is 404; every draft in keyset pages', async (t) => {
  const h = await startTestApp(t)
  const m = await newDashboardMerchant(h)
  const other = await newDashboardMerchant(h, 'Başka Mağaza')
  await captureAndSettle(m, 100_000)
  await captureAndSettle(other, 100_000)
  const mine = await approvedPayout(m, 12_500)
  const theirs = await approvedPayout(other, 5_000)
  const web = await signedIn(h, m)

  const list = await web.get('/dashboard/payouts')
  assert.match(list.text, new RegExp(`href="/dashboard/payouts/${mine.payoutId}"`))
  assert.match(list.text, /href="\/dashboard\/payouts\/drafts"/)
  const page = await web.get(`/dashboard/payouts/${mine.payoutId}`)
  assert.equal(page.status, 200)
  assert.equal(textOf(page.text, 'payout-amount'), '₺125,00')
  assert.equal(textOf(page.text, 'payout-status'), 'Sırada')
  assert.match(page.text, new RegExp(`href="/dashboard/payouts/drafts/${mine.draftId}"`))
  assert.doesNotMatch(page.text, /TR\d{24}/, 'the IBAN is masked')
  const timeline = tableText(page.text, 'payout-timeline')
  assert.match(timeline, /Sırada · \d/)

  assert.equal((await web.get(`/dashboard/payouts/${theirs.payoutId}`)).status, 404)
  assert.equal((await web.get('/dashboard/payouts/not-a-payout')).status, 404)

  // 26 drafts: the drafts page shows 25, then the rest behind "next".
  for (let i = 0; i < 25; i++) {
    const res = await m.client.request('POST', '/v1/payout-drafts', {
      body: {
        storeId: m.storeId,
        rows: [
          {
            rail: 'eft',
            dest: trIban('2222'),
            holderName: 'Ali Veli',
            amountMinor: 100 + i,
            currency: 'TRY',
          },
        ],
      },
    })
    assert.equal(res.status, 201)
  }
  const drafts = await web.get('/dashboard/payouts/drafts')
  assert.equal(drafts.status, 200)
  const firstRows = (tableText(drafts.text, 'drafts-table').match(/\/ 1/g) ?? []).length
  assert.equal(firstRows, 25)
  const next = /href="(\/dashboard\/payouts\/drafts\?after=[^"]+)"/.exec(drafts.text)?.[1]
  assert.ok(next, 'a next-page link')
  const second = await web.get(next.replace(/&amp;/g, '&'))
  assert.equal(second.status, 200)
  assert.match(second.text, new RegExp(`href="/dashboard/payouts/drafts/${mine.draftId}"`))
  assert.doesNotMatch(second.text, new RegExp(theirs.draftId))
})

test('invoice: Activate opens the link without email; viewer refused; CSRF refused', async (t) => {
  const h = await startTestApp(t)
  const m = await newDashboardMerchant(h)
  const first = await createInvoice(m)
  const second = await createInvoice(m)
  const path = `/dashboard/invoices/${first.id}`

  const viewer = await memberWeb(h, m, 'viewer')
  const seen = await viewer.get(path)
  assert.doesNotMatch(seen.text, /\/activate"/)
  assert.equal((await viewer.submit(`${path}/activate`, {}, seen)).status, 403)
  const web = await signedIn(h, m)
  assert.equal((await forged(web, `${path}/activate`)).status, 403)
  assert.equal((await getInvoice(m, first.id)).status, 'draft')

  const page = await web.get(path)
  assert.match(page.text, /E-postasız etkinleştir/)
  const done = await web.submit(`${path}/activate`, {}, page)
  assert.equal(done.status, 303)
  assert.equal((await getInvoice(m, first.id)).status, 'activated')
  const after = await web.get(path)
  assert.match(after.text, /role="status"[\s\S]*Fatura etkinleştirildi/)
  assert.doesNotMatch(after.text, /\/activate"/)
  assert.equal((await getInvoice(m, second.id)).status, 'draft')
  assert.ok((await auditText(web)).includes(actionWords('invoice.activate')))
})
