// Goal: the SDK's risk methods reach the routes of CONTRACT.md "Risk" with the right shapes
// (lists, rules, backtest, reviews). Method: the typed client against the real app.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { startTestApp } from '../helpers/app.ts'
import { CARDS, charge } from '../helpers/payments.ts'

test('the SDK manages lists, rules, backtests and reviews', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const c = m.client
  const item = await c.addRiskListItem('email', 'Fraud@Example.com', 'seen twice')
  assert.equal(item.value, 'fraud@example.com')
  assert.deepEqual(
    (await c.listRiskListItems('email')).items.map((i) => i.id),
    [item.id],
  )
  await c.removeRiskListItem('email', item.id)
  assert.equal((await c.listRiskListItems('email', { limit: 5 })).items.length, 0)

  const rule = await c.createRiskRule({
    name: 'big',
    action: 'review',
    condition: { '>=': [{ var: 'amount' }, 10_000] },
  })
  assert.equal(rule.enabled, true)
  assert.equal((await c.getRiskRule(rule.id)).name, 'big')
  assert.equal((await c.updateRiskRule(rule.id, { name: 'bigger' })).name, 'bigger')
  assert.deepEqual(
    (await c.listRiskRules()).items.map((r) => r.id),
    [rule.id],
  )

  const { res } = await charge(c, CARDS.frictionless, 15_000)
  assert.equal(res.body.status, 'authorized')
  const payment = await c.getPayment(res.body.paymentId)
  assert.equal(payment.risk?.decision, 'review')
  assert.ok(payment.card?.fingerprint)
  const [review] = (await c.listReviews({ status: 'open' })).items
  assert.ok(review)
  assert.equal((await c.getReview(review.id)).paymentId, res.body.paymentId)
  const approved = await c.approveReview(review.id)
  assert.equal(approved.paymentStatus, 'captured')

  const bt = await c.backtestRiskRule({ '>=': [{ var: 'amount' }, 10_000] })
  assert.deepEqual(bt, {
    evaluated: 1,
    matched: 1,
    matchedAmount: 15_000,
    samplePaymentIds: [res.body.paymentId],
  })
  await c.deleteRiskRule(rule.id)
  const second = await charge(c, CARDS.frictionless, 15_000)
  assert.equal(second.res.body.status, 'captured')
  await assert.rejects(() => c.rejectReview(review.id), /review is already closed/)
})
