// Goal: reviews follow the payment's state machine (issue 36, finding 6; decision 0036): a
// payment held for review and captured directly closes its review as approved (by capture),
// voided directly as rejected (by void); approve and reject act only on an `authorized`
// payment, else 409 and nothing changes; a direct capture racing a reject ends consistent
// (captured + approved, or voided + rejected), never closed against the money.
// Method: signed HTTP requests against the real app (PGlite and PostgreSQL); the race as two
// requests at once, repeated.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { Kurus } from '../../sdk/index.ts'
import { startTestApp } from '../helpers/app.ts'
import { CARDS, charge } from '../helpers/payments.ts'
import { createRule, getPayment } from './_support.ts'

interface ReviewBody {
  id: string
  paymentId: string
  status: string
  closedReason: string | null
}

async function held(client: Kurus, amount: number) {
  const { res } = await charge(client, CARDS.frictionless, amount, { threeDSecure: false })
  assert.equal(res.status, 201, JSON.stringify(res.body))
  assert.equal(res.body.status, 'authorized')
  const list = await client.request<{ items: ReviewBody[] }>('GET', '/v1/reviews?status=open')
  const review = list.body.items.find((r) => r.paymentId === res.body.paymentId)
  assert.ok(review, 'a review opened')
  return { paymentId: res.body.paymentId, reviewId: review.id }
}

async function review(client: Kurus, id: string) {
  return (await client.request<ReviewBody>('GET', `/v1/reviews/${id}`)).body
}

test('a direct capture closes the review as approved; reject is then 409 and moves nothing', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  await createRule(m.client, 'review', { '>=': [{ var: 'amount' }, 50_000] })
  const p = await held(m.client, 60_000)
  const cap = await m.client.request('POST', `/v1/payments/${p.paymentId}/capture`, { body: {} })
  assert.equal(cap.status, 200, JSON.stringify(cap.body))
  const closed = await review(m.client, p.reviewId)
  assert.equal(closed.status, 'closed')
  assert.equal(closed.closedReason, 'approved')
  const row = await h.deps.db
    .selectFrom('risk_reviews')
    .select('closed_by')
    .where('id', '=', p.reviewId)
    .executeTakeFirstOrThrow()
  assert.equal(row.closed_by, 'capture')
  const reject = await m.client.request<{ code: string }>(
    'POST',
    `/v1/reviews/${p.reviewId}/reject`,
    { body: {} },
  )
  assert.equal(reject.status, 409)
  assert.equal((await getPayment(m.client, p.paymentId)).status, 'captured')
  assert.equal((await review(m.client, p.reviewId)).closedReason, 'approved')
})

test('a direct void closes the review as rejected; approve is then 409', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  await createRule(m.client, 'review', { '>=': [{ var: 'amount' }, 50_000] })
  const p = await held(m.client, 60_000)
  const voided = await m.client.request('POST', `/v1/payments/${p.paymentId}/void`, { body: {} })
  assert.equal(voided.status, 200, JSON.stringify(voided.body))
  const closed = await review(m.client, p.reviewId)
  assert.equal(closed.closedReason, 'rejected')
  const approve = await m.client.request('POST', `/v1/reviews/${p.reviewId}/approve`, { body: {} })
  assert.equal(approve.status, 409)
  assert.equal((await getPayment(m.client, p.paymentId)).status, 'voided')
  assert.equal((await review(m.client, p.reviewId)).closedReason, 'rejected')
})

test('a direct capture racing a reject: the review always agrees with the money', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  await createRule(m.client, 'review', { '>=': [{ var: 'amount' }, 50_000] })
  for (let round = 0; round < 4; round++) {
    const p = await held(m.client, 60_000 + round)
    await Promise.all([
      m.client.request('POST', `/v1/payments/${p.paymentId}/capture`, { body: {} }),
      m.client.request('POST', `/v1/reviews/${p.reviewId}/reject`, { body: {} }),
    ])
    const payment = await getPayment(m.client, p.paymentId)
    const r = await review(m.client, p.reviewId)
    assert.equal(r.status, 'closed', `round ${round}`)
    const expected = payment.status === 'captured' ? 'approved' : 'rejected'
    assert.ok(['captured', 'voided'].includes(payment.status), payment.status)
    assert.equal(r.closedReason, expected, `round ${round}: ${payment.status}`)
  }
})
