// Goal: the hosted checkout applies the merchant's risk decisions (CONTRACT.md "Risk"): a
// listed IP (the buyer's own, as the page sees it) or a block rule declines the payment
// with a plain decline (402 SVC-PAY-3501, declineCode `declined`: no hint of the rule),
// while the merchant sees it failed with failureCode blocked; require_3ds forces the
// challenge; a review holds the payment at authorized. Method: unsigned requests as the
// buyer's browser makes them, signed ones as the merchant.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { startTestApp } from '../helpers/app.ts'
import { CARDS } from '../helpers/payments.ts'
import { browser, buyerCard, createSession } from '../checkout/_support.ts'
import { addItem, createRule, getPayment } from './_support.ts'

test('a block on the hosted page reads as a plain decline; the merchant sees why', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  // The test's requests come from the loopback address: the page's `ip` fact.
  await addItem(m.client, 'ip', '127.0.0.1')
  const { sessionId } = await createSession(m.client, { amount: 5000 })
  const pay = await browser(h, 'POST', `/v1/public/sessions/${sessionId}/pay`, {
    json: { card: buyerCard(CARDS.frictionless) },
  })
  assert.equal(pay.status, 402, pay.text)
  assert.equal(pay.body['code'], 'SVC-PAY-3501')
  assert.equal(pay.body['declineCode'], 'declined')
  assert.equal(pay.body['message'], 'card declined')
  assert.equal(pay.text.includes('risk'), false)
  assert.equal(pay.text.includes('list'), false)
  const p = await getPayment(m.client, String(pay.body['paymentId']))
  assert.equal(p.status, 'failed')
  assert.equal(p.failureCode, 'blocked')
  assert.deepEqual(p.risk?.reasons.slice(0, 1), ['list:ip'])
})

test('rules on the hosted page: require_3ds challenges, review holds at authorized', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  await createRule(m.client, 'require_3ds', { '==': [{ var: 'amount' }, 7000] })
  await createRule(m.client, 'review', { '==': [{ var: 'amount' }, 8000] })
  const challenged = await createSession(m.client, { amount: 7000 })
  const a = await browser(h, 'POST', `/v1/public/sessions/${challenged.sessionId}/pay`, {
    json: { card: buyerCard(CARDS.frictionless) },
  })
  assert.equal(a.status, 201, a.text)
  assert.equal(a.body['status'], 'pending_3ds')
  assert.ok(a.body['challengeUrl'])
  const held = await createSession(m.client, { amount: 8000 })
  const b = await browser(h, 'POST', `/v1/public/sessions/${held.sessionId}/pay`, {
    json: { card: buyerCard(CARDS.frictionless) },
  })
  assert.equal(b.status, 201, b.text)
  assert.equal(b.body['status'], 'authorized')
  const p = await getPayment(m.client, String(b.body['paymentId']))
  assert.equal(p.risk?.decision, 'review')
  assert.equal(p.capturedAmount, 0)
})
