// Goal: invoice work racing itself stays single — five buyers pressing Pay at once share one
// checkout session, and two renewal invoices made at once for one subscription cycle are one.
// Method: the public pay endpoint hit five times at once; createPaidRenewalInvoice called twice
// at once over the app's deps. On PostgreSQL these run in parallel transactions, hence
// *.pg.test.ts (docs/testing.md).
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { test } from 'node:test'
import { createPaidRenewalInvoice } from '../../src/modules/invoices/index.ts'
import { startTestApp } from '../helpers/app.ts'
import { activatedInvoice, publicPay } from './_support.ts'

test('concurrent pays share one session', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const invoice = await activatedInvoice(m)
  const results = await Promise.all(
    Array.from({ length: 5 }, () => publicPay(h, invoice.publicHash)),
  )
  const ids = new Set(results.map((r) => r.body.sessionId))
  assert.deepEqual(
    results.map((r) => r.status),
    [200, 200, 200, 200, 200],
  )
  assert.equal(ids.size, 1)
  const sessions = await h.deps.db
    .selectFrom('payment_sessions')
    .select('transaction_id')
    .where('merchant_id', '=', m.merchantId)
    .execute()
  assert.deepEqual(
    sessions.map((s) => s.transaction_id),
    [`${invoice.id}:1`],
  )
})

test('two renewal invoices made at once for one cycle are one invoice', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const customer = await m.client.request<{ id: string }>('POST', '/v1/customers', {
    body: { externalId: `ext-${randomUUID()}`, email: 'mehmet@example.com', name: 'Mehmet Öz' },
  })
  const input = {
    merchantId: m.merchantId,
    storeId: m.storeId,
    customerId: customer.body.id,
    amountMinor: 14_900,
    description: 'Premium üyelik (aylık)',
    paymentId: 'pay_renewal0000000000000002',
    subscriptionId: 'sub_renewal000000000000002',
    cycleNumber: 4,
  }
  const racing = await Promise.all([
    createPaidRenewalInvoice(h.deps, input),
    createPaidRenewalInvoice(h.deps, input),
  ])
  assert.equal(racing[0].id, racing[1].id)
  assert.equal(racing[0].status, 'paid')
  const rows = await h.deps.db
    .selectFrom('invoices')
    .select('id')
    .where('subscription_id', '=', input.subscriptionId)
    .execute()
  assert.equal(rows.length, 1)
})
