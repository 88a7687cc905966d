// Goal: merchant metadata as CONTRACT.md "Payments, later phase" names it: on card charges,
// sessions (copied to the payment), subscriptions (copied to each renewal payment),
// invoices, refunds and payouts; the limits (50 keys, 40-character keys, 500-character
// values) refused with details naming metadata.<key>; returned on each resource and in the
// webhook data; merged by PATCH /v1/payments/{id} ("" removes a key); and the
// /v1/transactions?metadata.<key>=<value> filter. Method: signed HTTP against the real
// database; events are read back from the outbox.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { eventsForResource } from '../../src/modules/events/index.ts'
import type { Kurus } from '../../sdk/index.ts'
import { startTestApp, type TestMerchant } from '../helpers/app.ts'
import { CARDS, charge, openSession, tokenize } from '../helpers/payments.ts'
import { createInvoice, getInvoice } from '../invoices/_support.ts'
import { captureAndSettle, newSubmerchant } from '../payouts/_support.ts'
import {
  createSubscription,
  customerWithCard,
  paymentsOfCycle,
  reconcile,
} from '../subscriptions/_support.ts'

interface ErrorBody {
  code: string
  details?: { field: string; reason: string }[]
}

type WithMetadata = { metadata: Record<string, string> } & Record<string, unknown>

const LONG_KEY = 'k'.repeat(41)
const LONG_VALUE = 'v'.repeat(501)

function manyKeys(n: number): Record<string, string> {
  return Object.fromEntries(Array.from({ length: n }, (_, i) => [`key${i}`, `value ${i}`]))
}

/** The three limits, each a 400 SVC-VAL-3001 whose details name the offending key. */
async function assertLimits(
  send: (metadata: Record<string, string>) => Promise<{ status: number; body: unknown }>,
  what: string,
) {
  const cases: [Record<string, string>, string][] = [
    [manyKeys(51), 'metadata'],
    [{ [LONG_KEY]: 'x' }, `metadata.${LONG_KEY}`],
    [{ orderId: LONG_VALUE }, 'metadata.orderId'],
  ]
  for (const [metadata, field] of cases) {
    const res = await send(metadata)
    const body = res.body as ErrorBody
    assert.equal(res.status, 400, `${what} ${field}: ${JSON.stringify(body)}`)
    assert.equal(body.code, 'SVC-VAL-3001')
    assert.ok(
      body.details?.some((d) => d.field === field),
      `${what}: details ${JSON.stringify(body.details)} name ${field}`,
    )
  }
  // At the limits exactly: accepted.
  const edge = { ...manyKeys(49), ['k'.repeat(40)]: 'v'.repeat(500) }
  const ok = await send(edge)
  assert.ok(ok.status < 300, `${what} at the limits: ${JSON.stringify(ok.body)}`)
}

async function chargeWith(client: Kurus, metadata: Record<string, string>, sessionMetadata = {}) {
  const { transactionId } = await openSession(client, 5_000, { metadata: sessionMetadata })
  const cardToken = await tokenize(client, CARDS.frictionless)
  return client.request<WithMetadata & { paymentId: string }>('POST', '/v1/payments/card', {
    body: { transactionId, amount: 5_000, currency: 'TRY', cardToken, metadata },
  })
}

test('card charges: limits, merge with the session, returned and in the webhook data', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  await assertLimits((metadata) => chargeWith(m.client, metadata), 'charge')
  await assertLimits(
    (metadata) =>
      m.client.request('POST', '/v1/payments/sessions', {
        body: {
          transactionId: `ord-${Math.random()}`,
          amount: 1_000,
          currency: 'TRY',
          returnUrl: 'https://shop.example/r',
          metadata,
        },
      }),
    'session',
  )

  const res = await chargeWith(
    m.client,
    { orderId: 'SIP-1001', channel: 'instagram' },
    {
      orderId: 'from-session',
      cart: 'c-9',
    },
  )
  assert.equal(res.status, 201, JSON.stringify(res.body))
  const id = res.body.paymentId
  const expected = { orderId: 'SIP-1001', channel: 'instagram', cart: 'c-9' }
  assert.deepEqual(res.body.metadata, expected)
  const got = await m.client.request<WithMetadata>('GET', `/v1/payments/${id}`)
  assert.deepEqual(got.body.metadata, expected)
  const captured = (await eventsForResource(h.deps.db, m.merchantId, id)).find(
    (e) => e.type === 'payment.captured',
  )
  assert.deepEqual(captured?.data['metadata'], expected)

  // A merge past 50 keys (session 30 + charge 30) is refused as well.
  const over = await chargeWith(
    m.client,
    manyKeys(30),
    Object.fromEntries(Object.entries(manyKeys(60)).slice(30)),
  )
  assert.equal(over.status, 400)
  assert.equal((over.body as unknown as ErrorBody).details?.[0]?.field, 'metadata')
})

test('PATCH /v1/payments/{id} merges, "" removes, limits hold on the merged result', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const { res } = await charge(m.client, CARDS.frictionless, 4_000, {
    metadata: { orderId: 'A-1', note: 'gift' },
  })
  const id = res.body.paymentId
  const patch = (metadata: Record<string, string>) =>
    m.client.request<WithMetadata & ErrorBody>('PATCH', `/v1/payments/${id}`, {
      body: { metadata },
    })
  const merged = await patch({ note: '', shipment: 'TR-77', orderId: 'A-1b' })
  assert.equal(merged.status, 200, JSON.stringify(merged.body))
  assert.deepEqual(merged.body.metadata, { orderId: 'A-1b', shipment: 'TR-77' })
  assert.equal(merged.body['status'], 'captured')
  const got = await m.client.request<WithMetadata>('GET', `/v1/payments/${id}`)
  assert.deepEqual(got.body.metadata, { orderId: 'A-1b', shipment: 'TR-77' })
  const updated = (await eventsForResource(h.deps.db, m.merchantId, id)).filter(
    (e) => e.type === 'payment.updated',
  )
  assert.equal(updated.length, 1)
  assert.deepEqual(updated[0]?.data['metadata'], { orderId: 'A-1b', shipment: 'TR-77' })

  await assertLimits(async (metadata) => {
    // Each accepted call adds keys; start every case from an empty map.
    const clear = Object.fromEntries(
      Object.keys(
        (await m.client.request<WithMetadata>('GET', `/v1/payments/${id}`)).body.metadata,
      ).map((k) => [k, '']),
    )
    await patch(clear)
    return patch(metadata)
  }, 'patch')
  // The last accepted patch left exactly 50 keys: one more is refused, a swap is not.
  const stored = (await m.client.request<WithMetadata>('GET', `/v1/payments/${id}`)).body.metadata
  assert.equal(Object.keys(stored).length, 50)
  const tooMany = await patch({ extra1: 'a' })
  assert.equal(tooMany.status, 400)
  assert.equal(tooMany.body.details?.[0]?.field, 'metadata')
  const swap = await patch({ key0: '', extra1: 'a' })
  assert.equal(swap.status, 200, JSON.stringify(swap.body))
  assert.equal(Object.keys(swap.body.metadata).length, 50)

  const missing = await m.client.request<ErrorBody>(
    'PATCH',
    '/v1/payments/pay_nonexistent00000000000000',
    {
      body: { metadata: { a: 'b' } },
    },
  )
  assert.equal(missing.status, 404)
  const other = await h.newMerchant()
  const foreign = await other.client.request<ErrorBody>('PATCH', `/v1/payments/${id}`, {
    body: { metadata: { a: 'b' } },
  })
  assert.equal(foreign.status, 404)
  const unknownField = await m.client.request<ErrorBody>('PATCH', `/v1/payments/${id}`, {
    body: { metadata: {}, amount: 1 },
  })
  assert.equal(unknownField.status, 400)
})

test('GET /v1/transactions?metadata.<key>=<value> filters by one exact pair', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const ids: string[] = []
  for (const [orderId, channel] of [
    ['SIP-1', 'web'],
    ['SIP-2', 'instagram'],
    ['SIP-3', 'instagram'],
  ]) {
    const { res } = await charge(m.client, CARDS.frictionless, 2_000, {
      metadata: { orderId: orderId ?? '', channel: channel ?? '' },
    })
    assert.equal(res.status, 201)
    ids.push(res.body.paymentId)
  }
  const other = await h.newMerchant()
  await charge(other.client, CARDS.frictionless, 2_000, { metadata: { channel: 'instagram' } })

  const list = (query: Record<string, string | number>) =>
    m.client.request<{ items: { id: string }[]; nextCursor: string | null } & ErrorBody>(
      'GET',
      '/v1/transactions',
      { query },
    )
  const one = await list({ 'metadata.orderId': 'SIP-2' })
  assert.equal(one.status, 200, JSON.stringify(one.body))
  assert.deepEqual(
    one.body.items.map((i) => i.id),
    [ids[1]],
  )
  const insta = await list({ 'metadata.channel': 'instagram', limit: 1 })
  assert.deepEqual(
    insta.body.items.map((i) => i.id),
    [ids[2]],
  )
  assert.ok(insta.body.nextCursor)
  const next = await list({
    'metadata.channel': 'instagram',
    limit: 1,
    cursor: insta.body.nextCursor ?? '',
  })
  assert.deepEqual(
    next.body.items.map((i) => i.id),
    [ids[1]],
  )
  // The cursor is bound to the filter it was issued under.
  const swapped = await list({
    'metadata.channel': 'web',
    limit: 1,
    cursor: insta.body.nextCursor ?? '',
  })
  assert.equal(swapped.status, 400)
  // Exact: no prefix or case-folding match; with another filter it is AND.
  assert.deepEqual((await list({ 'metadata.orderId': 'SIP' })).body.items, [])
  assert.deepEqual((await list({ 'metadata.channel': 'Instagram' })).body.items, [])
  const both = await list({ 'metadata.channel': 'web', status: 'captured' })
  assert.deepEqual(
    both.body.items.map((i) => i.id),
    [ids[0]],
  )
  const two = await list({ 'metadata.channel': 'web', 'metadata.orderId': 'SIP-1' })
  assert.equal(two.status, 400)
  assert.equal(two.body.code, 'SVC-VAL-3001')
  const longKey = await list({ [`metadata.${LONG_KEY}`]: 'x' })
  assert.equal(longKey.status, 400)
})

test('refunds, invoices, subscriptions (and their renewal payments) and payouts carry metadata', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()

  // Refunds.
  const { res } = await charge(m.client, CARDS.frictionless, 6_000)
  const paymentId = res.body.paymentId
  const refund = (body: Record<string, unknown>) =>
    m.client.request<{ lastRefund: WithMetadata }>('POST', `/v1/payments/${paymentId}/refund`, {
      body,
    })
  await assertLimits((metadata) => refund({ amount: 100, metadata }), 'refund')
  const refunded = await refund({ amount: 500, metadata: { rma: 'RMA-5' } })
  assert.equal(refunded.status, 200)
  assert.deepEqual(refunded.body.lastRefund.metadata, { rma: 'RMA-5' })
  const refundList = await m.client.request<{ items: WithMetadata[] }>(
    'GET',
    `/v1/payments/${paymentId}/refunds`,
  )
  assert.deepEqual(refundList.body.items.at(-1)?.metadata, { rma: 'RMA-5' })
  const refundId = String(refunded.body.lastRefund['refundId'])
  const refundEvents = await eventsForResource(h.deps.db, m.merchantId, refundId)
  assert.ok(refundEvents.length >= 2)
  for (const e of refundEvents) assert.deepEqual(e.data['metadata'], { rma: 'RMA-5' }, e.type)

  // Invoices.
  await assertLimits(
    (metadata) => m.client.request('POST', '/v1/invoices', { body: invoiceFor(m, metadata) }),
    'invoice',
  )
  const invoice = await createInvoice(m, { metadata: { erpId: 'F-2026-1' } })
  assert.deepEqual((invoice as unknown as WithMetadata).metadata, { erpId: 'F-2026-1' })
  const fetched = await getInvoice(m, invoice.id)
  assert.deepEqual((fetched as unknown as WithMetadata).metadata, { erpId: 'F-2026-1' })
  const created = (await eventsForResource(h.deps.db, m.merchantId, invoice.id))[0]
  assert.deepEqual(created?.data['metadata'], { erpId: 'F-2026-1' })

  // Subscriptions: each renewal payment carries the subscription's metadata.
  const { customerId } = await customerWithCard(m.client)
  await assertLimits(
    (metadata) =>
      m.client.request('POST', '/v1/subscriptions', {
        body: {
          storeId: m.storeId,
          customerId,
          amountMinor: 1_000,
          currency: 'TRY',
          intervalCount: 1,
          intervalUnit: 'month',
          metadata,
        },
      }),
    'subscription',
  )
  const sub = await createSubscription(m, customerId, { metadata: { plan: 'pro', crm: 'C-1' } })
  assert.deepEqual((sub as unknown as WithMetadata).metadata, { plan: 'pro', crm: 'C-1' })
  const subGot = await m.client.request<WithMetadata>('GET', `/v1/subscriptions/${sub.id}`)
  assert.deepEqual(subGot.body.metadata, { plan: 'pro', crm: 'C-1' })
  await reconcile(m)
  const [renewal] = await paymentsOfCycle(h, m.merchantId, sub.id, 1)
  assert.ok(renewal, 'the first cycle was charged')
  const renewalPayment = await m.client.request<WithMetadata>('GET', `/v1/payments/${renewal.id}`)
  // The merchant's metadata as it is; the subscription and cycle in fields of ours (issue 36).
  assert.deepEqual(renewalPayment.body.metadata, { plan: 'pro', crm: 'C-1' })
  assert.equal(renewalPayment.body['subscriptionId'], sub.id)
  assert.equal(renewalPayment.body['subscriptionCycle'], 1)
  const subEvents = await eventsForResource(h.deps.db, m.merchantId, sub.id)
  assert.deepEqual(subEvents[0]?.data['metadata'], { plan: 'pro', crm: 'C-1' })

  // Payouts.
  const seller = await newSubmerchant(h, m.merchantId)
  await captureAndSettle(m, 50_000, [{ submerchantId: seller.submerchantId, amountMinor: 40_000 }])
  const payout = (metadata: Record<string, string>) =>
    m.client.request<WithMetadata>('POST', '/v1/payouts', {
      body: {
        submerchantId: seller.submerchantId,
        rail: 'fast',
        amountMinor: 1_000,
        currency: 'TRY',
        metadata,
      },
    })
  await assertLimits(payout, 'payout')
  const paid = await payout({ settlementBatch: 'B-12' })
  assert.equal(paid.status, 201, JSON.stringify(paid.body))
  assert.deepEqual(paid.body.metadata, { settlementBatch: 'B-12' })
  const payoutId = String(paid.body['payoutId'])
  const payoutGot = await m.client.request<WithMetadata>('GET', `/v1/payouts/${payoutId}`)
  assert.deepEqual(payoutGot.body.metadata, { settlementBatch: 'B-12' })
  const payoutEvents = await eventsForResource(h.deps.db, m.merchantId, payoutId)
  assert.deepEqual(payoutEvents[0]?.data['metadata'], { settlementBatch: 'B-12' })
})

function invoiceFor(m: TestMerchant, metadata: Record<string, string>) {
  return {
    storeId: m.storeId,
    amountMinor: 1_000,
    currency: 'TRY',
    lineItems: [{ name: 'Ürün', qty: 1, unitPriceMinor: 1_000, lineTotalMinor: 1_000 }],
    metadata,
  }
}
