// Goal: events reach webhook receivers signed (Standard Webhooks), with the void reason and
// the per-resource sequence, filtered by subscription, or to a session's callbackUrl instead.
// Method: a real node:http receiver on 127.0.0.1, payments through the signed API, delivery
// run by POST /v1/sandbox/reconcile, signatures checked with the standardwebhooks library.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { startTestApp } from '../helpers/app.ts'
import { CARDS, charge } from '../helpers/payments.ts'
import {
  addEndpoint,
  authorizedPayment,
  deliveries,
  newDashboardMerchant,
  reconcile,
  signedWith,
  startReceiver,
  verifyNow,
} from './_support.ts'

test('payment.voided arrives signed, verifies, and carries the reason and sequence', async (t) => {
  const h = await startTestApp(t)
  const m = await newDashboardMerchant(h)
  const receiver = await startReceiver(t)
  const endpoint = await addEndpoint(m, receiver.url)
  assert.match(endpoint.secret, /^whsec_[A-Za-z0-9+/]{40,}={0,2}$/)
  assert.ok(Buffer.from(endpoint.secret.slice(6), 'base64').length >= 24)

  const paymentId = await authorizedPayment(m.client)
  const voided = await m.client.request('POST', `/v1/payments/${paymentId}/void`, {
    body: { reason: 'müşteri vazgeçti' },
  })
  assert.equal(voided.status, 200)
  await reconcile(m.client)

  // No order is promised between deliveries; `sequence` gives the receiver the order.
  const got = receiver.about(paymentId).sort((a, b) => a.json.sequence - b.json.sequence)
  assert.deepEqual(
    got.map((r) => r.json.type),
    ['payment.authorized', 'payment.voided'],
  )
  for (const r of got) {
    assert.equal(r.headers['content-type'], 'application/json')
    assert.equal(r.headers['webhook-id'], r.json.id)
    assert.match(r.headers['webhook-id'] ?? '', /^evt_/)
    assert.match(String(r.headers['webhook-signature']), /^v1,[A-Za-z0-9+/]+=*$/)
    assert.deepEqual(verifyNow(endpoint.secret, r), r.json)
    assert.deepEqual(Object.keys(r.json).sort(), ['createdAt', 'data', 'id', 'sequence', 'type'])
  }
  const voidEvent = got[1]!
  assert.equal(voidEvent.json.data['reason'], 'müşteri vazgeçti')
  assert.equal(voidEvent.json.data['status'], 'voided')
  assert.deepEqual(
    got.map((r) => r.json.sequence),
    [1, 2],
  )
  // A receiver with the wrong secret rejects it.
  assert.throws(() => verifyNow(`whsec_${Buffer.alloc(32, 1).toString('base64')}`, voidEvent))

  // The delivery log: both delivered, filterable, paged with a keyset cursor.
  const log = await deliveries(m)
  const mine = log.items.filter((d) => got.some((r) => r.json.id === d.eventId))
  assert.equal(mine.length, 2)
  assert.ok(mine.every((d) => d.status === 'delivered' && d.attemptCount === 1))
  assert.ok(mine.every((d) => d.lastStatusCode === 200 && d.endpointId === endpoint.id))
  const onlyVoid = await deliveries(m, { eventType: 'payment.voided' })
  assert.deepEqual(
    onlyVoid.items.map((d) => d.eventId),
    [voidEvent.json.id],
  )
  assert.equal((await deliveries(m, { status: 'failed' })).items.length, 0)
  const page1 = await deliveries(m, { limit: '1' })
  assert.equal(page1.items.length, 1)
  assert.ok(page1.nextCursor)
  const page2 = await deliveries(m, { limit: '1', cursor: page1.nextCursor })
  assert.equal(page2.items.length, 1)
  assert.notEqual(page2.items[0]!.id, page1.items[0]!.id)
  const tampered = await m.dash<{ code: string }>(
    'GET',
    `/v1/stores/${m.storeId}/webhooks/deliveries?cursor=${page1.nextCursor.slice(0, -2)}xx`,
  )
  assert.equal(tampered.status, 400)
  assert.equal(tampered.body.code, 'SVC-VAL-3001')

  // A second run sends nothing again.
  await reconcile(m.client)
  assert.equal(receiver.about(paymentId).length, 2)
})

test('an endpoint subscribed to some types gets only those; GET lists without secrets', async (t) => {
  const h = await startTestApp(t)
  const m = await newDashboardMerchant(h)
  const all = await startReceiver(t)
  const capturesOnly = await startReceiver(t)
  await addEndpoint(m, all.url)
  const filtered = await addEndpoint(m, capturesOnly.url, ['payment.captured', 'refund.completed'])
  assert.deepEqual(filtered.events, ['payment.captured', 'refund.completed'])

  const { res } = await charge(m.client, CARDS.frictionless, 7000)
  assert.equal(res.status, 201)
  const paymentId = res.body.paymentId
  const refund = await m.client.request('POST', `/v1/payments/${paymentId}/refund`, {
    body: { amount: 7000 },
  })
  assert.equal(refund.status, 200, JSON.stringify(refund.body))
  await reconcile(m.client)

  assert.deepEqual(
    all
      .about(paymentId)
      .map((r) => r.json.type)
      .sort(),
    ['payment.captured', 'payment.refunded', 'refund.completed', 'refund.created'],
  )
  assert.deepEqual(
    capturesOnly
      .about(paymentId)
      .map((r) => r.json.type)
      .sort(),
    ['payment.captured', 'refund.completed'],
  )
  // Sequence is per resource: the payment's events count 1, 2; the refund's 1, 2.
  const seq = (type: string) =>
    all.about(paymentId).find((r) => r.json.type === type)?.json.sequence
  assert.equal(seq('payment.captured'), 1)
  assert.equal(seq('payment.refunded'), 2)
  assert.equal(seq('refund.created'), 1)
  assert.equal(seq('refund.completed'), 2)

  const list = await m.dash<{ items: Record<string, unknown>[] }>(
    'GET',
    `/v1/stores/${m.storeId}/webhooks`,
  )
  assert.equal(list.status, 200)
  assert.equal(list.body.items.length, 2)
  for (const e of list.body.items) {
    assert.equal(e['secret'], undefined)
    assert.equal(e['status'], 'enabled')
  }
  assert.doesNotMatch(JSON.stringify(list.body), /whsec_/)

  const bad = await m.dash<{ code: string }>('POST', `/v1/stores/${m.storeId}/webhooks`, {
    url: all.url,
    events: ['Payment Captured'],
  })
  assert.equal(bad.status, 400)
  assert.equal(bad.body.code, 'SVC-VAL-3001')
  const extra = await m.dash<{ code: string }>('POST', `/v1/stores/${m.storeId}/webhooks`, {
    url: all.url,
    secret: 'mine',
  })
  assert.equal(extra.status, 400)

  // Deleted: 204, gone from the list, no new deliveries, a second delete is 404.
  const del = await m.dash('DELETE', `/v1/stores/${m.storeId}/webhooks/${filtered.id}`)
  assert.equal(del.status, 204)
  const again = await m.dash('DELETE', `/v1/stores/${m.storeId}/webhooks/${filtered.id}`)
  assert.equal(again.status, 404)
  const after = await m.dash<{ items: unknown[] }>('GET', `/v1/stores/${m.storeId}/webhooks`)
  assert.equal(after.body.items.length, 1)
  const second = await charge(m.client, CARDS.frictionless, 7100)
  await reconcile(m.client)
  assert.equal(capturesOnly.about(second.res.body.paymentId).length, 0)
  assert.equal(all.about(second.res.body.paymentId).length, 1)
})

test("a session's callbackUrl gets that payment's events instead of the store endpoint", async (t) => {
  const h = await startTestApp(t)
  const m = await newDashboardMerchant(h)
  const storeReceiver = await startReceiver(t, '/store')
  const callback = await startReceiver(t, '/callback')
  const endpoint = await addEndpoint(m, storeReceiver.url)

  const overridden = await authorizedPayment(m.client, 4000, { callbackUrl: callback.url })
  const cap = await m.client.request('POST', `/v1/payments/${overridden}/capture`, { body: {} })
  assert.equal(cap.status, 200)
  const plain = await authorizedPayment(m.client, 4100)
  await reconcile(m.client)

  assert.deepEqual(
    callback
      .about(overridden)
      .map((r) => r.json.type)
      .sort(),
    ['payment.authorized', 'payment.captured'],
  )
  assert.equal(storeReceiver.about(overridden).length, 0)
  assert.equal(callback.about(plain).length, 0)
  assert.equal(storeReceiver.about(plain).length, 1)

  // Callback deliveries are signed with the store's callback secret (dashboard), not the
  // endpoint's.
  const secret = await m.dash<{ secret: string }>(
    'GET',
    `/v1/stores/${m.storeId}/webhooks/callback-secret`,
  )
  assert.equal(secret.status, 200)
  assert.match(secret.body.secret, /^whsec_/)
  for (const r of callback.about(overridden)) {
    assert.deepEqual(verifyNow(secret.body.secret, r), r.json)
    assert.equal(signedWith(endpoint.secret, r), false)
  }
  const log = await deliveries(m)
  const toCallback = log.items.filter((d) => d.url === callback.url)
  assert.equal(toCallback.length, 2)
  assert.ok(toCallback.every((d) => d.endpointId === null && d.status === 'delivered'))
})

test("a merchant-level event (no store) reaches every store's endpoints", async (t) => {
  const h = await startTestApp(t)
  const m = await newDashboardMerchant(h)
  const store2 = await h.operator<{ storeId: string }>(
    'POST',
    `/operator/v1/merchants/${m.merchantId}/stores`,
    {},
  )
  assert.equal(store2.status, 201)
  const first = await startReceiver(t)
  const second = await startReceiver(t)
  await addEndpoint(m, first.url)
  const res = await m.dash('POST', `/v1/stores/${store2.body.storeId}/webhooks`, {
    url: second.url,
  })
  assert.equal(res.status, 201)

  const customer = await m.client.request<{ id: string }>('POST', '/v1/customers', {
    body: { externalId: `ext-${Date.now()}` },
  })
  assert.equal(customer.status, 201, JSON.stringify(customer.body))
  await reconcile(m.client)
  for (const receiver of [first, second]) {
    const got = receiver.about(customer.body.id)
    assert.deepEqual(
      got.map((r) => r.json.type),
      ['customer.created'],
    )
  }
})
