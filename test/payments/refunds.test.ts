// Goal: refunds (sync, async, failed), their retry contract and the reconcilers (refunds,
// acquirer timeouts, preauth expiry, session expiry); the 20-way race is in races.pg.test.ts.
// Method: signed HTTP against the real app; time moves with the test clock, never sleeps.
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { test } from 'node:test'
import { eventsForResource } from '../../src/modules/events/index.ts'
import { legsForPayment, type LegView } from '../../src/modules/ledger/index.ts'
import { startTestApp } from '../helpers/app.ts'
import { CARDS, charge, openSession } from '../helpers/payments.ts'

interface RefundBody {
  paymentId: string
  status: string
  refundAmount: number
  refundableAmount: number
  lastRefund: { refundId: string; status: string; amount: number; bankRefundId: string | null }
}

function sum(legs: LegView[], accountType: string, direction: 'DEBIT' | 'CREDIT') {
  return legs
    .filter((l) => l.accountType === accountType && l.direction === direction)
    .reduce((s, l) => s + l.amount, 0)
}

function balanced(legs: LegView[]) {
  const d = legs.filter((l) => l.direction === 'DEBIT').reduce((s, l) => s + l.amount, 0)
  const c = legs.filter((l) => l.direction === 'CREDIT').reduce((s, l) => s + l.amount, 0)
  assert.equal(d, c, 'legs balance')
}

test('partial then full refunds: totals, status, commission back pro rata, legs', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const { res } = await charge(m.client, CARDS.frictionless, 10_000)
  const id = res.body.paymentId
  const commission = res.body.commission
  const part = await m.client.request<RefundBody>('POST', `/v1/payments/${id}/refund`, {
    body: { amount: 3_333, reason: 'eksik ürün' },
  })
  assert.equal(part.status, 200, JSON.stringify(part.body))
  assert.equal(part.body.status, 'captured')
  assert.equal(part.body.refundAmount, 3_333)
  assert.equal(part.body.refundableAmount, 6_667)
  assert.equal(part.body.lastRefund.status, 'completed')
  assert.match(part.body.lastRefund.refundId, /^rfn_/)
  assert.ok(part.body.lastRefund.bankRefundId)

  const rest = await m.client.request<RefundBody>('POST', `/v1/payments/${id}/refund`, { body: {} })
  assert.equal(rest.status, 200)
  assert.equal(rest.body.status, 'refunded')
  assert.equal(rest.body.refundAmount, 10_000)
  assert.equal(rest.body.refundableAmount, 0)
  assert.equal(rest.body.lastRefund.amount, 6_667)

  const legs = await legsForPayment(h.deps.db, m.merchantId, id)
  balanced(legs)
  // The whole commission came back: the platform's commission account nets to zero.
  assert.equal(sum(legs, 'platform_commission', 'CREDIT'), commission)
  assert.equal(sum(legs, 'platform_commission', 'DEBIT'), commission)
  assert.equal(sum(legs, 'buyer_pending', 'CREDIT'), 10_000)

  const list = await m.client.request<{ items: { amount: number; status: string }[] }>(
    'GET',
    `/v1/payments/${id}/refunds`,
  )
  assert.deepEqual(
    list.body.items.map((r) => [r.amount, r.status]),
    [
      [3_333, 'completed'],
      [6_667, 'completed'],
    ],
  )
  const again = await m.client.request<{ code: string }>('POST', `/v1/payments/${id}/refund`, {
    body: { amount: 1 },
  })
  assert.equal(again.status, 409)
  const types = (await eventsForResource(h.deps.db, m.merchantId, id)).map((e) => e.type)
  assert.deepEqual(types, ['payment.captured', 'payment.refunded'])
})

test('refund rules: amount bounds, states, reason truncation, tenancy', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const other = await h.newMerchant()
  const { res } = await charge(m.client, CARDS.frictionless, 5_000)
  const id = res.body.paymentId
  const over = await m.client.request<{ code: string }>('POST', `/v1/payments/${id}/refund`, {
    body: { amount: 5_001 },
  })
  assert.equal(over.status, 400)
  assert.equal(over.body.code, 'SVC-VAL-3001')
  for (const amount of [0, -5, 1.5]) {
    const bad = await m.client.request('POST', `/v1/payments/${id}/refund`, { body: { amount } })
    assert.equal(bad.status, 400, String(amount))
  }
  const foreign = await other.client.request('POST', `/v1/payments/${id}/refund`, { body: {} })
  assert.equal(foreign.status, 404)
  const long = await m.client.request<RefundBody>('POST', `/v1/payments/${id}/refund`, {
    body: { amount: 100, reason: 'ş'.repeat(600) },
  })
  assert.equal(long.status, 200)
  const list = await m.client.request<{ items: { reason: string }[] }>(
    'GET',
    `/v1/payments/${id}/refunds`,
  )
  assert.equal(list.body.items[0]?.reason.length, 500)

  const auth = await charge(m.client, CARDS.frictionless, 5_000, { capture: false })
  const notCaptured = await m.client.request<{ code: string }>(
    'POST',
    `/v1/payments/${auth.res.body.paymentId}/refund`,
    { body: {} },
  )
  assert.equal(notCaptured.status, 409)
  assert.equal(notCaptured.body.code, 'SVC-STATE-3401')
})

test('an async refund is 202 until the reconciler completes it; the same key never refunds twice', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const { res } = await charge(m.client, CARDS.asyncRefund, 8_000)
  const id = res.body.paymentId
  const key = randomUUID()
  const first = await m.client.request<RefundBody>('POST', `/v1/payments/${id}/refund`, {
    body: { amount: 2_000 },
    idempotencyKey: key,
  })
  assert.equal(first.status, 202, JSON.stringify(first.body))
  assert.equal(first.body.lastRefund.status, 'pending')
  assert.equal(first.body.refundAmount, 2_000)
  assert.equal(first.body.refundableAmount, 6_000)
  // Legs post on completion, not while pending.
  assert.equal(sum(await legsForPayment(h.deps.db, m.merchantId, id), 'buyer_pending', 'CREDIT'), 0)

  const retry = await m.client.request<RefundBody>('POST', `/v1/payments/${id}/refund`, {
    body: { amount: 2_000 },
    idempotencyKey: key,
  })
  assert.equal(retry.status, 202)
  assert.equal(retry.body.lastRefund.refundId, first.body.lastRefund.refundId)

  const ran = await m.client.request<{ ran: Record<string, number> }>(
    'POST',
    '/v1/sandbox/reconcile',
    {
      body: {},
    },
  )
  assert.equal(ran.status, 200)
  assert.ok((ran.body.ran['payments.reconcile_refunds'] ?? 0) >= 1)

  const done = await m.client.request<RefundBody>('POST', `/v1/payments/${id}/refund`, {
    body: { amount: 2_000 },
    idempotencyKey: key,
  })
  assert.equal(done.status, 200)
  assert.equal(done.body.lastRefund.refundId, first.body.lastRefund.refundId)
  assert.equal(done.body.lastRefund.status, 'completed')
  const replay = await m.client.request<RefundBody>('POST', `/v1/payments/${id}/refund`, {
    body: { amount: 2_000 },
    idempotencyKey: key,
  })
  assert.equal(replay.headers.get('idempotent-replayed'), 'true')
  assert.deepEqual(replay.body, done.body)
  const list = await m.client.request<{ items: unknown[] }>('GET', `/v1/payments/${id}/refunds`)
  assert.equal(list.body.items.length, 1)
  const legs = await legsForPayment(h.deps.db, m.merchantId, id)
  balanced(legs)
  assert.equal(sum(legs, 'buyer_pending', 'CREDIT'), 2_000)
})

test('an async refund that fails releases the reserved amount', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const { res } = await charge(m.client, CARDS.asyncRefundFails, 8_000)
  const id = res.body.paymentId
  const key = randomUUID()
  const first = await m.client.request<RefundBody>('POST', `/v1/payments/${id}/refund`, {
    body: {},
    idempotencyKey: key,
  })
  assert.equal(first.status, 202)
  assert.equal(first.body.refundableAmount, 0)
  await m.client.request('POST', '/v1/sandbox/reconcile', { body: {} })
  const after = await m.client.request<RefundBody>('POST', `/v1/payments/${id}/refund`, {
    body: {},
    idempotencyKey: key,
  })
  assert.equal(after.status, 200)
  assert.equal(after.body.lastRefund.status, 'failed')
  assert.equal(after.body.refundAmount, 0)
  assert.equal(after.body.refundableAmount, 8_000)
  assert.equal(
    (await legsForPayment(h.deps.db, m.merchantId, id)).filter(
      (l) => l.accountType === 'buyer_pending',
    ).length,
    1,
  )
  const got = await m.client.request<{ status: string; refundableAmount: number }>(
    'GET',
    `/v1/payments/${id}`,
  )
  assert.equal(got.body.status, 'captured')
  assert.equal(got.body.refundableAmount, 8_000)
})

test('the reconciler settles an acquirer timeout without charging twice', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const { res, transactionId, cardToken } = await charge(m.client, CARDS.timeout, 5_000)
  assert.equal(res.status, 202)
  const id = res.body.paymentId
  const ran = await m.client.request<{ ran: Record<string, number> }>(
    'POST',
    '/v1/sandbox/reconcile',
    {
      body: {},
    },
  )
  assert.ok((ran.body.ran['payments.reconcile_pending_payments'] ?? 0) >= 1)
  const got = await m.client.request<{ status: string; authCode: string }>(
    'GET',
    `/v1/payments/${id}`,
  )
  assert.equal(got.body.status, 'captured')
  assert.ok(got.body.authCode)
  const retry = await m.client.request<{ paymentId: string; status: string }>(
    'POST',
    '/v1/payments/card',
    {
      body: { transactionId, amount: 5_000, currency: 'TRY', cardToken },
    },
  )
  assert.equal(retry.status, 200)
  assert.equal(retry.body.paymentId, id)
  assert.equal(retry.body.status, 'captured')
  const legs = await legsForPayment(h.deps.db, m.merchantId, id)
  assert.equal(legs.filter((l) => l.accountType === 'buyer_pending').length, 1)
  const authorizations = await h.deps.db
    .selectFrom('acquirer_sandbox_operations' as never)
    .selectAll()
    .where('payment_id' as never, '=', id as never)
    .where('op' as never, '=', 'authorize' as never)
    .execute()
  assert.equal(authorizations.length, 1)
})

test('preauthorizations are voided after 7 days', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const { res } = await charge(m.client, CARDS.frictionless, 5_000, { capture: false })
  const id = res.body.paymentId
  h.clock.advance(6 * 24 * 3600_000)
  await m.client.request('POST', '/v1/sandbox/reconcile', { body: {} })
  assert.equal(
    (await m.client.request<{ status: string }>('GET', `/v1/payments/${id}`)).body.status,
    'authorized',
  )
  h.clock.advance(24 * 3600_000 + 1000)
  const ran = await m.client.request<{ ran: Record<string, number> }>(
    'POST',
    '/v1/sandbox/reconcile',
    {
      body: {},
    },
  )
  assert.ok((ran.body.ran['payments.expire_authorizations'] ?? 0) >= 1)
  assert.equal(
    (await m.client.request<{ status: string }>('GET', `/v1/payments/${id}`)).body.status,
    'voided',
  )
  const events = await eventsForResource(h.deps.db, m.merchantId, id)
  assert.equal(events.at(-1)?.type, 'payment.voided')
  assert.equal(events.at(-1)?.data['reason'], 'authorization_expired')
})

test('the sweeper marks sessions expired 30 minutes after creation', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const { sessionId } = await openSession(m.client, 1_000)
  const statusOf = async () =>
    (
      await h.deps.db
        .selectFrom('payment_sessions')
        .select('status')
        .where('id', '=', sessionId)
        .executeTakeFirstOrThrow()
    ).status
  h.clock.advance(29 * 60_000)
  await m.client.request('POST', '/v1/sandbox/reconcile', { body: {} })
  assert.equal(await statusOf(), 'active')
  h.clock.advance(60_001)
  await m.client.request('POST', '/v1/sandbox/reconcile', { body: {} })
  assert.equal(await statusOf(), 'expired')
})
