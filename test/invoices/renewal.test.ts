// Goal: createPaidRenewalInvoice (for subscriptions with generateInvoices) makes a paid
// invoice with one line, the payment and the cycle, once per cycle even when called twice
// (concurrently: races.pg.test.ts); and the payments module's cancelSession (used when an invoice closes) moves
// only an active session of the caller's merchant. Method: the exported functions over the
// test app's deps; reads through the signed API.
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { test } from 'node:test'
import { createPaidRenewalInvoice } from '../../src/modules/invoices/index.ts'
import { cancelSession } from '../../src/modules/payments/index.ts'
import { startTestApp } from '../helpers/app.ts'
import { CARDS, openSession } from '../helpers/payments.ts'
import { eventTypes, getInvoice, payByCard, sessionStatus } from './_support.ts'

test('a renewal invoice is created paid, with one line, the payment and the cycle', async (t) => {
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
    paymentId: 'pay_renewal0000000000000001',
    subscriptionId: 'sub_renewal000000000000001',
    cycleNumber: 3,
  }
  const invoice = await createPaidRenewalInvoice(h.deps, input)
  assert.equal(invoice.status, 'paid')
  assert.ok(invoice.paidAt)
  assert.equal(invoice.amountMinor, 14_900)
  assert.deepEqual(invoice.lineItems, [
    { name: 'Premium üyelik (aylık)', qty: 1, unitPriceMinor: 14_900, lineTotalMinor: 14_900 },
  ])
  assert.equal(invoice.paymentId, input.paymentId)
  assert.equal(invoice.subscriptionId, input.subscriptionId)
  assert.equal(invoice.cycleNumber, 3)
  assert.equal(invoice.buyerEmail, 'mehmet@example.com')
  assert.equal(invoice.buyerName, 'Mehmet Öz')

  const viaApi = await getInvoice(m, invoice.id)
  assert.equal(viaApi.status, 'paid')
  assert.equal(viaApi.subscriptionId, input.subscriptionId)
  assert.deepEqual(await eventTypes(h, m.merchantId, invoice.id), [
    'invoice.created',
    'invoice.paid',
  ])
  // Paid is terminal.
  const cancel = await m.client.request('POST', `/v1/invoices/${invoice.id}/cancel`, { body: {} })
  assert.equal(cancel.status, 409)

  // Once per cycle: a repeat returns the same invoice (two at once: races.pg.test.ts).
  const again = await createPaidRenewalInvoice(h.deps, input)
  assert.equal(again.id, invoice.id)
  const rows = await h.deps.db
    .selectFrom('invoices')
    .select('id')
    .where('subscription_id', '=', input.subscriptionId)
    .execute()
  assert.equal(rows.length, 1)
})

test('a renewal invoice for a deleted customer still comes out, without buyer details', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const invoice = await createPaidRenewalInvoice(h.deps, {
    merchantId: m.merchantId,
    storeId: m.storeId,
    customerId: 'cus_gone',
    amountMinor: 500,
    description: '',
    paymentId: 'pay_x',
    subscriptionId: 'sub_gone',
    cycleNumber: 1,
  })
  assert.equal(invoice.status, 'paid')
  assert.equal(invoice.buyerEmail, null)
  assert.equal(invoice.lineItems[0]?.name, 'sub_gone #1')
})

test('cancelSession: active → cancelled; ended sessions unchanged; other merchants 404', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const other = await h.newMerchant()
  const open = await openSession(m.client, 5_000)
  const cancelled = await cancelSession(h.deps, m.merchantId, open.sessionId)
  assert.equal(cancelled.status, 'cancelled')
  assert.equal(await sessionStatus(h, open.sessionId), 'cancelled')
  assert.equal((await cancelSession(h.deps, m.merchantId, open.sessionId)).status, 'cancelled')

  const paid = await openSession(m.client, 5_000)
  const charged = await payByCard(h, paid.sessionId, CARDS.frictionless)
  assert.equal(charged.status, 201, charged.text)
  assert.equal((await cancelSession(h.deps, m.merchantId, paid.sessionId)).status, 'completed')

  const foreign = await openSession(m.client, 5_000)
  await assert.rejects(cancelSession(h.deps, other.merchantId, foreign.sessionId), {
    code: 'SVC-RES-3301',
  })
  assert.equal(await sessionStatus(h, foreign.sessionId), 'active')
})
