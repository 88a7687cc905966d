// Goal: the review queue (CONTRACT.md "Risk"): approve captures (ledger legs posted, the
// payment captured), or leaves the authorization when the charge did not ask for capture;
// reject voids (no legs); the authorization's expiry closes the review as `expired`; each
// posts review.opened / review.closed; a closed review cannot be closed another way.
// Method: signed HTTP requests against the real app; the test clock is moved past the
// authorization TTL and the sandbox reconcile route runs the reconcilers.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { eventsForResource } from '../../src/modules/events/index.ts'
import { legsForPayment } from '../../src/modules/ledger/index.ts'
import type { Kurus } from '../../sdk/index.ts'
import { startTestApp } from '../helpers/app.ts'
import { CARDS, charge } from '../helpers/payments.ts'
import { createRule, getPayment } from './_support.ts'

interface ReviewBody {
  id: string
  paymentId: string
  status: string
  closedReason: string | null
  reasons: string[]
  paymentStatus?: string
  closedAt: string | null
}

async function reviewed(client: Kurus, amount: number, body: Record<string, unknown> = {}) {
  const { res } = await charge(client, CARDS.frictionless, amount, body)
  assert.equal(res.status, 201, JSON.stringify(res.body))
  assert.equal(res.body.status, 'authorized')
  const list = await client.request<{ items: ReviewBody[] }>('GET', '/v1/reviews?status=open')
  const review = list.body.items.find((r) => r.paymentId === res.body.paymentId)
  assert.ok(review, 'a review opened')
  return review
}

function sums(legs: { direction: string; amount: number }[]) {
  return {
    debit: legs.filter((l) => l.direction === 'DEBIT').reduce((s, l) => s + l.amount, 0),
    credit: legs.filter((l) => l.direction === 'CREDIT').reduce((s, l) => s + l.amount, 0),
  }
}

test('approve captures the held payment and posts its legs; review.opened and review.closed', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const rule = await createRule(m.client, 'review', { '>=': [{ var: 'amount' }, 10_000] })
  const review = await reviewed(m.client, 12_345)
  assert.match(review.id, /^rev_[0-9a-z]{24}$/)
  assert.ok(review.reasons.includes(`rule:${rule}:review`))
  assert.deepEqual(await legsForPayment(h.deps.db, m.merchantId, review.paymentId), [])

  const approved = await m.client.request<ReviewBody>('POST', `/v1/reviews/${review.id}/approve`, {
    body: {},
  })
  assert.equal(approved.status, 200, JSON.stringify(approved.body))
  assert.equal(approved.body.status, 'closed')
  assert.equal(approved.body.closedReason, 'approved')
  assert.equal(approved.body.paymentStatus, 'captured')
  const p = await getPayment(m.client, review.paymentId)
  assert.equal(p.status, 'captured')
  assert.equal(p.capturedAmount, 12_345)
  assert.deepEqual(sums(await legsForPayment(h.deps.db, m.merchantId, p.id)), {
    debit: 12_345,
    credit: 12_345,
  })
  const events = await eventsForResource(h.deps.db, m.merchantId, review.id)
  assert.deepEqual(
    events.map((e) => e.type),
    ['review.opened', 'review.closed'],
  )
  // Approving again answers the closed review; rejecting it now is refused.
  const again = await m.client.request<ReviewBody>('POST', `/v1/reviews/${review.id}/approve`, {
    body: {},
  })
  assert.equal(again.status, 200)
  const reject = await m.client.request<{ code: string }>(
    'POST',
    `/v1/reviews/${review.id}/reject`,
    {
      body: {},
    },
  )
  assert.equal(reject.status, 409)
  assert.equal(reject.body.code, 'SVC-STATE-3401')
  const closed = await m.client.request<{ items: ReviewBody[] }>('GET', '/v1/reviews?status=closed')
  assert.deepEqual(
    closed.body.items.map((r) => r.id),
    [review.id],
  )
  const other = await h.newMerchant()
  const foreign = await other.client.request('GET', `/v1/reviews/${review.id}`)
  assert.equal(foreign.status, 404)
})

test('approve of a charge that did not ask for capture leaves it authorized', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  await createRule(m.client, 'review', { '>=': [{ var: 'amount' }, 10_000] })
  const review = await reviewed(m.client, 10_000, { capture: false })
  const approved = await m.client.request<ReviewBody>('POST', `/v1/reviews/${review.id}/approve`, {
    body: {},
  })
  assert.equal(approved.status, 200)
  assert.equal(approved.body.paymentStatus, 'authorized')
  assert.deepEqual(await legsForPayment(h.deps.db, m.merchantId, review.paymentId), [])
})

test('reject voids the authorization: no legs, the review closed as rejected', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  await createRule(m.client, 'review', { '>=': [{ var: 'amount' }, 10_000] })
  const review = await reviewed(m.client, 50_000)
  const rejected = await m.client.request<ReviewBody>('POST', `/v1/reviews/${review.id}/reject`, {
    body: {},
  })
  assert.equal(rejected.status, 200, JSON.stringify(rejected.body))
  assert.equal(rejected.body.closedReason, 'rejected')
  assert.equal(rejected.body.paymentStatus, 'voided')
  const p = await getPayment(m.client, review.paymentId)
  assert.equal(p.status, 'voided')
  assert.deepEqual(await legsForPayment(h.deps.db, m.merchantId, p.id), [])
  const approve = await m.client.request('POST', `/v1/reviews/${review.id}/approve`, { body: {} })
  assert.equal(approve.status, 409)
})

test('the expiry of the authorization closes the review as expired', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  await createRule(m.client, 'review', { '>=': [{ var: 'amount' }, 10_000] })
  const review = await reviewed(m.client, 30_000)
  const reconcile = async () => {
    const res = await m.client.request('POST', '/v1/sandbox/reconcile', { body: {} })
    assert.equal(res.status, 200)
  }
  await reconcile()
  assert.equal(
    (await m.client.request<ReviewBody>('GET', `/v1/reviews/${review.id}`)).body.status,
    'open',
  )
  h.clock.advance(h.config.authorizationTtlMs + 60_000)
  await reconcile()
  const got = await m.client.request<ReviewBody>('GET', `/v1/reviews/${review.id}`)
  assert.equal(got.body.status, 'closed')
  assert.equal(got.body.closedReason, 'expired')
  assert.ok(got.body.closedAt)
  const p = await getPayment(m.client, review.paymentId)
  assert.equal(p.status, 'voided')
  assert.deepEqual(await legsForPayment(h.deps.db, m.merchantId, p.id), [])
  const events = await eventsForResource(h.deps.db, m.merchantId, review.id)
  assert.deepEqual(
    events.map((e) => e.type),
    ['review.opened', 'review.closed'],
  )
  const approve = await m.client.request('POST', `/v1/reviews/${review.id}/approve`, { body: {} })
  assert.equal(approve.status, 409)
})
