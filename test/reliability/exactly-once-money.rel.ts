// Goal (issue 35, decision 0035): the API process SIGKILLed between every phase of a refund
// (full, partial, and an asynchronous refund card), of a 3-D Secure completion and of a
// payout's creation — after the claim, after the bank, before and after the outcome commit,
// before and after the answer is flushed — and the worker SIGKILLed on either side of the
// payout rail. For each, the retry with the same Idempotency-Key is answered within seconds
// of the process coming back, is the first answer byte for byte when one left, and otherwise
// the one execution: one refund per key and one at the bank, never a refusal of a refund that
// was made; one authorization per 3-D Secure payment; one payout per key, paid once (one
// `payout.paid`, the books balanced).
// Method: the service as real processes on PostgreSQL, fail points armed through
// KURUS_FAILPOINTS (exit = SIGKILL), a client that keeps the raw bytes of every answer.
// KURUS_REL_ONCE_PART=refund|3ds|payout|rail runs one part.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { sql } from 'kysely'
import { composeIBAN } from 'ibantools'
import { setTimeout as delay } from 'node:timers/promises'
import { createTestDatabase } from '../helpers/db.ts'
import { CARDS, openSession, tokenize } from '../helpers/payments.ts'
import {
  assertInvariants,
  dieAtFailpoint,
  exited,
  newKey,
  newMerchant,
  operator,
  rawPoster,
  Service,
  type RawAnswer,
} from './_harness.ts'

/** A retry must be answered within this long of the API being back. */
const RESUME_WITHIN_MS = 10_000
const part = process.env['KURUS_REL_ONCE_PART'] ?? ''
const runs = (name: string) => part === '' || part === name

test('SIGKILL between every phase of a refund, a 3-D Secure completion, a payout and its rail: exactly once', async (t) => {
  const db = await createTestDatabase()
  assert.ok(db.url)
  const service = await Service.create({ databaseUrl: db.url, workers: 1 })
  t.after(async () => {
    await service.stop()
    await db.drop()
  })
  await service.startApi()
  const m = await newMerchant(service.url)
  const post = rawPoster(service.url, m)
  /** Retries (409 in progress, 5xx, no answer) until an answer; how long it took. */
  const retry = async (path: string, body: unknown, key: string) => {
    const started = Date.now()
    for (;;) {
      const res = await post(path, body, key)
      const code = res ? (JSON.parse(res.text || '{}') as { code?: string }).code : undefined
      if (res && res.status < 500 && code !== 'SVC-GW-2002') {
        return { res, ms: Date.now() - started }
      }
      assert.ok(Date.now() - started < 60_000, `no answer: ${JSON.stringify(res)}`)
      await delay(100)
    }
  }
  const count = async (query: ReturnType<typeof sql<{ n: number }>>) =>
    Number((await query.execute(db.handle.db)).rows[0]?.n)
  const reconcile = async () => {
    const res = await post('/v1/sandbox/reconcile', {}, newKey())
    assert.equal(res?.status, 200, res?.text)
  }
  const cardToken = await tokenize(m.client, CARDS.frictionless)

  const dieAt = (spec: string, call: () => Promise<RawAnswer | null>) =>
    dieAtFailpoint(service, spec, call)
  const charged = async (amount: number, token = cardToken, extra = {}) => {
    const { transactionId } = await openSession(m.client, amount, extra)
    const res = await post(
      '/v1/payments/card',
      { transactionId, amount, currency: 'TRY', cardToken: token },
      newKey(),
    )
    assert.equal(res?.status, 201, res?.text)
    return (JSON.parse(res.text) as { paymentId: string }).paymentId
  }
  const refundsOf = async (paymentId: string) => ({
    ours: await count(sql<{ n: number }>`select count(*)::int as n from refunds
      where payment_id = ${paymentId}`),
    atBank: await count(sql<{ n: number }>`select count(*)::int as n
      from acquirer_sandbox_operations where payment_id = ${paymentId} and op = 'refund'`),
  })

  const PHASES = [
    'refund.after_reserve:exit*1',
    'refund.after_acquirer:exit*1',
    'refund.before_commit:exit*1',
    'refund.after_commit:exit*1',
    'answer.before_flush:exit*1',
    'answer.after_flush:exit*1',
  ]
  for (const spec of runs('refund') ? PHASES : []) {
    for (const whole of [false, true]) {
      const paymentId = await charged(10_000)
      const path = `/v1/payments/${paymentId}/refund`
      const body = whole ? {} : { amount: 4_321 }
      const key = newKey()
      const first = await dieAt(spec, () => post(path, body, key))
      const { res, ms } = await retry(path, body, key)
      const label = `${spec} ${whole ? 'full' : 'partial'}`
      assert.ok(ms < RESUME_WITHIN_MS, `${label}: answered after ${ms} ms`)
      // Never "refused but applied": the refund the bank made is the answer.
      assert.equal(res.status, 200, `${label}: ${res.text}`)
      const answered = JSON.parse(res.text) as { lastRefund: { status: string; amount: number } }
      assert.equal(answered.lastRefund.status, 'completed', label)
      assert.equal(answered.lastRefund.amount, whole ? 10_000 : 4_321, label)
      if (first) {
        assert.equal(spec, 'answer.after_flush:exit*1', `${label}: an answer left`)
        assert.equal(res.text, first.text)
        assert.equal(res.requestId, first.requestId)
        assert.equal(res.status, first.status)
      }
      const again = await retry(path, body, key)
      assert.equal(again.res.replayed, true, label)
      assert.equal(again.res.text, res.text, label)
      assert.equal(again.res.requestId, res.requestId, label)
      assert.deepEqual(await refundsOf(paymentId), { ours: 1, atBank: 1 }, label)
    }
  }

  if (runs('refund')) {
    // An asynchronous refund card: the bank took it and answers later.
    const asyncToken = await tokenize(m.client, CARDS.asyncRefund)
    const paymentId = await charged(8_000, asyncToken)
    const path = `/v1/payments/${paymentId}/refund`
    const body = { amount: 3_000 }
    const key = newKey()
    await dieAt('refund.after_acquirer:exit*1', () => post(path, body, key))
    const { res, ms } = await retry(path, body, key)
    assert.ok(ms < RESUME_WITHIN_MS, `async refund: answered after ${ms} ms`)
    assert.equal(res.status, 202, res.text)
    await reconcile()
    const settled = await retry(path, body, key)
    assert.equal(settled.res.status, 200, settled.res.text)
    const done = JSON.parse(settled.res.text) as { lastRefund: { status: string } }
    assert.equal(done.lastRefund.status, 'completed')
    assert.deepEqual(await refundsOf(paymentId), { ours: 1, atBank: 1 })
  }

  const THREE_DS_PHASES = [
    '3ds.after_claim:exit*1',
    'charge.after_acquirer:exit*1',
    'charge.before_commit:exit*1',
    'charge.after_commit:exit*1',
    'answer.before_flush:exit*1',
    'answer.after_flush:exit*1',
  ]
  const challengeToken = runs('3ds') ? await tokenize(m.client, CARDS.challenge) : ''
  for (const spec of runs('3ds') ? THREE_DS_PHASES : []) {
    const paymentId = await charged(6_500, challengeToken)
    const solved = await m.client.request<{ pares: string; correlationId: string }>(
      'POST',
      `/v1/sandbox/payments/${paymentId}/3ds-challenge`,
      { body: { otp: '123456' } },
    )
    assert.equal(solved.status, 200)
    const path = `/v1/payments/${paymentId}/3ds-callback`
    const body = { pares: solved.body.pares, correlationId: solved.body.correlationId }
    const key = newKey()
    const first = await dieAt(spec, () => post(path, body, key))
    const { res, ms } = await retry(path, body, key)
    assert.ok(ms < RESUME_WITHIN_MS, `3ds ${spec}: answered after ${ms} ms`)
    assert.equal(res.status, 200, `3ds ${spec}: ${res.text}`)
    assert.equal((JSON.parse(res.text) as { status: string }).status, 'captured')
    if (first) {
      assert.equal(spec, 'answer.after_flush:exit*1', `3ds ${spec}: an answer left`)
      assert.equal(res.text, first.text)
      assert.equal(res.requestId, first.requestId)
    }
    const again = await retry(path, body, key)
    assert.equal(again.res.replayed, true, spec)
    assert.equal(again.res.text, res.text, spec)
    const authorizations = await count(sql<{ n: number }>`select count(*)::int as n
      from acquirer_sandbox_operations where payment_id = ${paymentId} and op = 'authorize'`)
    assert.equal(authorizations, 1, `3ds ${spec}: one authorization`)
  }

  // A submerchant with money to pay out: a split capture, settled.
  const iban = composeIBAN({ countryCode: 'TR', bban: '0006101234567890123456' })
  assert.ok(iban)
  const sub = await operator<{ submerchantId: string }>(
    service.url,
    'POST',
    `/operator/v1/merchants/${m.merchantId}/submerchants`,
    { name: 'Seller', iban, holderName: 'Seller Ltd' },
  )
  assert.equal(sub.status, 201, JSON.stringify(sub.body))
  const submerchantId = sub.body.submerchantId
  if (runs('payout') || runs('rail')) {
    await charged(400_000, cardToken, { splits: [{ submerchantId, amountMinor: 200_000 }] })
    await reconcile()
  }
  const payoutsOfKey = async (key: string) =>
    (
      await sql<{ id: string; status: string }>`select id, status from payouts
        where merchant_id = ${m.merchantId} and idempotency_key = ${key}`.execute(db.handle.db)
    ).rows

  const PAYOUT_PHASES = [
    'payout.before_commit:exit*1',
    'payout.after_commit:exit*1',
    'answer.before_flush:exit*1',
    'answer.after_flush:exit*1',
  ]
  for (const spec of runs('payout') ? PAYOUT_PHASES : []) {
    const body = { submerchantId, rail: 'fast', amountMinor: 5_000, currency: 'TRY' }
    const key = newKey()
    const first = await dieAt(spec, () => post('/v1/payouts', body, key))
    const { res, ms } = await retry('/v1/payouts', body, key)
    assert.ok(ms < RESUME_WITHIN_MS, `${spec}: answered after ${ms} ms`)
    assert.equal(res.status, 201, `${spec}: ${res.text}`)
    if (first) {
      assert.equal(spec, 'answer.after_flush:exit*1', `${spec}: an answer left`)
      assert.equal(res.text, first.text)
      assert.equal(res.requestId, first.requestId)
    }
    const again = await retry('/v1/payouts', body, key)
    assert.equal(again.res.replayed, true, spec)
    assert.equal(again.res.text, res.text, spec)
    const { payoutId } = JSON.parse(res.text) as { payoutId: string }
    assert.deepEqual(
      (await payoutsOfKey(key)).map((p) => p.id),
      [payoutId],
      `${spec}: one key, one payout`,
    )
  }

  for (const spec of runs('rail')
    ? ['payout.before_rail:exit*1', 'payout.after_rail:exit*1']
    : []) {
    await reconcile() // every earlier payout's job done: the armed worker meets this one's
    await service.startWorker(0, { KURUS_FAILPOINTS: spec })
    const worker = service.workers[0]
    assert.ok(worker)
    const key = newKey()
    const created = await post(
      '/v1/payouts',
      { submerchantId, rail: 'eft', amountMinor: 7_000, currency: 'TRY' },
      key,
    )
    assert.equal(created?.status, 201, created?.text)
    const { payoutId } = JSON.parse(created.text) as { payoutId: string }
    // The worker takes the payout's job and dies at the rail.
    await exited(worker)
    assert.equal(worker.signalCode, 'SIGKILL', `${spec}: the fail point did not fire`)
    service.workers[0] = undefined
    assert.equal((await payoutsOfKey(key))[0]?.status, 'processing', spec)
    // No worker alive: the payout's job died with it; its 10-minute stale window passes.
    await sql`update payouts set updated_at = updated_at - interval '11 minutes'
      where id = ${payoutId}`.execute(db.handle.db)
    await service.startWorker(0)
    await reconcile()
    assert.equal((await payoutsOfKey(key))[0]?.status, 'paid', spec)
    await service.killWorker(0)
    const paid = await count(sql<{ n: number }>`select count(*)::int as n from events
      where resource_id = ${payoutId} and type = 'payout.paid'`)
    assert.equal(paid, 1, `${spec}: paid once`)
  }

  await assertInvariants(db.handle.db, service.events.join('\n'))
})
