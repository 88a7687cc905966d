// Goal: sandbox test clocks (docs/decisions/0031-test-clocks.md) — a monthly subscription on a
// clock advanced through 12 renewals, dunning run by the clock to expired, the real-time engine
// leaving clock subscriptions alone, a chargeback deadline passed by the clock, the advance's
// bounds and tenancy, a busy or abandoned advance, pause/resume/cancel at clock time, deleting a
// clock, and the SDK's kurus.testClocks. Method: signed HTTP through app.inject on PGlite; the
// clocks' times are far from the wall clock (past and future), so anything done at wall time
// would show in the dates. An advance runs its steps one after another: nothing here races.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { Kurus } from '../../packages/node/src/index.ts'
import { eventsForResource } from '../../src/modules/events/index.ts'
import { startTestApp, type TestMerchant } from '../helpers/app.ts'
import { CARDS } from '../helpers/payments.ts'
import {
  addEndpoint,
  newDashboardMerchant,
  startReceiver,
  verifyNow,
} from '../webhooks/_support.ts'
import {
  DAY_MS,
  charges,
  createSubscription,
  customerWithCard,
  eventTypes,
  getSub,
  paymentsOfCycle,
  reconcile,
  type ErrorBody,
} from './_support.ts'

interface TestClockBody {
  id: string
  name: string | null
  frozenTime: string
  status: string
  createdAt: string
}

async function newClock(m: TestMerchant, frozenTime: string, name?: string) {
  const res = await m.client.request<TestClockBody>('POST', '/v1/sandbox/test-clocks', {
    body: { frozenTime, ...(name === undefined ? {} : { name }) },
  })
  assert.equal(res.status, 201, JSON.stringify(res.body))
  return res.body
}

function advance(m: TestMerchant, id: string, frozenTime: string) {
  return m.client.request<TestClockBody & ErrorBody>(
    'POST',
    `/v1/sandbox/test-clocks/${id}/advance`,
    { body: { frozenTime } },
  )
}

async function advanced(m: TestMerchant, id: string, frozenTime: string): Promise<TestClockBody> {
  const res = await advance(m, id, frozenTime)
  assert.equal(res.status, 200, JSON.stringify(res.body))
  assert.equal(res.body.status, 'ready')
  assert.equal(Date.parse(res.body.frozenTime), Date.parse(frozenTime))
  return res.body
}

const iso = (ms: number) => new Date(ms).toISOString()

test('a monthly subscription on a test clock renews 12 times as the clock moves a year', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const clock = await newClock(m, '2027-01-15T09:00:00Z', 'a year of renewals')
  assert.match(clock.id, /^clk_/)
  assert.equal(clock.status, 'ready')
  const { customerId } = await customerWithCard(m.client)
  const sub = await createSubscription(m, customerId, { testClockId: clock.id })
  assert.equal(sub.createdAt, '2027-01-15T09:00:00.000Z', "created at the clock's time")
  assert.equal(sub.nextChargeAt, '2027-01-15T09:00:00.000Z')

  // Nothing runs until the clock moves; then one advance of a few months, and the rest in
  // one more: eleven months on, cycles 1 (at creation) to 12 are paid.
  assert.equal((await charges(m, sub.id)).length, 0)
  await advanced(m, clock.id, '2027-04-20T00:00:00Z')
  assert.equal((await getSub(m, sub.id)).cycleNumber, 4)
  await advanced(m, clock.id, '2027-12-15T09:00:00Z')

  const s = await getSub(m, sub.id)
  assert.equal(s.status, 'active')
  assert.equal(s.cycleNumber, 12)
  assert.equal(s.nextChargeAt, '2028-01-15T09:00:00.000Z', 'one month after the clock')
  const history = await charges(m, sub.id)
  assert.equal(history.length, 12)
  assert.ok(history.every((c) => c.status === 'captured' && c.paymentId))
  // Each charge ran at its due time on the clock, the 15th of each month.
  const months = history.map((c) => c.chargedAt).sort()
  for (const [i, at] of months.entries()) {
    assert.equal(at, iso(Date.UTC(2027, i, 15, 9)), `cycle ${i + 1}`)
  }
  for (let cycle = 1; cycle <= 12; cycle++) {
    const payments = await paymentsOfCycle(h, m.merchantId, sub.id, cycle)
    assert.deepEqual(
      payments.map((p) => p.status),
      ['captured'],
      `one payment for cycle ${cycle}`,
    )
  }
  const payment = await h.deps.db
    .selectFrom('payments')
    .select('created_at')
    .where('transaction_id', '=', `${sub.id}:12`)
    .executeTakeFirstOrThrow()
  assert.equal(payment.created_at.toISOString(), '2027-12-15T09:00:00.000Z', 'dated on the clock')

  const events = await eventsForResource(h.deps.db, m.merchantId, sub.id)
  const renewed = events.filter((e) => e.type === 'subscription.renewed')
  assert.equal(renewed.length, 12)
  assert.deepEqual(
    renewed.map((e) => e.createdAt.toISOString()),
    months.map((at) => new Date(at).toISOString()),
    'events carry the clock time',
  )
  assert.equal(renewed[0]?.data.testClockId, clock.id)

  // The clock after the advance; and the merchant's list.
  const got = await m.client.request<TestClockBody>('GET', `/v1/sandbox/test-clocks/${clock.id}`)
  assert.equal(got.status, 200)
  assert.equal(got.body.frozenTime, '2027-12-15T09:00:00.000Z')
  const list = await m.client.request<{ items: TestClockBody[] }>('GET', '/v1/sandbox/test-clocks')
  assert.equal(list.status, 200)
  assert.deepEqual(
    list.body.items.map((c) => c.id),
    [clock.id],
  )
})

test('dunning on a test clock: retries 1, 3 and 5 days after each failure, then expired', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const start = Date.parse('2027-03-01T10:00:00Z')
  const clock = await newClock(m, iso(start))
  const { customerId } = await customerWithCard(m.client, CARDS.declined)
  const sub = await createSubscription(m, customerId, { testClockId: clock.id })

  await advanced(m, clock.id, iso(start + 60_000))
  let s = await getSub(m, sub.id)
  assert.equal(s.status, 'past_due')
  assert.equal(s.nextChargeAt, new Date(start + DAY_MS).toISOString())
  // Just before the retry, nothing; then the clock passes all three retries at once.
  await advanced(m, clock.id, iso(start + DAY_MS - 60_000))
  assert.equal((await getSub(m, sub.id)).failedAttempts, 1)
  await advanced(m, clock.id, iso(start + 30 * DAY_MS))
  s = await getSub(m, sub.id)
  assert.equal(s.status, 'expired')
  assert.equal(s.failedAttempts, 4)
  const history = await charges(m, sub.id)
  assert.deepEqual(
    history.map((c) => c.chargedAt).sort(),
    [0, 1, 4, 9].map((days) => new Date(start + days * DAY_MS).toISOString()),
  )
  assert.deepEqual(await eventTypes(h, m.merchantId, sub.id), [
    'subscription.created',
    'subscription.charge_failed',
    'subscription.past_due',
    'subscription.charge_failed',
    'subscription.charge_failed',
    'subscription.charge_failed',
    'subscription.expired',
  ])
})

test('the real-time renewal engine does not charge a subscription on a test clock', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  // A clock in the past: by wall time the subscription is long due.
  const clock = await newClock(m, '2025-03-01T00:00:00Z')
  const { customerId } = await customerWithCard(m.client)
  const onClock = await createSubscription(m, customerId, { testClockId: clock.id })
  const onWall = await createSubscription(m, customerId)
  assert.equal(onWall.testClockId, null)
  h.clock.advance(400 * DAY_MS)
  await reconcile(m)
  assert.equal((await getSub(m, onWall.id)).cycleNumber, 1, 'the wall-time one is charged')
  const s = await getSub(m, onClock.id)
  assert.equal(s.cycleNumber, 0)
  assert.equal(s.testClockId, clock.id)
  assert.equal((await charges(m, onClock.id)).length, 0)

  await advanced(m, clock.id, '2025-03-02T00:00:00Z')
  const history = await charges(m, onClock.id)
  assert.equal(history.length, 1)
  assert.equal(history[0]?.chargedAt, '2025-03-01T00:00:00.000Z')
})

test('advances move forward, at most two years; other merchants see 404', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const other = await h.newMerchant()
  const clock = await newClock(m, '2027-01-01T00:00:00Z')

  for (const to of ['2026-12-31T23:59:59Z', '2027-01-01T00:00:00Z', '2029-01-02T00:00:00Z']) {
    const res = await advance(m, clock.id, to)
    assert.equal(res.status, 400, to)
    assert.equal(res.body.code, 'SVC-VAL-3001')
  }
  const notDate = await advance(m, clock.id, 'tomorrow')
  assert.equal(notDate.status, 400)

  for (const [method, path, body] of [
    ['GET', `/v1/sandbox/test-clocks/${clock.id}`, undefined],
    ['DELETE', `/v1/sandbox/test-clocks/${clock.id}`, undefined],
    ['POST', `/v1/sandbox/test-clocks/${clock.id}/advance`, { frozenTime: '2027-02-01T00:00:00Z' }],
  ] as const) {
    const res = await other.client.request<ErrorBody>(method, path, body ? { body } : {})
    assert.equal(res.status, 404, `${method} ${path}`)
    assert.equal(res.body.code, 'SVC-RES-3301')
  }
  const theirs = await other.client.request<{ items: unknown[] }>('GET', '/v1/sandbox/test-clocks')
  assert.deepEqual(theirs.body.items, [])
  // Nor can another merchant put a subscription on it.
  const { customerId } = await customerWithCard(other.client)
  const res = await other.client.request<ErrorBody>('POST', '/v1/subscriptions', {
    body: {
      storeId: other.storeId,
      customerId,
      amountMinor: 14_900,
      currency: 'TRY',
      intervalCount: 1,
      intervalUnit: 'month',
      testClockId: clock.id,
    },
  })
  assert.equal(res.status, 404)
  assert.equal((await advanced(m, clock.id, '2029-01-01T00:00:00Z')).status, 'ready')
})

test('deleting a test clock cancels the subscriptions on it, at its time', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const clock = await newClock(m, '2027-06-01T12:00:00Z')
  const { customerId } = await customerWithCard(m.client)
  const sub = await createSubscription(m, customerId, { testClockId: clock.id })
  await advanced(m, clock.id, '2027-06-10T12:00:00Z')
  assert.equal((await getSub(m, sub.id)).cycleNumber, 1)

  const del = await m.client.request('DELETE', `/v1/sandbox/test-clocks/${clock.id}`)
  assert.equal(del.status, 204)
  const s = await getSub(m, sub.id)
  assert.equal(s.status, 'cancelled')
  assert.equal(s.cancelledAt, '2027-06-10T12:00:00.000Z')
  assert.equal(
    (await m.client.request('GET', `/v1/sandbox/test-clocks/${clock.id}`)).status,
    404,
    'gone',
  )
  assert.equal((await advance(m, clock.id, '2027-07-01T00:00:00Z')).status, 404)
  assert.deepEqual((await eventTypes(h, m.merchantId, sub.id)).at(-1), 'subscription.cancelled')
})

test('@kurus/node: kurus.testClocks create, advance, list, get and del', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const kurus = new Kurus({
    publicKey: m.publicKey,
    secretKey: m.secretKey,
    baseUrl: h.url,
    now: () => h.clock.now(),
  })
  const clock = await kurus.testClocks.create({ frozenTime: '2027-05-31T21:00:00Z', name: 'sdk' })
  const { customerId } = await customerWithCard(m.client)
  const sub = await kurus.subscriptions.create({
    storeId: m.storeId,
    customerId,
    amountMinor: 9_900,
    currency: 'TRY',
    intervalCount: 1,
    intervalUnit: 'month',
    testClockId: clock.id,
  })
  assert.equal(sub.testClockId, clock.id)
  // 1 June in Turkey time; cycles on 1 June, 1 July and 1 August.
  const moved = await kurus.testClocks.advance(clock.id, { frozenTime: '2027-08-01T00:00:00Z' })
  assert.equal(moved.status, 'ready')
  const after = await kurus.subscriptions.get(sub.id)
  assert.equal(after.cycleNumber, 3)
  assert.equal(after.nextChargeAt, '2027-08-31T21:00:00.000Z')
  assert.deepEqual(
    (await kurus.testClocks.list()).items.map((c) => c.id),
    [clock.id],
  )
  assert.equal((await kurus.testClocks.get(clock.id)).frozenTime, '2027-08-01T00:00:00.000Z')
  await kurus.testClocks.del(clock.id)
  assert.equal((await kurus.subscriptions.get(sub.id)).status, 'cancelled')
})

test("a chargeback of a clock's payment: its deadline passes when the clock does", async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const start = Date.parse('2027-09-01T08:00:00Z')
  const clock = await newClock(m, iso(start))
  const { customerId } = await customerWithCard(m.client)
  const sub = await createSubscription(m, customerId, { testClockId: clock.id })
  await advanced(m, clock.id, iso(start + 60_000))
  const [paid] = await charges(m, sub.id)
  assert.ok(paid?.paymentId)

  interface ChargebackBody {
    id: string
    status: string
    receivedAt: string
    evidenceDueBy: string
    resolvedAt: string | null
    resolution: string | null
  }
  const raised = await m.client.request<ChargebackBody>(
    'POST',
    `/v1/sandbox/payments/${paid.paymentId}/chargebacks`,
    { body: { amount: 5_000 } },
  )
  assert.equal(raised.status, 201, JSON.stringify(raised.body))
  assert.equal(raised.body.receivedAt, iso(start + 60_000), 'received at the clock time')
  const dueBy = start + 60_000 + h.config.evidenceDays * DAY_MS
  assert.equal(raised.body.evidenceDueBy, iso(dueBy))

  const chargeback = async () => {
    const res = await m.client.request<{ items: ChargebackBody[] }>(
      'GET',
      `/v1/payments/${paid.paymentId}/chargebacks`,
    )
    assert.equal(res.status, 200)
    const [cb] = res.body.items
    assert.ok(cb)
    return cb
  }
  // Wall time far past the deadline: the real-time deadline reconciler leaves it open.
  h.clock.advance(400 * DAY_MS)
  await reconcile(m)
  assert.equal((await chargeback()).status, 'received')
  // The clock just before the deadline, then past it.
  await advanced(m, clock.id, iso(dueBy - 60_000))
  assert.equal((await chargeback()).status, 'received')
  await advanced(m, clock.id, iso(dueBy + DAY_MS))
  const closed = await chargeback()
  assert.equal(closed.status, 'accepted')
  assert.equal(closed.resolution, 'expired')
  assert.equal(closed.resolvedAt, iso(dueBy), 'closed at its deadline on the clock')
})

test('a clock that is advancing answers 409; one left advancing by a dead process moves again', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const clock = await newClock(m, '2027-01-01T00:00:00Z')
  // Staged with SQL (a deliberately mid-advance state): an advance running in another request.
  await h.deps.db
    .updateTable('test_clocks')
    .set({ status: 'advancing', updated_at: h.clock.now() })
    .where('id', '=', clock.id)
    .execute()
  const busy = await advance(m, clock.id, '2027-02-01T00:00:00Z')
  assert.equal(busy.status, 409)
  assert.equal(busy.body.code, 'SVC-STATE-3401')
  const del = await m.client.request<ErrorBody>('DELETE', `/v1/sandbox/test-clocks/${clock.id}`)
  assert.equal(del.status, 409)
  // Its process died: untouched for more than 5 minutes, the clock may move again.
  h.clock.advance(6 * 60_000)
  await advanced(m, clock.id, '2027-02-01T00:00:00Z')
})

test('pause, resume and cancel of a subscription on a clock happen at the clock time', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const clock = await newClock(m, '2027-04-01T06:00:00Z')
  const { customerId } = await customerWithCard(m.client)
  const sub = await createSubscription(m, customerId, { testClockId: clock.id })
  await advanced(m, clock.id, '2027-04-02T06:00:00Z')
  const paused = await m.client.request('POST', `/v1/subscriptions/${sub.id}/pause`, { body: {} })
  assert.equal(paused.status, 200)
  await advanced(m, clock.id, '2027-07-01T00:00:00Z')
  assert.equal((await charges(m, sub.id)).length, 1, 'nothing charged while paused')
  const resumed = await m.client.request('POST', `/v1/subscriptions/${sub.id}/resume`, {
    body: {},
  })
  assert.equal(resumed.status, 200)
  assert.equal(
    (await getSub(m, sub.id)).nextChargeAt,
    '2027-07-01T00:00:00.000Z',
    'due at once on the clock',
  )
  await advanced(m, clock.id, '2027-07-01T00:01:00Z')
  const history = await charges(m, sub.id)
  assert.equal(history.length, 2)
  assert.equal(history[0]?.chargedAt, '2027-07-01T00:00:00.000Z')
  const cancelled = await m.client.request('POST', `/v1/subscriptions/${sub.id}/cancel`, {
    body: { atPeriodEnd: false },
  })
  assert.equal(cancelled.status, 200)
  assert.equal((await getSub(m, sub.id)).cancelledAt, '2027-07-01T00:01:00.000Z')
})

test("webhooks of an advance are delivered as usual, dated at the clock's time", async (t) => {
  const h = await startTestApp(t)
  const m = await newDashboardMerchant(h)
  const receiver = await startReceiver(t)
  const endpoint = await addEndpoint(m, receiver.url)
  const clock = await newClock(m, '2027-02-10T12:00:00Z')
  const { customerId } = await customerWithCard(m.client)
  const sub = await createSubscription(m, customerId, { testClockId: clock.id })
  await advanced(m, clock.id, '2027-04-10T12:00:00Z')
  await reconcile(m)

  // The subscription's own events (its renewal payments' events name it too, in subscriptionId).
  const got = receiver
    .about(sub.id)
    .filter((r) => r.json.type.startsWith('subscription.'))
    .sort((a, b) => a.json.sequence - b.json.sequence)
  assert.equal(
    receiver.about(sub.id).filter((r) => r.json.type === 'payment.captured').length,
    3,
    'each renewal payment names its subscription',
  )
  assert.deepEqual(
    got.map((r) => [r.json.type, r.json.createdAt]),
    [
      ['subscription.created', '2027-02-10T12:00:00.000Z'],
      ['subscription.renewed', '2027-02-10T12:00:00.000Z'],
      ['subscription.renewed', '2027-03-10T12:00:00.000Z'],
      ['subscription.renewed', '2027-04-10T12:00:00.000Z'],
    ],
  )
  for (const r of got) assert.deepEqual(verifyNow(endpoint.secret, r), r.json)
})

test('an acquirer timeout on a clock: settled by the reconciler, recorded by the next advance', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const clock = await newClock(m, '2025-05-05T05:00:00Z')
  const { customerId } = await customerWithCard(m.client, CARDS.timeout)
  const sub = await createSubscription(m, customerId, { testClockId: clock.id })
  await advanced(m, clock.id, '2025-05-05T05:01:00Z')
  assert.equal((await getSub(m, sub.id)).status, 'charging', 'the acquirer has not answered')
  // The real-time reconciler settles the payment (wall time), not the clock's subscription.
  h.clock.advance(10 * 60_000)
  await reconcile(m)
  const [payment] = await paymentsOfCycle(h, m.merchantId, sub.id, 1)
  assert.equal(payment?.status, 'captured')
  assert.equal((await getSub(m, sub.id)).status, 'charging')
  await advanced(m, clock.id, '2025-05-05T05:02:00Z')
  const s = await getSub(m, sub.id)
  assert.equal(s.status, 'active')
  assert.equal(s.cycleNumber, 1)
  const history = await charges(m, sub.id)
  assert.equal(history.length, 1)
  assert.equal(history[0]?.paymentId, payment.id, 'the one payment, adopted')
  assert.equal(history[0]?.chargedAt, '2025-05-05T05:01:00.000Z')
  assert.equal((await paymentsOfCycle(h, m.merchantId, sub.id, 1)).length, 1)
})
