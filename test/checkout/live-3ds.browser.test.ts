// Goal: the hosted checkout takes a payment in live (issue 39): 3-D Secure at the bank's own
// 3D gate — our page posts the bank's signed form there by our own script under the CSP, the
// bank posts back to Kuruş, the payment is authorized once at the same POS and the buyer
// lands on the merchant's returnUrl with `captured`. The sandbox ACS is never involved.
// Method: playwright-core driving Debian's chromium against a live app whose İşbank URLs are
// an EST simulator's (test/helpers/live-bank.ts); the returnUrl is a tiny local server.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { payOnHostedCheckout } from '../helpers/hosted-checkout.ts'
import { startLiveTestApp } from '../helpers/live-bank.ts'

test('live: the hosted checkout pays with 3-D Secure through the bank POS (EST simulator)', async (t) => {
  const h = await startLiveTestApp(t)
  const m = await h.newMerchant({ kycStatus: 'approved', name: 'Ege Zeytin' })
  const { back, posts, problems } = await payOnHostedCheckout(t, h.url, m, 7_450)
  assert.equal(back['status'], 'captured', JSON.stringify(back))
  assert.deepEqual(problems, [])
  // The card went to the bank's gate (by our script), the bank's answer came back to us.
  const gate = new URL(h.bank.threeDGate)
  assert.ok(posts.includes(gate.origin + gate.pathname), posts.join(', '))
  assert.ok(
    posts.some((p) => p.endsWith(`/3ds/${back['paymentId']}/bank`)),
    posts.join(', '),
  )
  const payment = await m.client.request<Record<string, unknown>>(
    'GET',
    `/v1/payments/${back['paymentId']}`,
  )
  assert.equal(payment.body['status'], 'captured')
  assert.equal(h.bank.authorizations(), 1)
  assert.equal(h.bank.orders.get(back['paymentId'] ?? '')?.amount, 7_450)
  const acs = await h.deps.db.selectFrom('acquirer_sandbox_3ds').select('payment_id').execute()
  assert.equal(acs.length, 0)
})
