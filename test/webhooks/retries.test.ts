// Goal: at-least-once delivery: retries with backoff on deps.clock, the 3-day window ending
// `failed` with the endpoint disabled and the merchant emailed, redelivery, and a crash
// between sending and recording that resends the same webhook-id. Method: a real receiver,
// the test clock moved instead of sleeping, POST /v1/sandbox/reconcile to run deliveries.
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { test } from 'node:test'
import { deliveryFaults } from '../../src/modules/webhooks/index.ts'
import { startTestApp } from '../helpers/app.ts'
import {
  DAY,
  HOUR,
  MINUTE,
  addEndpoint,
  authorizedPayment,
  deliveries,
  newDashboardMerchant,
  reconcile,
  signedWith,
  startReceiver,
  verifyNow,
  type DashboardMerchant,
  type DeliveryJson,
} from './_support.ts'

async function deliveryOf(m: DashboardMerchant, eventId: string): Promise<DeliveryJson> {
  const page = await deliveries(m, { eventId })
  assert.equal(page.items.length, 1, JSON.stringify(page.items))
  return page.items[0]!
}

test('a receiver answering 500 then 200 gets the event on the retry, same webhook-id', async (t) => {
  const h = await startTestApp(t)
  const m = await newDashboardMerchant(h)
  const receiver = await startReceiver(t)
  receiver.respond = (n) => (n <= 2 ? 500 : 200)
  const endpoint = await addEndpoint(m, receiver.url)
  const paymentId = await authorizedPayment(m.client)

  await reconcile(m.client)
  assert.equal(receiver.about(paymentId).length, 1)
  const eventId = receiver.about(paymentId)[0]!.json.id
  let d = await deliveryOf(m, eventId)
  assert.equal(d.status, 'pending')
  assert.equal(d.attemptCount, 1)
  assert.equal(d.lastStatusCode, 500)
  assert.match(d.lastError ?? '', /^HTTP 500/)
  // First retry after 1 min ± 20 %.
  const wait1 = Date.parse(d.nextAttemptAt!) - h.clock.now().getTime()
  assert.ok(wait1 > 40_000 && wait1 <= 72_000, `wait ${wait1}`)

  // Not due yet: nothing is sent.
  await reconcile(m.client)
  assert.equal(receiver.about(paymentId).length, 1)

  h.clock.advance(2 * MINUTE)
  await reconcile(m.client)
  assert.equal(receiver.about(paymentId).length, 2)
  d = await deliveryOf(m, eventId)
  assert.equal(d.attemptCount, 2)
  // The backoff doubles: about 2 min ± 20 % now.
  const wait2 = Date.parse(d.nextAttemptAt!) - Date.parse(d.lastAttemptAt!)
  assert.ok(wait2 >= 96_000 && wait2 <= 144_000, `wait ${wait2}`)

  h.clock.advance(3 * MINUTE)
  await reconcile(m.client)
  const got = receiver.about(paymentId)
  assert.equal(got.length, 3)
  assert.ok(got.every((r) => r.headers['webhook-id'] === eventId))
  // Each attempt is signed afresh with its own timestamp; the last verifies now.
  assert.notEqual(got[0]!.headers['webhook-timestamp'], got[2]!.headers['webhook-timestamp'])
  assert.deepEqual(verifyNow(endpoint.secret, got[2]!), got[2]!.json)
  d = await deliveryOf(m, eventId)
  assert.equal(d.status, 'delivered')
  assert.equal(d.attemptCount, 3)
  assert.equal(d.nextAttemptAt, null)
  assert.equal(d.lastStatusCode, 200)
})

test('a receiver down for 3 days: delivery failed, endpoint disabled, merchant emailed; then redeliver', async (t) => {
  const h = await startTestApp(t)
  const m = await newDashboardMerchant(h)
  const receiver = await startReceiver(t)
  let up = false
  receiver.respond = () => (up ? 200 : 503)
  const endpoint = await addEndpoint(m, receiver.url)
  const paymentId = await authorizedPayment(m.client)
  const start = h.clock.now().getTime()
  await reconcile(m.client)
  const eventId = receiver.about(paymentId)[0]!.json.id

  let d = await deliveryOf(m, eventId)
  for (let step = 0; step < 20 && d.status === 'pending'; step++) {
    h.clock.advance(7 * HOUR)
    await reconcile(m.client)
    d = await deliveryOf(m, eventId)
    const elapsed = h.clock.now().getTime() - start
    if (elapsed < 3 * DAY) assert.equal(d.status, 'pending', `failed early at ${elapsed} ms`)
  }
  assert.equal(d.status, 'failed')
  assert.ok(h.clock.now().getTime() - start >= 3 * DAY)
  assert.ok(d.attemptCount >= 10, `only ${d.attemptCount} attempts`)
  assert.equal(d.attemptCount, receiver.about(paymentId).length)
  assert.ok(receiver.about(paymentId).every((r) => signedWith(endpoint.secret, r)))

  const list = await m.dash<{ items: { id: string; status: string; disabledAt: string }[] }>(
    'GET',
    `/v1/stores/${m.storeId}/webhooks`,
  )
  const listed = list.body.items.find((e) => e.id === endpoint.id)
  assert.equal(listed?.status, 'disabled')
  assert.ok(listed.disabledAt)

  // The merchant's dashboard address got an email, kept in the demo mailbox.
  const page = await fetch(`${h.url}/dev/mailbox`)
  assert.equal(page.status, 200)
  assert.match(page.headers.get('content-type') ?? '', /text\/html/)
  const html = await page.text()
  assert.ok(html.includes(m.email), 'mail to the merchant')
  assert.ok(html.includes(`Webhook endpoint disabled: ${receiver.url}`))
  assert.ok(html.includes(endpoint.id))

  // A disabled endpoint gets no new deliveries and cannot be redelivered to.
  const later = await authorizedPayment(m.client)
  await reconcile(m.client)
  assert.equal(receiver.about(later).length, 0)
  const refused = await m.dash<{ code: string }>(
    'POST',
    `/v1/stores/${m.storeId}/webhooks/deliveries/${d.id}/redeliver`,
  )
  assert.equal(refused.status, 409)
  assert.equal(refused.body.code, 'SVC-STATE-3401')

  // Fixed and enabled again: a redelivery goes through with the same webhook-id.
  up = true
  const enabled = await m.dash<{ status: string }>(
    'POST',
    `/v1/stores/${m.storeId}/webhooks/${endpoint.id}/enable`,
  )
  assert.equal(enabled.status, 200)
  assert.equal(enabled.body.status, 'enabled')
  const again = await m.dash<{ status: string; id: string }>(
    'POST',
    `/v1/stores/${m.storeId}/webhooks/deliveries/${d.id}/redeliver`,
  )
  assert.equal(again.status, 202)
  assert.equal(again.body.status, 'pending')
  const before = receiver.about(paymentId).length
  await reconcile(m.client)
  const got = receiver.about(paymentId)
  assert.equal(got.length, before + 1)
  assert.equal(got.at(-1)!.headers['webhook-id'], eventId)
  d = await deliveryOf(m, eventId)
  assert.equal(d.status, 'delivered')
})

test('redeliver sends a delivered event again with the same webhook-id; other stores 404', async (t) => {
  const h = await startTestApp(t)
  const m = await newDashboardMerchant(h)
  const other = await newDashboardMerchant(h)
  const receiver = await startReceiver(t)
  const endpoint = await addEndpoint(m, receiver.url)
  const paymentId = await authorizedPayment(m.client)
  await reconcile(m.client)
  const first = receiver.about(paymentId)[0]!
  const d = await deliveryOf(m, first.json.id)
  assert.equal(d.status, 'delivered')

  const res = await m.dash('POST', `/v1/stores/${m.storeId}/webhooks/deliveries/${d.id}/redeliver`)
  assert.equal(res.status, 202)
  await reconcile(m.client)
  const got = receiver.about(paymentId)
  assert.equal(got.length, 2)
  assert.equal(got[1]!.headers['webhook-id'], first.headers['webhook-id'])
  assert.equal(got[1]!.raw, first.raw)
  assert.deepEqual(verifyNow(endpoint.secret, got[1]!), first.json)
  const after = await deliveryOf(m, first.json.id)
  assert.equal(after.status, 'delivered')
  assert.equal(after.attemptCount, 2)

  // Another merchant sees neither the delivery nor the store.
  const viaOther = await other.dash(
    'POST',
    `/v1/stores/${other.storeId}/webhooks/deliveries/${d.id}/redeliver`,
  )
  assert.equal(viaOther.status, 404)
  const otherStore = await other.dash(
    'POST',
    `/v1/stores/${m.storeId}/webhooks/deliveries/${d.id}/redeliver`,
  )
  assert.equal(otherStore.status, 404)
  const unknown = await m.dash(
    'POST',
    `/v1/stores/${m.storeId}/webhooks/deliveries/dlv_nosuchdelivery/redeliver`,
  )
  assert.equal(unknown.status, 404)
})

test('a redelivery retried with the same Idempotency-Key sends once (decision 0035)', async (t) => {
  const h = await startTestApp(t)
  const m = await newDashboardMerchant(h)
  const receiver = await startReceiver(t)
  await addEndpoint(m, receiver.url)
  const paymentId = await authorizedPayment(m.client)
  await reconcile(m.client)
  const d = await deliveryOf(m, receiver.about(paymentId)[0]!.json.id)
  const path = `/v1/stores/${m.storeId}/webhooks/deliveries/${d.id}/redeliver`
  const key = randomUUID()
  const token = await m.token()
  const redeliver = async () => {
    const res = await fetch(h.url + path, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        'idempotency-key': key,
      },
      body: '{}',
    })
    return {
      status: res.status,
      text: await res.text(),
      replayed: res.headers.get('idempotent-replayed'),
    }
  }
  const first = await redeliver()
  assert.equal(first.status, 202, first.text)
  await reconcile(m.client)
  // The dashboard API keeps no idempotency record: the retry is answered with the delivery as
  // it stands (delivered by the first redelivery) and schedules nothing.
  const retried = await redeliver()
  assert.equal(retried.status, 202, retried.text)
  const answered = JSON.parse(retried.text) as { id: string; status: string }
  assert.equal(answered.id, d.id)
  assert.equal(answered.status, 'delivered')
  await reconcile(m.client)
  // The original delivery and one redelivery: the retry sent nothing.
  assert.equal(receiver.about(paymentId).length, 2)
})

test('a crash between sending and recording resends the same webhook-id (at least once)', async (t) => {
  const h = await startTestApp(t)
  const m = await newDashboardMerchant(h)
  const receiver = await startReceiver(t)
  const endpoint = await addEndpoint(m, receiver.url)
  const paymentId = await authorizedPayment(m.client)

  deliveryFaults.crashBeforeRecordOnce = true
  t.after(() => {
    deliveryFaults.crashBeforeRecordOnce = false
  })
  await reconcile(m.client)
  assert.equal(deliveryFaults.crashBeforeRecordOnce, false, 'the fault fired')
  assert.equal(receiver.about(paymentId).length, 1)
  const first = receiver.about(paymentId)[0]!
  // The receiver answered 200, but the outcome was never recorded.
  let d = await deliveryOf(m, first.json.id)
  assert.equal(d.status, 'pending')
  assert.equal(d.attemptCount, 0)

  // Once the attempt's lease lapses, the retry reconciler sends it again.
  h.clock.advance(3 * MINUTE)
  await reconcile(m.client)
  const got = receiver.about(paymentId)
  assert.equal(got.length, 2)
  assert.equal(got[1]!.headers['webhook-id'], first.headers['webhook-id'])
  assert.deepEqual(verifyNow(endpoint.secret, got[1]!), first.json)
  d = await deliveryOf(m, first.json.id)
  assert.equal(d.status, 'delivered')
  assert.equal(d.attemptCount, 1)

  await reconcile(m.client)
  assert.equal(receiver.about(paymentId).length, 2)
})
