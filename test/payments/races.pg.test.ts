// Goal: the payment races resolve to exactly one outcome on a real server as on PGlite — 20
// identical charges make one payment, 20 captures one set of legs, a capture racing a void
// one winner, duplicate 3DS callbacks the same row, 20 partial refunds never more than
// was captured; partial captures at once never more than the authorization, and refunds
// racing partial captures never more than what was captured at their turn.
// Method: signed HTTP requests fired together (Promise.all); on PostgreSQL they run in
// parallel transactions, which is why this file is *.pg.test.ts (docs/testing.md).
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { auditBooks } from '../../src/modules/audit/index.ts'
import { eventsForResource } from '../../src/modules/events/index.ts'
import { legsForPayment, type LegView } from '../../src/modules/ledger/index.ts'
import { startTestApp } from '../helpers/app.ts'
import type { Kurus } from '../../sdk/index.ts'
import { CARDS, charge, openSession, tokenize } from '../helpers/payments.ts'

interface RefundBody {
  paymentId: string
  status: string
  refundAmount: number
  refundableAmount: number
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

test('20 concurrent identical charges make one payment', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const { transactionId } = await openSession(m.client, 7000)
  const cardToken = await tokenize(m.client, CARDS.frictionless)
  const body = { transactionId, amount: 7000, currency: 'TRY', cardToken }
  const results = await Promise.all(
    Array.from({ length: 20 }, () =>
      m.client.request<{ paymentId: string; status: string }>('POST', '/v1/payments/card', {
        body,
      }),
    ),
  )
  const ids = new Set(results.map((r) => r.body.paymentId))
  assert.equal(ids.size, 1, JSON.stringify(results.map((r) => [r.status, r.body])))
  // Losers see the winner: done (200) or, while its authorization is in flight, pending (202).
  assert.ok(results.every((r) => [200, 201, 202].includes(r.status)))
  assert.equal(results.filter((r) => r.status === 201).length, 1)
})

test('20 concurrent captures leave one winner and one set of legs', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const { res } = await charge(m.client, CARDS.frictionless, 9000, { capture: false })
  const id = res.body.paymentId
  const results = await Promise.all(
    Array.from({ length: 20 }, () =>
      m.client.request<{ status: string }>('POST', `/v1/payments/${id}/capture`, { body: {} }),
    ),
  )
  assert.ok(results.every((r) => r.status === 200 && r.body.status === 'captured'))
  const legs = await legsForPayment(h.deps.db, m.merchantId, id)
  assert.equal(legs.filter((l) => l.accountType === 'buyer_pending').length, 1)
  const captured = (await eventsForResource(h.deps.db, m.merchantId, id)).filter(
    (e) => e.type === 'payment.captured',
  )
  assert.equal(captured.length, 1)
})

test('a capture racing a void: exactly one of them wins', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  for (let round = 0; round < 5; round++) {
    const { res } = await charge(m.client, CARDS.frictionless, 9000, { capture: false })
    const id = res.body.paymentId
    const [cap, vd] = await Promise.all([
      m.client.request<{ status: string }>('POST', `/v1/payments/${id}/capture`, { body: {} }),
      m.client.request<{ status: string }>('POST', `/v1/payments/${id}/void`, { body: {} }),
    ])
    const final = await m.client.request<{ status: string }>('GET', `/v1/payments/${id}`)
    const winners = [cap, vd].filter((r) => r.status === 200)
    assert.equal(winners.length, 1, JSON.stringify([cap, vd].map((r) => [r.status, r.body])))
    assert.equal(winners[0]?.body.status, final.body.status)
    const legs = await legsForPayment(h.deps.db, m.merchantId, id)
    assert.equal(legs.length > 0, final.body.status === 'captured')
  }
})

test('a 3DS challenge passes with the right OTP; duplicate callbacks get the same row', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const { res } = await charge(m.client, CARDS.challenge, 6000)
  assert.equal(res.status, 201)
  assert.equal(res.body.status, 'pending_3ds')
  assert.ok(res.body.correlationId)
  assert.ok(res.body.challengeUrl?.includes(`/3ds/${res.body.paymentId}`))
  const id = res.body.paymentId
  const solved = await m.client.request<{ pares: string; correlationId: string }>(
    'POST',
    `/v1/sandbox/payments/${id}/3ds-challenge`,
    { body: { otp: '123456' } },
  )
  assert.equal(solved.status, 200)
  assert.equal(solved.body.correlationId, res.body.correlationId)

  const forged = await m.client.request<{ code: string }>(
    'POST',
    `/v1/payments/${id}/3ds-callback`,
    {
      body: {
        pares: solved.body.pares.slice(0, -4) + 'AAAA',
        correlationId: solved.body.correlationId,
      },
    },
  )
  assert.equal(forged.status, 400)
  assert.equal(forged.body.code, 'SVC-3DS-3601')
  const unchanged = await m.client.request<{ status: string }>('GET', `/v1/payments/${id}`)
  assert.equal(unchanged.body.status, 'pending_3ds')
  const mismatched = await m.client.request<{ code: string }>(
    'POST',
    `/v1/payments/${id}/3ds-callback`,
    {
      body: { pares: solved.body.pares, correlationId: 'other-correlation' },
    },
  )
  assert.equal(mismatched.status, 400)
  assert.equal(mismatched.body.code, 'SVC-3DS-3601')

  const body = { pares: solved.body.pares, correlationId: solved.body.correlationId }
  const [a, b] = await Promise.all([
    m.client.request<Record<string, unknown>>('POST', `/v1/payments/${id}/3ds-callback`, { body }),
    m.client.request<Record<string, unknown>>('POST', `/v1/payments/${id}/3ds-callback`, { body }),
  ])
  assert.equal(a.status, 200)
  assert.equal(b.status, 200)
  assert.equal(a.body['status'], 'captured')
  assert.deepEqual(a.body, b.body)
  const third = await m.client.request<Record<string, unknown>>(
    'POST',
    `/v1/payments/${id}/3ds-callback`,
    {
      body,
    },
  )
  assert.deepEqual(third.body, a.body)
  const legs = await legsForPayment(h.deps.db, m.merchantId, id)
  assert.equal(legs.filter((l) => l.accountType === 'buyer_pending').length, 1)
})

test('20 parallel partial refunds never exceed the captured amount', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const { res } = await charge(m.client, CARDS.frictionless, 10_000)
  const id = res.body.paymentId
  const results = await Promise.all(
    Array.from({ length: 20 }, () =>
      m.client.request<RefundBody>('POST', `/v1/payments/${id}/refund`, { body: { amount: 900 } }),
    ),
  )
  const ok = results.filter((r) => r.status === 200)
  assert.equal(ok.length, 11, JSON.stringify(results.map((r) => r.status)))
  assert.ok(results.every((r) => r.status === 200 || r.status === 400))
  const got = await m.client.request<{ refundAmount: number; refundableAmount: number }>(
    'GET',
    `/v1/payments/${id}`,
  )
  assert.equal(got.body.refundAmount, 9_900)
  assert.equal(got.body.refundableAmount, 100)
  const legs = await legsForPayment(h.deps.db, m.merchantId, id)
  balanced(legs)
  assert.equal(sum(legs, 'buyer_pending', 'CREDIT'), 9_900)
})

interface CaptureBody {
  status: string
  capturedAmount: number
  refundableAmount: number
  captures: { id: string; amount: number }[]
}

function capture(m: { client: Kurus }, id: string, body: Record<string, unknown> = {}) {
  return m.client.request<CaptureBody>('POST', `/v1/payments/${id}/capture`, { body })
}

async function authorized(m: { client: Kurus }, amount: number) {
  const { res } = await charge(m.client, CARDS.frictionless, amount, { capture: false })
  assert.equal(res.body.status, 'authorized')
  return res.body.paymentId
}

test('concurrent partial captures never capture more than the authorization', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const id = await authorized(m, 10_000)
  const results = await Promise.all(
    Array.from({ length: 5 }, () => capture(m, id, { amount: 3_000, final: false })),
  )
  const codes = results.map((r) => r.status).sort()
  assert.deepEqual(codes, [200, 200, 200, 400, 400], JSON.stringify(results.map((r) => r.body)))
  const got = await m.client.request<CaptureBody>('GET', `/v1/payments/${id}`)
  assert.equal(got.body.status, 'partially_captured')
  assert.equal(got.body.capturedAmount, 9_000)
  assert.equal(got.body.captures.length, 3)
  const legs = await legsForPayment(h.deps.db, m.merchantId, id)
  balanced(legs)
  assert.equal(sum(legs, 'buyer_pending', 'DEBIT'), 9_000)

  // Full captures racing partial ones: the total still stops at the amount.
  const other = await authorized(m, 10_000)
  const mixed = await Promise.all([
    capture(m, other, { amount: 4_000, final: false }),
    capture(m, other),
    capture(m, other, { amount: 4_000, final: false }),
    capture(m, other),
  ])
  assert.ok(mixed.every((r) => [200, 400, 409].includes(r.status)))
  const after = await m.client.request<CaptureBody>('GET', `/v1/payments/${other}`)
  assert.equal(after.body.status, 'captured')
  assert.ok(after.body.capturedAmount <= 10_000)
  const otherLegs = await legsForPayment(h.deps.db, m.merchantId, other)
  assert.equal(sum(otherLegs, 'buyer_pending', 'DEBIT'), after.body.capturedAmount)
  const events = (await eventsForResource(h.deps.db, m.merchantId, other)).filter(
    (e) => e.type === 'payment.captured',
  )
  assert.equal(events.length, after.body.captures.length)
  assert.deepEqual((await auditBooks(h.deps.db)).problems, [])
})

test('refunds racing partial captures never refund more than was captured', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const id = await authorized(m, 10_000)
  assert.equal((await capture(m, id, { amount: 2_000, final: false })).status, 200)
  const results = await Promise.all([
    ...Array.from({ length: 6 }, () =>
      m.client.request<RefundBody>('POST', `/v1/payments/${id}/refund`, { body: { amount: 700 } }),
    ),
    capture(m, id, { amount: 1_000, final: false }),
    capture(m, id, { amount: 1_000, final: false }),
  ])
  assert.ok(
    results.every((r) => r.status === 200 || r.status === 400),
    JSON.stringify(results.map((r) => [r.status, r.body])),
  )
  const got = await m.client.request<CaptureBody & { refundAmount: number }>(
    'GET',
    `/v1/payments/${id}`,
  )
  assert.equal(got.body.capturedAmount, 4_000)
  assert.ok(got.body.refundAmount <= got.body.capturedAmount)
  assert.equal(got.body.refundableAmount, got.body.capturedAmount - got.body.refundAmount)
  const legs = await legsForPayment(h.deps.db, m.merchantId, id)
  balanced(legs)
  assert.equal(sum(legs, 'buyer_pending', 'CREDIT'), got.body.refundAmount)
  assert.deepEqual((await auditBooks(h.deps.db)).problems, [])
})
