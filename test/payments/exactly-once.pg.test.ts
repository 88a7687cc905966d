// Goal (issue 35, decision 0035): a charge, capture or void whose first attempt failed after
// its claim committed is resumed by a retry with the same Idempotency-Key — the same payment,
// the same capture, never a second one and never a refusal of what was applied — at once,
// without waiting for any stale window; and once an answer was recorded, every retry gets
// it byte for byte (status, body, X-Request-Id).
// Method: fail points armed in-process (throw) between the phases, against the real app.
import assert from 'node:assert/strict'
import { after, test } from 'node:test'
import { sql } from 'kysely'
import {
  armFailpoint,
  disarmAllFailpoints,
  type FailpointName,
} from '../../src/platform/failpoints.ts'
import { Kurus } from '../../sdk/index.ts'
import { startTestApp, type TestApp, type TestMerchant } from '../helpers/app.ts'
import { CARDS, openSession, tokenize } from '../helpers/payments.ts'
import { randomUUID } from 'node:crypto'

after(() => disarmAllFailpoints())

interface Raw {
  status: number
  text: string
  requestId: string | null
  replayed: boolean
}

/** A client whose answers come back as raw text, so replays compare byte for byte. */
function rawClient(h: TestApp, m: TestMerchant) {
  let last = ''
  const client = new Kurus({
    publicKey: m.publicKey,
    secretKey: m.secretKey,
    baseUrl: h.url,
    fetch: async (input, init) => {
      const res = await fetch(input, init)
      last = await res.clone().text()
      return res
    },
  })
  return async (path: string, body: unknown, key: string): Promise<Raw> => {
    const res = await client.request('POST', path, { body, idempotencyKey: key })
    return {
      status: res.status,
      text: last,
      requestId: res.requestId,
      replayed: res.headers.get('idempotent-replayed') === 'true',
    }
  }
}

async function count(h: TestApp, query: ReturnType<typeof sql<{ n: number }>>) {
  const { rows } = await query.execute(h.deps.db)
  return Number(rows[0]?.n)
}

async function chargeSetup(h: TestApp, amount: number) {
  const m = await h.newMerchant()
  const { transactionId } = await openSession(m.client, amount)
  const cardToken = await tokenize(m.client, CARDS.frictionless)
  return { m, post: rawClient(h, m), transactionId, cardToken }
}

const BEFORE_OUTCOME: FailpointName[] = [
  'charge.after_intent',
  'charge.after_acquirer',
  'charge.before_commit',
]

for (const step of BEFORE_OUTCOME) {
  test(`a charge failing at ${step} is resumed by its retry: the same payment, at once`, async (t) => {
    const h = await startTestApp(t)
    const { m, post, transactionId, cardToken } = await chargeSetup(h, 12_345)
    const body = { transactionId, amount: 12_345, currency: 'TRY', cardToken, capture: false }
    const key = randomUUID()
    armFailpoint(step, { action: 'throw', times: 1 })
    const first = await post('/v1/payments/card', body, key)
    disarmAllFailpoints()
    assert.equal(first.status, 500, first.text)

    // No clock moved, no reconciler run: the retry resumes the claimed payment now.
    const retry = await post('/v1/payments/card', body, key)
    assert.equal(retry.status, 201, retry.text)
    const paymentId = (JSON.parse(retry.text) as { paymentId: string }).paymentId
    const payments = await count(
      h,
      sql<{ n: number }>`select count(*)::int as n from payments
        where merchant_id = ${m.merchantId} and transaction_id = ${transactionId}`,
    )
    assert.equal(payments, 1, 'one Idempotency-Key, one payment')
    const authorizations = await count(
      h,
      sql<{ n: number }>`select count(*)::int as n from acquirer_sandbox_operations
        where payment_id = ${paymentId} and op = 'authorize'`,
    )
    assert.equal(authorizations, 1, 'the bank saw one authorization')

    const replay = await post('/v1/payments/card', body, key)
    assert.equal(replay.replayed, true)
    assert.equal(replay.status, retry.status)
    assert.equal(replay.text, retry.text)
    assert.equal(replay.requestId, retry.requestId)
  })
}

test('a charge failing after its outcome committed answers the recorded answer, and so does every retry', async (t) => {
  const h = await startTestApp(t)
  const { post, transactionId, cardToken } = await chargeSetup(h, 5_000)
  const body = { transactionId, amount: 5_000, currency: 'TRY', cardToken }
  const key = randomUUID()
  armFailpoint('charge.after_commit', { action: 'throw', times: 1 })
  const first = await post('/v1/payments/card', body, key)
  disarmAllFailpoints()
  // The answer was written with the effect: it goes out, not the failure after it.
  assert.equal(first.status, 201, first.text)
  const retry = await post('/v1/payments/card', body, key)
  assert.equal(retry.replayed, true)
  assert.equal(retry.status, 201)
  assert.equal(retry.text, first.text)
  assert.equal(retry.requestId, first.requestId)
})

test('a declined charge records its 402 with the outcome; the retry replays it verbatim', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const post = rawClient(h, m)
  const { transactionId } = await openSession(m.client, 7_000)
  const cardToken = await tokenize(m.client, CARDS.declined)
  const body = { transactionId, amount: 7_000, currency: 'TRY', cardToken, threeDSecure: false }
  const key = randomUUID()
  const first = await post('/v1/payments/card', body, key)
  assert.equal(first.status, 402, first.text)
  const retry = await post('/v1/payments/card', body, key)
  assert.equal(retry.replayed, true)
  assert.equal(retry.text, first.text)
  assert.equal(retry.requestId, first.requestId)
})

async function authorized(h: TestApp, amount: number) {
  const { m, post, transactionId, cardToken } = await chargeSetup(h, amount)
  const charged = await post(
    '/v1/payments/card',
    { transactionId, amount, currency: 'TRY', cardToken, capture: false },
    randomUUID(),
  )
  assert.equal(charged.status, 201, charged.text)
  return { m, post, paymentId: (JSON.parse(charged.text) as { paymentId: string }).paymentId }
}

const CAPTURE_STEPS: FailpointName[] = [
  'capture.after_claim',
  'capture.after_acquirer',
  'capture.before_commit',
]

for (const step of CAPTURE_STEPS) {
  test(`a partial final capture failing at ${step} is resumed, never refused as "already captured"`, async (t) => {
    const h = await startTestApp(t)
    const { post, paymentId } = await authorized(h, 20_000)
    const path = `/v1/payments/${paymentId}/capture`
    const body = { amount: 12_271, final: true }
    const key = randomUUID()
    armFailpoint(step, { action: 'throw', times: 1 })
    const first = await post(path, body, key)
    disarmAllFailpoints()
    assert.equal(first.status, 500, first.text)

    const retry = await post(path, body, key)
    assert.equal(retry.status, 200, retry.text)
    const answered = JSON.parse(retry.text) as { status: string; capturedAmount: number }
    assert.equal(answered.status, 'captured')
    assert.equal(answered.capturedAmount, 12_271)
    const captures = await count(
      h,
      sql<{ n: number }>`select count(*)::int as n from acquirer_sandbox_operations
        where payment_id = ${paymentId} and op = 'capture'`,
    )
    assert.equal(captures, 1, 'the bank captured once')
    const replay = await post(path, body, key)
    assert.equal(replay.replayed, true)
    assert.equal(replay.text, retry.text)
    assert.equal(replay.requestId, retry.requestId)
  })
}

test('a capture failing after its outcome committed answers what it recorded', async (t) => {
  const h = await startTestApp(t)
  const { post, paymentId } = await authorized(h, 9_000)
  const path = `/v1/payments/${paymentId}/capture`
  const key = randomUUID()
  armFailpoint('capture.after_commit', { action: 'throw', times: 1 })
  const first = await post(path, { amount: 4_000, final: true }, key)
  disarmAllFailpoints()
  assert.equal(first.status, 200, first.text)
  const retry = await post(path, { amount: 4_000, final: true }, key)
  assert.equal(retry.replayed, true)
  assert.equal(retry.text, first.text)
  assert.equal(retry.requestId, first.requestId)
})

async function captured(h: TestApp, amount: number, card: string = CARDS.frictionless) {
  const m = await h.newMerchant()
  const post = rawClient(h, m)
  const { transactionId } = await openSession(m.client, amount)
  const cardToken = await tokenize(m.client, card)
  const charged = await post(
    '/v1/payments/card',
    { transactionId, amount, currency: 'TRY', cardToken },
    randomUUID(),
  )
  assert.equal(charged.status, 201, charged.text)
  return { m, post, paymentId: (JSON.parse(charged.text) as { paymentId: string }).paymentId }
}

interface RefundAnswerBody {
  status: string
  refundAmount: number
  refundableAmount: number
  lastRefund: { refundId: string; status: string; amount: number }
}

async function refundsOf(h: TestApp, paymentId: string) {
  const ours = await count(
    h,
    sql<{ n: number }>`select count(*)::int as n from refunds where payment_id = ${paymentId}`,
  )
  const atBank = await count(
    h,
    sql<{ n: number }>`select count(*)::int as n from acquirer_sandbox_operations
      where payment_id = ${paymentId} and op = 'refund'`,
  )
  return { ours, atBank }
}

const REFUND_STEPS: FailpointName[] = [
  'refund.after_reserve',
  'refund.after_acquirer',
  'refund.before_commit',
]

for (const step of REFUND_STEPS) {
  for (const whole of [false, true]) {
    const kind = whole ? 'full' : 'partial'
    test(`a ${kind} refund failing at ${step} is resumed by its retry: the same refund, never refused`, async (t) => {
      const h = await startTestApp(t)
      const { post, paymentId } = await captured(h, 10_000)
      const path = `/v1/payments/${paymentId}/refund`
      const body = whole ? {} : { amount: 3_500 }
      const key = randomUUID()
      armFailpoint(step, { action: 'throw', times: 1 })
      const first = await post(path, body, key)
      disarmAllFailpoints()
      assert.equal(first.status, 500, first.text)

      // No clock moved, no reconciler run: the retry carries the claimed refund on now. A
      // full refund whose money the bank already returned is never "not refundable".
      const retry = await post(path, body, key)
      assert.equal(retry.status, 200, retry.text)
      const answered = JSON.parse(retry.text) as RefundAnswerBody
      assert.equal(answered.lastRefund.status, 'completed')
      assert.equal(answered.lastRefund.amount, whole ? 10_000 : 3_500)
      assert.equal(answered.status, whole ? 'refunded' : 'captured')
      assert.deepEqual(await refundsOf(h, paymentId), { ours: 1, atBank: 1 })

      const replay = await post(path, body, key)
      assert.equal(replay.replayed, true)
      assert.equal(replay.status, 200)
      assert.equal(replay.text, retry.text)
      assert.equal(replay.requestId, retry.requestId)
    })
  }
}

test('a refund failing after its outcome committed answers what it recorded, and so does every retry', async (t) => {
  const h = await startTestApp(t)
  const { post, paymentId } = await captured(h, 6_000)
  const path = `/v1/payments/${paymentId}/refund`
  const key = randomUUID()
  armFailpoint('refund.after_commit', { action: 'throw', times: 1 })
  const first = await post(path, { amount: 2_000 }, key)
  disarmAllFailpoints()
  // The answer was written with the refund's legs and events: it goes out, not the failure.
  assert.equal(first.status, 200, first.text)
  const retry = await post(path, { amount: 2_000 }, key)
  assert.equal(retry.replayed, true)
  assert.equal(retry.text, first.text)
  assert.equal(retry.requestId, first.requestId)
  assert.deepEqual(await refundsOf(h, paymentId), { ours: 1, atBank: 1 })
})

test('an async refund failing after the bank took it: the retry answers the same refund 202, then 200 once settled', async (t) => {
  const h = await startTestApp(t)
  const { m, post, paymentId } = await captured(h, 8_000, CARDS.asyncRefund)
  const path = `/v1/payments/${paymentId}/refund`
  const body = { amount: 3_000 }
  const key = randomUUID()
  armFailpoint('refund.after_acquirer', { action: 'throw', times: 1 })
  const first = await post(path, body, key)
  disarmAllFailpoints()
  assert.equal(first.status, 500, first.text)

  const retry = await post(path, body, key)
  assert.equal(retry.status, 202, retry.text)
  const pending = JSON.parse(retry.text) as RefundAnswerBody
  assert.equal(pending.lastRefund.status, 'pending')
  assert.deepEqual(await refundsOf(h, paymentId), { ours: 1, atBank: 1 })

  const ran = await m.client.request('POST', '/v1/sandbox/reconcile', { body: {} })
  assert.equal(ran.status, 200)
  const settled = await post(path, body, key)
  assert.equal(settled.status, 200, settled.text)
  const done = JSON.parse(settled.text) as RefundAnswerBody
  assert.equal(done.lastRefund.refundId, pending.lastRefund.refundId)
  assert.equal(done.lastRefund.status, 'completed')
  const replay = await post(path, body, key)
  assert.equal(replay.replayed, true)
  assert.equal(replay.text, settled.text)
  assert.equal(replay.requestId, settled.requestId)
  assert.deepEqual(await refundsOf(h, paymentId), { ours: 1, atBank: 1 })
})

test('a refund the bank refuses fails with its reservation released, and the refusal is the recorded answer', async (t) => {
  const h = await startTestApp(t)
  const { post, paymentId } = await captured(h, 5_000)
  // The bank forgets the capture (as a bank whose books disagree with ours would): it refuses.
  await sql`update acquirer_sandbox_operations set capture = false
    where payment_id = ${paymentId} and op = 'authorize'`.execute(h.deps.db)
  await sql`delete from acquirer_sandbox_operations
    where payment_id = ${paymentId} and op = 'capture'`.execute(h.deps.db)
  const path = `/v1/payments/${paymentId}/refund`
  const key = randomUUID()
  const first = await post(path, { amount: 1_000 }, key)
  assert.equal(first.status, 409, first.text)
  const { rows } = await sql<{ status: string }>`select status from refunds
    where payment_id = ${paymentId}`.execute(h.deps.db)
  assert.deepEqual(
    rows.map((r) => r.status),
    ['failed'],
  )
  const payment = await sql<{ refund_reserved_minor: number }>`select refund_reserved_minor
    from payments where id = ${paymentId}`.execute(h.deps.db)
  assert.equal(Number(payment.rows[0]?.refund_reserved_minor), 0)
  const retry = await post(path, { amount: 1_000 }, key)
  assert.equal(retry.replayed, true)
  assert.equal(retry.text, first.text)
  assert.equal(retry.requestId, first.requestId)
})

async function challenged(h: TestApp, amount: number) {
  const { m, post, transactionId } = await chargeSetup(h, amount)
  const cardToken = await tokenize(m.client, CARDS.challenge)
  const charged = await post(
    '/v1/payments/card',
    { transactionId, amount, currency: 'TRY', cardToken },
    randomUUID(),
  )
  assert.equal(charged.status, 201, charged.text)
  const { paymentId } = JSON.parse(charged.text) as { paymentId: string }
  const solved = await m.client.request<{ pares: string; correlationId: string }>(
    'POST',
    `/v1/sandbox/payments/${paymentId}/3ds-challenge`,
    { body: { otp: '123456' } },
  )
  assert.equal(solved.status, 200)
  return { post, paymentId, body: solved.body }
}

const THREE_DS_STEPS: FailpointName[] = [
  '3ds.after_claim',
  'charge.after_acquirer',
  'charge.before_commit',
]

for (const step of THREE_DS_STEPS) {
  test(`a 3-D Secure completion failing at ${step} is resumed by its retry: authorized once`, async (t) => {
    const h = await startTestApp(t)
    const { post, paymentId, body } = await challenged(h, 6_500)
    const path = `/v1/payments/${paymentId}/3ds-callback`
    const key = randomUUID()
    armFailpoint(step, { action: 'throw', times: 1 })
    const first = await post(path, body, key)
    disarmAllFailpoints()
    assert.equal(first.status, 500, first.text)

    const retry = await post(path, body, key)
    assert.equal(retry.status, 200, retry.text)
    assert.equal((JSON.parse(retry.text) as { status: string }).status, 'captured')
    const authorizations = await count(
      h,
      sql<{ n: number }>`select count(*)::int as n from acquirer_sandbox_operations
        where payment_id = ${paymentId} and op = 'authorize'`,
    )
    assert.equal(authorizations, 1, 'the bank saw one authorization')
    const replay = await post(path, body, key)
    assert.equal(replay.replayed, true)
    assert.equal(replay.text, retry.text)
    assert.equal(replay.requestId, retry.requestId)
  })
}

test('a 3-D Secure completion failing after its outcome committed answers what it recorded', async (t) => {
  const h = await startTestApp(t)
  const { post, paymentId, body } = await challenged(h, 4_400)
  const path = `/v1/payments/${paymentId}/3ds-callback`
  const key = randomUUID()
  armFailpoint('charge.after_commit', { action: 'throw', times: 1 })
  const first = await post(path, body, key)
  disarmAllFailpoints()
  assert.equal(first.status, 200, first.text)
  const retry = await post(path, body, key)
  assert.equal(retry.replayed, true)
  assert.equal(retry.text, first.text)
  assert.equal(retry.requestId, first.requestId)
})
