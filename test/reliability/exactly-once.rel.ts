// Goal (issue 35, decision 0035): the API process SIGKILLed between every phase of a charge
// and of a partial final capture — after the claim, after the bank, before and after the
// outcome commit, before and after the answer is flushed to the socket. For each, the retry
// with the same Idempotency-Key is answered within seconds of the process coming back (no
// stale window moved, no reconciler run), gets the first answer byte for byte when one left
// (status, body, X-Request-Id), and otherwise the one execution: one payment per key and per
// transactionId, one authorization and one capture at the bank.
// Method: the service as real processes on PostgreSQL, fail points armed through
// KURUS_FAILPOINTS (exit = SIGKILL), a client that keeps the raw bytes of every answer.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { sql } from 'kysely'
import { setTimeout as delay } from 'node:timers/promises'
import { createTestDatabase } from '../helpers/db.ts'
import { CARDS, openSession, tokenize } from '../helpers/payments.ts'
import {
  assertInvariants,
  dieAtFailpoint,
  newKey,
  newMerchant,
  rawPoster,
  Service,
  type RawAnswer,
} from './_harness.ts'

/** A retry must be answered within this long of the API being back. */
const RESUME_WITHIN_MS = 10_000

test('SIGKILL between every phase of a charge and a capture: the retry resumes, exactly once', async (t) => {
  const db = await createTestDatabase()
  assert.ok(db.url)
  const service = await Service.create({ databaseUrl: db.url, workers: 0 })
  t.after(async () => {
    await service.stop()
    await db.drop()
  })
  await service.startApi()
  const m = await newMerchant(service.url)
  const post = rawPoster(service.url, m)
  /** Retries (409 in progress, 5xx, no answer) until a final answer; how long it took. */
  const retry = async (path: string, body: unknown, key: string) => {
    const started = Date.now()
    for (;;) {
      const res = await post(path, body, key)
      const code = res ? (JSON.parse(res.text || '{}') as { code?: string }).code : undefined
      if (res && res.status < 500 && res.status !== 202 && code !== 'SVC-GW-2002') {
        return { res, ms: Date.now() - started }
      }
      assert.ok(Date.now() - started < 60_000, `no final answer: ${JSON.stringify(res)}`)
      await delay(100)
    }
  }
  const count = async (query: ReturnType<typeof sql<{ n: number }>>) =>
    Number((await query.execute(db.handle.db)).rows[0]?.n)
  const cardToken = await tokenize(m.client, CARDS.frictionless)

  const dieAt = (spec: string, call: () => Promise<RawAnswer | null>) =>
    dieAtFailpoint(service, spec, call)

  const PHASES = ['after_intent', 'after_acquirer', 'before_commit', 'after_commit']
  const charges = [
    ...PHASES.map((p) => `charge.${p}:exit*1`),
    'answer.before_flush:exit*1',
    'answer.after_flush:exit*1',
  ]
  // KURUS_REL_ONCE_PART=charge|capture runs one half (a slow machine's debugging aid).
  const part = process.env['KURUS_REL_ONCE_PART'] ?? ''
  for (const spec of part === 'capture' ? [] : charges) {
    const { transactionId } = await openSession(m.client, 7_000)
    const body = { transactionId, amount: 7_000, currency: 'TRY', cardToken }
    const key = newKey()
    const first = await dieAt(spec, () => post('/v1/payments/card', body, key))
    const { res, ms } = await retry('/v1/payments/card', body, key)
    assert.ok(ms < RESUME_WITHIN_MS, `${spec}: answered after ${ms} ms`)
    assert.equal(res.status, 201, `${spec}: ${res.text}`)
    if (first) {
      // The first answer left before the kill: the retry is that answer, byte for byte.
      assert.equal(spec, 'answer.after_flush:exit*1', `${spec}: an answer left`)
      assert.equal(res.text, first.text)
      assert.equal(res.requestId, first.requestId)
      assert.equal(res.status, first.status)
    }
    const again = await retry('/v1/payments/card', body, key)
    assert.equal(again.res.replayed, true)
    assert.equal(again.res.text, res.text)
    assert.equal(again.res.requestId, res.requestId)
    const payments = await count(sql<{ n: number }>`select count(*)::int as n from payments
      where merchant_id = ${m.merchantId} and transaction_id = ${transactionId}`)
    assert.equal(payments, 1, `${spec}: one transactionId, one payment`)
  }

  const captures = [
    'capture.after_claim:exit*1',
    'capture.after_acquirer:exit*1',
    'capture.before_commit:exit*1',
    'capture.after_commit:exit*1',
    'answer.before_flush:exit*1',
    'answer.after_flush:exit*1',
  ]
  for (const spec of part === 'charge' ? [] : captures) {
    const { transactionId } = await openSession(m.client, 20_000)
    const charged = await post(
      '/v1/payments/card',
      { transactionId, amount: 20_000, currency: 'TRY', cardToken, capture: false },
      newKey(),
    )
    assert.equal(charged?.status, 201)
    const paymentId = (JSON.parse(charged.text) as { paymentId: string }).paymentId
    const path = `/v1/payments/${paymentId}/capture`
    const body = { amount: 12_271, final: true }
    const key = newKey()
    const first = await dieAt(spec, () => post(path, body, key))
    const { res, ms } = await retry(path, body, key)
    assert.ok(ms < RESUME_WITHIN_MS, `${spec}: answered after ${ms} ms`)
    // Never "refused but applied": the capture the bank made is the answer.
    assert.equal(res.status, 200, `${spec}: ${res.text}`)
    const answered = JSON.parse(res.text) as { status: string; capturedAmount: number }
    assert.equal(answered.status, 'captured')
    assert.equal(answered.capturedAmount, 12_271)
    if (first) {
      assert.equal(spec, 'answer.after_flush:exit*1', `${spec}: an answer left`)
      assert.equal(res.text, first.text)
      assert.equal(res.requestId, first.requestId)
    }
    const atBank = await count(sql<{ n: number }>`select count(*)::int as n
      from acquirer_sandbox_operations where payment_id = ${paymentId} and op = 'capture'`)
    assert.equal(atBank, 1, `${spec}: the bank captured once`)
  }

  await assertInvariants(db.handle.db, service.events.join('\n'))
})
