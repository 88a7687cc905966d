// Goal: a charge or a refund interrupted at any step (after the intent, after the acquirer,
// before the commit) completes exactly once when retried with the same Idempotency-Key, both
// when the step throws and when the process dies there; and keys expire after 24 h.
// Method: fail points armed in-process (throw) against the real app on PostgreSQL with a
// moved clock, and through KURUS_FAILPOINTS (exit = SIGKILL) in a real API process.
import assert from 'node:assert/strict'
import { after, test } from 'node:test'
import { sql } from 'kysely'
import {
  armFailpoint,
  disarmAllFailpoints,
  failpointHits,
  type FailpointName,
} from '../../src/platform/failpoints.ts'
import type { Kurus } from '../../sdk/index.ts'
import { startTestApp, type TestApp } from '../helpers/app.ts'
import { createTestDatabase } from '../helpers/db.ts'
import { CARDS, openSession, tokenize } from '../helpers/payments.ts'
import {
  assertInvariants,
  drain,
  exited,
  fastForwardAbandoned,
  newKey,
  newMerchant,
  send,
  Service,
} from './_harness.ts'

after(() => disarmAllFailpoints())

interface Charged {
  paymentId: string
  status: string
  code?: string
}

/** Retries with the same key until the answer is final, running the reconcilers between. */
async function untilFinal(
  h: TestApp,
  client: Kurus,
  method: string,
  path: string,
  body: unknown,
  key: string,
) {
  for (let i = 0; i < 6; i++) {
    const res = await client.request<Charged>(method, path, { body, idempotencyKey: key })
    if (res.status !== 202 && res.status < 500) return res
    // The service takes abandoned work over after 60 s: move the clock, not the test.
    h.clock.advance(61_000)
    const ran = await client.request('POST', '/v1/sandbox/reconcile', { body: {} })
    assert.equal(ran.status, 200)
  }
  assert.fail(`${method} ${path} never reached a final answer`)
}

async function countRows(h: TestApp, query: ReturnType<typeof sql<{ n: number }>>) {
  const { rows } = await query.execute(h.deps.db)
  return Number(rows[0]?.n)
}

const CHARGE_STEPS: FailpointName[] = [
  'charge.after_intent',
  'charge.after_acquirer',
  'charge.before_commit',
]

for (const step of CHARGE_STEPS) {
  test(`a charge failing at ${step} completes exactly once on retry with its key`, async (t) => {
    const h = await startTestApp(t)
    const m = await h.newMerchant()
    const { transactionId } = await openSession(m.client, 12_345)
    const cardToken = await tokenize(m.client, CARDS.frictionless)
    const body = { transactionId, amount: 12_345, currency: 'TRY', cardToken }
    const key = newKey()

    const hits = failpointHits(step)
    armFailpoint(step, { action: 'throw', times: 1 })
    const first = await m.client.request<Charged>('POST', '/v1/payments/card', {
      body,
      idempotencyKey: key,
    })
    assert.equal(first.status, 500, JSON.stringify(first.body))
    assert.equal(first.body.code, 'SVC-INT-9001')
    assert.equal(failpointHits(step), hits + 1)

    const done = await untilFinal(h, m.client, 'POST', '/v1/payments/card', body, key)
    assert.ok([200, 201].includes(done.status), JSON.stringify(done.body))
    assert.equal(done.body.status, 'captured')
    // Acknowledged now: the same key replays verbatim, whatever happens after.
    const replay = await m.client.request<Charged>('POST', '/v1/payments/card', {
      body,
      idempotencyKey: key,
    })
    assert.equal(replay.status, done.status)
    assert.equal(replay.headers.get('idempotent-replayed'), 'true')
    assert.deepEqual(replay.body, done.body)

    const captured = await countRows(
      h,
      sql<{ n: number }>`select count(*)::int as n from payments
        where merchant_id = ${m.merchantId} and transaction_id = ${transactionId}
          and status = 'captured'`,
    )
    assert.equal(captured, 1)
    const approvals = await countRows(
      h,
      sql<{ n: number }>`select count(*)::int as n from acquirer_sandbox_operations
        where merchant_id = ${m.merchantId} and op = 'authorize' and status = 'approved'`,
    )
    assert.equal(approvals, 1, 'the acquirer approved one authorization')
    await assertInvariants(h.deps.db, step)
  })
}

const REFUND_STEPS: FailpointName[] = [
  'refund.after_reserve',
  'refund.after_acquirer',
  'refund.before_commit',
]

for (const step of REFUND_STEPS) {
  test(`a refund failing at ${step} completes exactly once on retry with its key`, async (t) => {
    const h = await startTestApp(t)
    const m = await h.newMerchant()
    const { transactionId } = await openSession(m.client, 10_000)
    const cardToken = await tokenize(m.client, CARDS.frictionless)
    const charged = await m.client.request<Charged>('POST', '/v1/payments/card', {
      body: { transactionId, amount: 10_000, currency: 'TRY', cardToken },
    })
    assert.equal(charged.status, 201)
    const path = `/v1/payments/${charged.body.paymentId}/refund`
    const body = { amount: 3_000 }
    const key = newKey()

    armFailpoint(step, { action: 'throw', times: 1 })
    const first = await m.client.request<Charged>('POST', path, { body, idempotencyKey: key })
    assert.equal(first.status, 500, JSON.stringify(first.body))
    const done = await untilFinal(h, m.client, 'POST', path, body, key)
    assert.equal(done.status, 200, JSON.stringify(done.body))

    const refunds = await countRows(
      h,
      sql<{ n: number }>`select count(*)::int as n from refunds
        where payment_id = ${charged.body.paymentId} and status = 'completed' and amount = 3000`,
    )
    assert.equal(refunds, 1)
    const total = await countRows(
      h,
      sql<{
        n: number
      }>`select count(*)::int as n from refunds where payment_id = ${charged.body.paymentId}`,
    )
    assert.equal(total, 1, 'one refund record for one key')
    await assertInvariants(h.deps.db, step)
  })
}

test('Idempotency-Keys expire after 24 hours (moved clock); the transactionId fence still holds', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const cardToken = await tokenize(m.client, CARDS.frictionless)
  const charge = async (transactionId: string, key: string) =>
    m.client.request<Charged>('POST', '/v1/payments/card', {
      body: { transactionId, amount: 5_000, currency: 'TRY', cardToken },
      idempotencyKey: key,
    })

  const key = newKey()
  const s1 = await openSession(m.client, 5_000)
  const first = await charge(s1.transactionId, key)
  assert.equal(first.status, 201)
  const s2 = await openSession(m.client, 5_000)
  const reused = await charge(s2.transactionId, key)
  assert.equal(reused.status, 409)
  assert.equal(reused.body.code, 'SVC-GW-2001')

  h.clock.advance(24 * 60 * 60 * 1000 + 60_000)
  // Expired: the key is free for another payload, which makes its own payment.
  const s3 = await openSession(m.client, 5_000)
  const later = await charge(s3.transactionId, key)
  assert.equal(later.status, 201, JSON.stringify(later.body))
  assert.notEqual(later.body.paymentId, first.body.paymentId)

  // An expired key with the original payload is not a second charge: the fence answers.
  const other = newKey()
  const s4 = await openSession(m.client, 5_000)
  const once = await charge(s4.transactionId, other)
  assert.equal(once.status, 201)
  h.clock.advance(24 * 60 * 60 * 1000 + 60_000)
  const again = await charge(s4.transactionId, other)
  assert.equal(again.status, 200, JSON.stringify(again.body))
  assert.equal(again.headers.get('idempotent-replayed'), null)
  assert.equal(again.body.paymentId, once.body.paymentId)
  await assertInvariants(h.deps.db)
})

test('the API process killed at each charge and refund step: retries complete exactly once', async (t) => {
  const db = await createTestDatabase()
  assert.ok(db.url)
  const service = await Service.create({ databaseUrl: db.url, workers: 0 })
  t.after(async () => {
    await service.stop()
    await db.drop()
  })
  const crashAt = async (spec: string) => {
    await service.killApi()
    await fastForwardAbandoned(db.handle.db)
    await service.startApi({ KURUS_FAILPOINTS: spec })
  }
  await service.startApi()
  const m = await newMerchant(service.url)
  /** The request dies with the process: no answer, and the API was SIGKILLed by its fail point. */
  const diesOn = async (call: { path: string; body: unknown; key: string }) => {
    const api = service.api
    assert.ok(api)
    const res = await send(m.client, 'POST', call.path, call, { deadlineMs: 0 })
    assert.equal(res.kind, 'info', JSON.stringify(res))
    await exited(api)
    assert.equal(api.signalCode, 'SIGKILL')
  }
  const cardToken = await tokenize(m.client, CARDS.frictionless)

  // A captured payment to refund later.
  const s0 = await openSession(m.client, 20_000)
  const paid = await m.client.request<Charged>('POST', '/v1/payments/card', {
    body: { transactionId: s0.transactionId, amount: 20_000, currency: 'TRY', cardToken },
  })
  assert.equal(paid.status, 201)

  const pending: { path: string; body: unknown; key: string }[] = []
  for (const spec of [
    'charge.after_intent:exit*1',
    'charge.after_acquirer:exit*1',
    'charge.before_commit:exit*1',
  ]) {
    await crashAt(spec)
    const session = await openSession(m.client, 7_000)
    const call = {
      path: '/v1/payments/card',
      body: { transactionId: session.transactionId, amount: 7_000, currency: 'TRY', cardToken },
      key: newKey(),
    }
    pending.push(call)
    await diesOn(call)
  }
  await crashAt('refund.after_acquirer:exit*1')
  const refund = {
    path: `/v1/payments/${paid.body.paymentId}/refund`,
    body: { amount: 4_000 },
    key: newKey(),
  }
  pending.push(refund)
  await diesOn(refund)

  await crashAt('')
  for (const call of pending) {
    let res = await send<Charged>(m.client, 'POST', call.path, call, {
      untilFinal: true,
      deadlineMs: 2_000,
    })
    for (let i = 0; i < 5 && res.kind === 'info'; i++) {
      await drain(db.handle.db, m.client, { rounds: 1 })
      res = await send<Charged>(m.client, 'POST', call.path, call, {
        untilFinal: true,
        deadlineMs: 2_000,
      })
    }
    assert.equal(res.kind, 'ok', `${call.path}: ${JSON.stringify(res)}`)
    if (call.path.endsWith('/card')) assert.equal(res.body.status, 'captured')
  }
  assert.deepEqual(await drain(db.handle.db, m.client), [])
  const { rows } = await sql<{ tx: string; n: number }>`
    select transaction_id as tx, count(*)::int as n from payments
    where status = 'captured' group by transaction_id`.execute(db.handle.db)
  assert.equal(rows.length, 4)
  assert.ok(rows.every((r) => r.n === 1))
  await assertInvariants(db.handle.db, service.events.join('\n'))
})
