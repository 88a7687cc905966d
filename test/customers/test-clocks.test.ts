// Goal: customers on a sandbox test clock (docs/decisions/0031-test-clocks.md, "Customers on a
// clock") — a card charge for such a customer lives on the clock: authorized at the clock's
// time, left alone by the real-time authorization expiry, and expired (voided, reason
// authorization_expired, dated on the clock) when an advance passes authorized_at + the TTL,
// by the same rule as the reconciler; payments on no clock are not touched by the advance.
// Plus the create's validation: an unknown or another merchant's clock is 404 and creates
// nothing. Method: signed HTTP through app.inject on PGlite, a TTL of 3 days, a clock far from
// the wall clock so that anything done at wall time shows in the dates; the payment's clock and
// its events are read back from the database (the payment API does not show the clock).
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { Kurus } from '../../sdk/index.ts'
import { eventsForResource } from '../../src/modules/events/index.ts'
import { startTestApp, type TestApp, type TestMerchant } from '../helpers/app.ts'
import { CARDS, charge } from '../helpers/payments.ts'

const DAY_MS = 86_400_000
const TTL = { KURUS_AUTHORIZATION_TTL: '3d' }

interface CustomerBody {
  id: string
  testClockId: string | null
  code?: string
}

async function newClock(m: TestMerchant, frozenTime: string): Promise<string> {
  const res = await m.client.request<{ id: string }>('POST', '/v1/sandbox/test-clocks', {
    body: { frozenTime },
  })
  assert.equal(res.status, 201, JSON.stringify(res.body))
  return res.body.id
}

async function advanced(m: TestMerchant, id: string, frozenTime: string) {
  const res = await m.client.request<{ status: string; frozenTime: string }>(
    'POST',
    `/v1/sandbox/test-clocks/${id}/advance`,
    { body: { frozenTime } },
  )
  assert.equal(res.status, 200, JSON.stringify(res.body))
  assert.equal(Date.parse(res.body.frozenTime), Date.parse(frozenTime))
}

function createCustomer(client: Kurus, body: Record<string, unknown>) {
  return client.request<CustomerBody>('POST', '/v1/customers', {
    body: { externalId: `ext-${Math.random().toString(36).slice(2)}`, ...body },
  })
}

async function authorize(client: Kurus, customerId?: string) {
  const { res } = await charge(client, CARDS.frictionless, 5_000, {
    capture: false,
    ...(customerId === undefined ? {} : { customerId }),
  })
  assert.equal(res.status, 201, JSON.stringify(res.body))
  assert.equal(res.body.status, 'authorized')
  return res.body.paymentId
}

async function statusOf(client: Kurus, id: string): Promise<string> {
  const res = await client.request<{ status: string }>('GET', `/v1/payments/${id}`)
  assert.equal(res.status, 200)
  return res.body.status
}

async function reconcile(client: Kurus): Promise<Record<string, number>> {
  const res = await client.request<{ ran: Record<string, number> }>(
    'POST',
    '/v1/sandbox/reconcile',
    { body: {} },
  )
  assert.equal(res.status, 200)
  return res.body.ran
}

function paymentRow(h: TestApp, id: string) {
  return h.deps.db
    .selectFrom('payments')
    .select(['test_clock_id', 'created_at', 'authorized_at', 'status'])
    .where('id', '=', id)
    .executeTakeFirstOrThrow()
}

test('a charge of a customer on a clock is authorized on it and expires only as the clock passes the TTL', async (t) => {
  const h = await startTestApp(t, { env: TTL })
  const m = await h.newMerchant()
  const clock = await newClock(m, '2027-03-01T10:00:00Z')
  const created = await createCustomer(m.client, { testClockId: clock })
  assert.equal(created.status, 201, JSON.stringify(created.body))
  assert.equal(created.body.testClockId, clock)
  const read = await m.client.request<CustomerBody>('GET', `/v1/customers/${created.body.id}`)
  assert.equal(read.body.testClockId, clock)
  const plain = await createCustomer(m.client, {})
  assert.equal(plain.body.testClockId, null)

  const onClock = await authorize(m.client, created.body.id)
  const row = await paymentRow(h, onClock)
  assert.equal(row.test_clock_id, clock)
  assert.equal(row.authorized_at?.toISOString(), '2027-03-01T10:00:00.000Z', 'at the clock time')
  assert.equal(row.created_at.toISOString(), '2027-03-01T10:00:00.000Z')
  const authorizedEvents = await eventsForResource(h.deps.db, m.merchantId, onClock)
  assert.equal(authorizedEvents.at(-1)?.type, 'payment.authorized')
  assert.equal(authorizedEvents.at(-1)?.createdAt.toISOString(), '2027-03-01T10:00:00.000Z')
  // Not on a clock: no customer, and a customer on no clock.
  const onWall = await authorize(m.client)
  const plainCustomers = await authorize(m.client, plain.body.id)
  assert.equal((await paymentRow(h, onWall)).test_clock_id, null)
  assert.equal((await paymentRow(h, plainCustomers)).test_clock_id, null)

  await advanced(m, clock, '2027-03-02T10:00:00Z')
  assert.equal(await statusOf(m.client, onClock), 'authorized', 'one day is within the TTL')
  await advanced(m, clock, '2027-03-06T00:00:00Z')
  assert.equal(await statusOf(m.client, onClock), 'voided')
  const events = await eventsForResource(h.deps.db, m.merchantId, onClock)
  const voided = events.at(-1)
  assert.equal(voided?.type, 'payment.voided')
  assert.equal(voided.data['reason'], 'authorization_expired')
  // At its deadline on the clock (authorized_at + 3 days), as the reconciler would have.
  assert.equal(voided.createdAt.toISOString(), '2027-03-04T10:00:00.000Z')
  assert.equal(events.filter((e) => e.type === 'payment.voided').length, 1)
  // The advance expired nothing on wall time.
  assert.equal(await statusOf(m.client, onWall), 'authorized')
  assert.equal(await statusOf(m.client, plainCustomers), 'authorized')
})

test('the real-time expiry leaves a clock payment alone, whatever the wall time', async (t) => {
  const h = await startTestApp(t, { env: TTL })
  const m = await h.newMerchant()
  // A clock in the past: by wall time its authorization is long expired.
  const clock = await newClock(m, '2025-01-10T00:00:00Z')
  const customer = await createCustomer(m.client, { testClockId: clock })
  const onClock = await authorize(m.client, customer.body.id)
  const onWall = await authorize(m.client)

  h.clock.advance(3 * DAY_MS + 60_000)
  // The count would include other tests' payments (one database per file): statuses tell.
  const ran = await reconcile(m.client)
  assert.ok((ran['payments.expire_authorizations'] ?? 0) >= 1)
  assert.equal(await statusOf(m.client, onWall), 'voided')
  assert.equal(await statusOf(m.client, onClock), 'authorized')

  // The clock's own advance then expires it.
  await advanced(m, clock, '2025-01-14T00:00:00Z')
  assert.equal(await statusOf(m.client, onClock), 'voided')
})

test('a partial capture of a clock payment is dated on the clock, and its rest expires by the clock', async (t) => {
  const h = await startTestApp(t, { env: TTL })
  const m = await h.newMerchant()
  const clock = await newClock(m, '2028-06-01T08:00:00Z')
  const customer = await createCustomer(m.client, { testClockId: clock })
  const id = await authorize(m.client, customer.body.id)
  const cap = await m.client.request<{ status: string }>('POST', `/v1/payments/${id}/capture`, {
    body: { amount: 2_000, final: false },
  })
  assert.equal(cap.status, 200, JSON.stringify(cap.body))
  assert.equal(cap.body.status, 'partially_captured')
  const captured = (await eventsForResource(h.deps.db, m.merchantId, id)).at(-1)
  assert.equal(captured?.type, 'payment.captured')
  assert.equal(captured.createdAt.toISOString(), '2028-06-01T08:00:00.000Z', 'on the clock')

  await advanced(m, clock, '2028-06-10T00:00:00Z')
  const res = await m.client.request<{ status: string; capturedAmount: number }>(
    'GET',
    `/v1/payments/${id}`,
  )
  assert.equal(res.body.status, 'captured')
  assert.equal(res.body.capturedAmount, 2_000)
  const released = (await eventsForResource(h.deps.db, m.merchantId, id)).at(-1)
  assert.equal(released?.type, 'payment.remainder_released')
  assert.equal(released.data['reason'], 'authorization_expired')
  assert.equal(released.data['releasedAmount'], 3_000)
  assert.equal(released.createdAt.toISOString(), '2028-06-04T08:00:00.000Z')
})

test('a customer on an unknown or another merchant clock is 404 and nothing is created', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const other = await h.newMerchant()
  const theirs = await newClock(other, '2027-01-01T00:00:00Z')
  for (const testClockId of [theirs, 'clk_doesnotexist0000000000']) {
    const res = await createCustomer(m.client, { externalId: 'same-ext', testClockId })
    assert.equal(res.status, 404, testClockId)
    assert.equal(res.body.code, 'SVC-RES-3301')
  }
  const malformed = await createCustomer(m.client, { testClockId: 'not-a-clock' })
  assert.equal(malformed.status, 400)
  const list = await m.client.request<{ items: unknown[] }>('GET', '/v1/customers')
  assert.deepEqual(list.body.items, [])
  // The external id was never taken: the create on no clock succeeds.
  const ok = await createCustomer(m.client, { externalId: 'same-ext' })
  assert.equal(ok.status, 201)
})
