// Goal: the review queue's pages act through the risk module as the API does: the queue lists
// open reviews (closed ones behind the filter, keyset pages), a review's page shows the
// payment, the decision, the score, its signals, the facts and the rule that fired by name;
// Approve and Reject each ask for a confirmation first (nothing changes until confirmed),
// then capture / void what the API then reports, audited; a closed review offers no action
// and a forged decision is refused with its reason; only owners and admins decide (finance,
// support, viewer: no buttons, forged POST 403); no CSRF token changes nothing; another
// merchant's review is the 404 page. The payment's own page shows the same risk panel, and the
// overview the number of open reviews.
// Method: the real app over HTTP, a cookie-jar client, the signed API to make and check data.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { startTestApp } from '../helpers/app.ts'
import { createRule } from '../risk/_support.ts'
import { actionWords, auditText, forged, memberWeb } from './_sections.ts'
import {
  alertOf,
  apiPayment,
  blockText,
  h1Count,
  newDashboardMerchant,
  paidPayment,
  signedIn,
  tableText,
  textOf,
  type DashboardMerchant,
} from './_web.ts'

interface ReviewBody {
  id: string
  paymentId: string
  status: string
  closedReason: string | null
}

/** A charge a `review` rule holds at authorized; its open review. */
async function held(m: DashboardMerchant, amount: number) {
  const { paymentId } = await paidPayment(m, amount)
  const list = await m.client.request<{ items: ReviewBody[] }>('GET', '/v1/reviews?status=open')
  const review = list.body.items.find((r) => r.paymentId === paymentId)
  assert.ok(review, 'a review opened')
  return { paymentId, reviewId: review.id }
}

async function apiReview(m: DashboardMerchant, id: string) {
  const res = await m.client.request<ReviewBody>('GET', `/v1/reviews/${id}`)
  assert.equal(res.status, 200)
  return res.body
}

test('the queue, a review with its risk panel; approve captures and reject voids, after a confirmation', async (t) => {
  const h = await startTestApp(t)
  const m = await newDashboardMerchant(h)
  await createRule(m.client, 'review', { '>=': [{ var: 'amount' }, 10_000] }, 'Büyük tutar')
  const first = await held(m, 12_345)
  const second = await held(m, 20_000)
  const web = await signedIn(h, m)
  const overview = await web.get('/dashboard')
  assert.match(blockText(overview.text, 'reviews', 'li'), /Bekleyen incelemeler 2$/)

  const list = await web.get('/dashboard/reviews')
  assert.equal(list.status, 200)
  assert.equal(h1Count(list.text), 1)
  const rows = tableText(list.text, 'reviews-table')
  assert.ok(rows.includes('₺123,45') && rows.includes('₺200,00'), rows)
  assert.match(list.text, new RegExp(`href="/dashboard/reviews/${first.reviewId}"`))

  const detail = await web.get(`/dashboard/reviews/${first.reviewId}`)
  assert.equal(detail.status, 200)
  assert.equal(textOf(detail.text, 'review-status'), 'Açık')
  assert.equal(textOf(detail.text, 'risk-decision'), 'İncelemeye alındı')
  assert.match(blockText(detail.text, 'risk-rules', 'div'), /Büyük tutar · İncelemeye al/)
  assert.match(detail.text, /href="\/dashboard\/risk\/rules\/rule_\w+"/)
  assert.match(detail.text, new RegExp(`href="/dashboard/payments/${first.paymentId}"`))
  assert.ok(tableText(detail.text, 'risk-facts').includes('₺123,45'), 'the amount fact')
  assert.ok(tableText(detail.text, 'risk-signals').includes('no_customer'), 'a guest charge')
  const score = (await apiPayment(m, first.paymentId))['risk'] as { score: number }
  assert.equal(textOf(detail.text, 'risk-score'), String(score.score))

  // The first POST asks; nothing has changed yet.
  const ask = await web.submit(`/dashboard/reviews/${first.reviewId}/approve`, {}, detail)
  assert.equal(ask.status, 200)
  assert.match(textOf(ask.text, 'confirm-text') ?? '', /₺123,45 tahsil edilecek/)
  assert.equal((await apiReview(m, first.reviewId)).status, 'open')
  const approved = await web.submit(
    `/dashboard/reviews/${first.reviewId}/approve`,
    { confirm: 'yes' },
    ask,
  )
  assert.equal(approved.status, 303)
  const after = await web.get(approved.location ?? '')
  assert.match(after.text, /role="status"[\s\S]*İnceleme onaylandı/)
  assert.equal(textOf(after.text, 'review-status'), 'Onaylandı')
  assert.doesNotMatch(after.text, /\/approve"/)
  assert.equal((await apiPayment(m, first.paymentId))['status'], 'captured')
  assert.equal((await apiReview(m, first.reviewId)).closedReason, 'approved')

  // A closed review refuses another decision with its reason, and nothing changes.
  const again = await web.submit(
    `/dashboard/reviews/${first.reviewId}/reject`,
    { confirm: 'yes' },
    after,
  )
  assert.equal(again.status, 409)
  assert.match(alertOf(again.text) ?? '', /zaten kapatılmış/)
  assert.equal((await apiPayment(m, first.paymentId))['status'], 'captured')

  const rejectPage = await web.get(`/dashboard/reviews/${second.reviewId}`)
  const askReject = await web.submit(`/dashboard/reviews/${second.reviewId}/reject`, {}, rejectPage)
  assert.match(textOf(askReject.text, 'confirm-text') ?? '', /provizyon iptal edilecek/)
  const rejected = await web.submit(
    `/dashboard/reviews/${second.reviewId}/reject`,
    { confirm: 'yes' },
    askReject,
  )
  assert.equal(rejected.status, 303)
  assert.equal((await apiPayment(m, second.paymentId))['status'], 'voided')
  assert.equal((await apiReview(m, second.reviewId)).closedReason, 'rejected')

  const open = await web.get('/dashboard/reviews')
  assert.match(open.text, /Bekleyen inceleme yok/)
  const emptied = await web.get('/dashboard')
  assert.match(blockText(emptied.text, 'reviews', 'li'), /Bekleyen incelemeler 0$/)
  const closed = await web.get('/dashboard/reviews?status=closed')
  const closedRows = tableText(closed.text, 'reviews-table')
  assert.ok(closedRows.includes('Onaylandı') && closedRows.includes('Reddedildi'), closedRows)

  // The payment's own page shows the same risk panel.
  const payment = await web.get(`/dashboard/payments/${second.paymentId}`)
  assert.equal(textOf(payment.text, 'risk-decision'), 'İncelemeye alındı')
  assert.match(blockText(payment.text, 'risk-rules', 'div'), /Büyük tutar/)

  const log = await auditText(web)
  assert.ok(
    log.includes(actionWords('review.approve')) && log.includes(actionWords('review.reject')),
    log,
  )
  assert.ok(log.includes(first.reviewId) && log.includes(second.reviewId))
})

test('keyset pages of the queue', async (t) => {
  const h = await startTestApp(t)
  const m = await newDashboardMerchant(h)
  await createRule(m.client, 'review', { '>=': [{ var: 'amount' }, 100] })
  for (let i = 0; i < 26; i++) await paidPayment(m, 1_000 + i)
  const web = await signedIn(h, m)
  const first = await web.get('/dashboard/reviews')
  const next =
    /href="(\/dashboard\/reviews\?status=&amp;after=[^"]+|\/dashboard\/reviews\?after=[^"]+)"/.exec(
      first.text,
    )?.[1]
  assert.ok(next, 'a next-page link')
  const second = await web.get(next.replace(/&amp;/g, '&'))
  assert.equal(second.status, 200)
  const rows = tableText(second.text, 'reviews-table')
  assert.ok(rows.includes('₺10,00'), `the oldest review on the second page: ${rows}`)
  assert.ok(!tableText(first.text, 'reviews-table').includes('₺10,00'))
})

test('roles, CSRF and tenancy: only owners and admins decide; another merchant’s review is 404', async (t) => {
  const h = await startTestApp(t)
  const m = await newDashboardMerchant(h)
  const other = await newDashboardMerchant(h, 'Başka Mağaza')
  await createRule(m.client, 'review', { '>=': [{ var: 'amount' }, 100] })
  await createRule(other.client, 'review', { '>=': [{ var: 'amount' }, 100] })
  const mine = await held(m, 5_000)
  const theirs = await held(other, 5_000)
  const path = `/dashboard/reviews/${mine.reviewId}/approve`

  for (const role of ['finance', 'support', 'viewer']) {
    const member = await memberWeb(h, m, role)
    const page = await member.get(`/dashboard/reviews/${mine.reviewId}`)
    assert.equal(page.status, 200)
    assert.doesNotMatch(page.text, /\/approve"|\/reject"/, `${role}: no buttons`)
    assert.equal((await member.submit(path, { confirm: 'yes' }, page)).status, 403, role)
  }
  const admin = await memberWeb(h, m, 'admin')
  assert.equal((await forged(admin, path, { confirm: 'yes' })).status, 403)
  assert.equal((await apiReview(m, mine.reviewId)).status, 'open')

  assert.equal((await admin.get(`/dashboard/reviews/${theirs.reviewId}`)).status, 404)
  const foreign = await admin.submit(
    `/dashboard/reviews/${theirs.reviewId}/reject`,
    { confirm: 'yes' },
    '/dashboard/reviews',
  )
  assert.equal(foreign.status, 404)
  assert.equal((await apiReview(other, theirs.reviewId)).status, 'open')
  assert.doesNotMatch((await admin.get('/dashboard/reviews')).text, new RegExp(theirs.reviewId))

  const done = await admin.submit(path, { confirm: 'yes' }, '/dashboard/reviews')
  assert.equal(done.status, 303)
  assert.equal((await apiReview(m, mine.reviewId)).closedReason, 'approved')
})
