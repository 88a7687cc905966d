// Goal: renewal failures — past_due, the dunning schedule (retries 1, 3 and 5 days after each
// failure, then expired), manual retry as a dunning attempt, recovery with a new card, a revoked
// card, KYC deferral and an acquirer timeout. Method: signed HTTP with the sandbox's declining
// test cards; time moved on h.clock; the engine run through POST /v1/sandbox/reconcile.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { completeSession } from '../../src/modules/payments/index.ts'
import { startTestApp } from '../helpers/app.ts'
import { CARDS, tokenize } from '../helpers/payments.ts'
import {
  DAY_MS,
  action,
  charges,
  eventTypes,
  getSub,
  paymentsOfCycle,
  reconcile,
  subscribed,
} from './_support.ts'

const MINUTE_MS = 60_000

test('dunning: past_due, retries 1, 3 and 5 days after each failure, then expired', async (t) => {
  const h = await startTestApp(t)
  const { m, sub } = await subscribed(h, { card: CARDS.declined })
  await reconcile(m)
  let s = await getSub(m, sub.id)
  assert.equal(s.status, 'past_due')
  assert.equal(s.failedAttempts, 1)
  assert.equal(s.cycleNumber, 0)
  const firstFailure = h.clock.now().getTime()
  assert.ok(Math.abs(Date.parse(s.nextChargeAt ?? '') - (firstFailure + DAY_MS)) < MINUTE_MS)

  for (const [attempt, delayDays] of [
    [2, 1],
    [3, 3],
    [4, 5],
  ] as const) {
    // Just before the retry is due, nothing happens.
    h.clock.advance(delayDays * DAY_MS - MINUTE_MS)
    await reconcile(m)
    assert.equal((await getSub(m, sub.id)).failedAttempts, attempt - 1, `before retry ${attempt}`)
    h.clock.advance(2 * MINUTE_MS)
    await reconcile(m)
    s = await getSub(m, sub.id)
    assert.equal(s.failedAttempts, attempt, `retry ${attempt} ran`)
  }
  assert.equal(s.status, 'expired', 'the fourth failure ends it')
  assert.equal(s.nextChargeAt, null)

  const history = await charges(m, sub.id)
  assert.equal(history.length, 4)
  assert.ok(history.every((c) => c.cycleNumber === 1 && c.status === 'failed' && c.paymentId))
  assert.equal(new Set(history.map((c) => c.paymentId)).size, 4, 'each retry is a new attempt')
  const payments = await paymentsOfCycle(h, m.merchantId, sub.id, 1)
  assert.deepEqual(
    payments.map((p) => p.status),
    ['failed', 'failed', 'failed', 'failed'],
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
  // Nothing more happens to an expired subscription.
  h.clock.advance(30 * DAY_MS)
  await reconcile(m)
  assert.equal((await charges(m, sub.id)).length, 4)
  const cancel = await action(m, sub.id, 'cancel', { atPeriodEnd: false })
  assert.equal(cancel.status, 409)
})

test('retry: past_due only; nextChargeAt = now and it counts as a dunning attempt', async (t) => {
  const h = await startTestApp(t)
  const { m, sub } = await subscribed(h, { card: CARDS.insufficientFunds })
  const early = await action(m, sub.id, 'retry')
  assert.equal(early.status, 409, 'an active subscription is not retried')
  assert.equal(early.body.code, 'SVC-STATE-3401')

  await reconcile(m)
  assert.equal((await getSub(m, sub.id)).status, 'past_due')
  const res = await action<{ id: string; status: string; nextChargeAt: string }>(m, sub.id, 'retry')
  assert.equal(res.status, 200)
  assert.equal(res.body.status, 'past_due')
  assert.ok(Math.abs(Date.parse(res.body.nextChargeAt) - h.clock.now().getTime()) < MINUTE_MS)

  await reconcile(m)
  const s = await getSub(m, sub.id)
  assert.equal(s.failedAttempts, 2, 'the manual retry was attempt 2')
  assert.ok(
    Math.abs(Date.parse(s.nextChargeAt ?? '') - (h.clock.now().getTime() + 3 * DAY_MS)) < MINUTE_MS,
    'the next retry follows the schedule for attempt 2',
  )
  assert.equal((await charges(m, sub.id)).length, 2)
})

test('recovery: a card entered on the portal is taken in and retried at once → active', async (t) => {
  const h = await startTestApp(t)
  const { m, customerId, sub } = await subscribed(h, { card: CARDS.declined })
  const created = Date.parse(sub.createdAt)
  await reconcile(m)
  assert.equal((await getSub(m, sub.id)).status, 'past_due')

  // The buyer asks for an update-card session and completes it (what the hosted checkout
  // does: attach the new card as the customer's default, then complete the session).
  const minted = await fetch(
    `${h.url}/v1/public/subscriptions/${sub.publicHash ?? ''}/update-card-session`,
    { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' },
  )
  assert.equal(minted.status, 200)
  const session = (await minted.json()) as { sessionId: string }
  const newToken = await tokenize(m.client, CARDS.troy)
  const attached = await m.client.request('POST', `/v1/customers/${customerId}/cards`, {
    body: { cardToken: newToken, isDefault: true },
  })
  assert.equal(attached.status, 201)
  await completeSession(h.deps, session.sessionId)

  h.clock.advance(2 * 60 * 60 * 1000)
  await reconcile(m)
  const s = await getSub(m, sub.id)
  assert.equal(s.status, 'active')
  assert.equal(s.cycleNumber, 1)
  assert.equal(s.failedAttempts, 0)
  assert.equal(s.cardLast4, '0001')
  assert.equal(s.cardBrand, 'troy')
  // The calendar anchor is kept: the next cycle is one month after creation.
  const expected = new Date(created)
  expected.setUTCMonth(expected.getUTCMonth() + 1)
  assert.equal(s.nextChargeAt?.slice(0, 10), expected.toISOString().slice(0, 10))
  const history = await charges(m, sub.id)
  assert.deepEqual(
    history.map((c) => [c.cycleNumber, c.status]),
    [
      [1, 'captured'],
      [1, 'failed'],
    ],
  )
  const types = await eventTypes(h, m.merchantId, sub.id)
  assert.deepEqual(types.slice(-2), ['subscription.card_updated', 'subscription.renewed'])
})

test('a revoked card: the attempt fails without a payment and dunning starts', async (t) => {
  const h = await startTestApp(t)
  const { m, customerId, sub } = await subscribed(h)
  const cards = await m.client.request<{ items: { id: string }[] }>(
    'GET',
    `/v1/customers/${customerId}/cards`,
  )
  const cardId = cards.body.items[0]?.id ?? ''
  const detached = await m.client.request('DELETE', `/v1/customers/${customerId}/cards/${cardId}`)
  assert.equal(detached.status, 204)
  await reconcile(m)
  const s = await getSub(m, sub.id)
  assert.equal(s.status, 'past_due')
  const [attempt] = await charges(m, sub.id)
  assert.equal(attempt?.status, 'failed')
  assert.equal(attempt.paymentId, null)
})

test('a trial whose first charge fails goes past_due', async (t) => {
  const h = await startTestApp(t)
  const trialEndAt = new Date(h.clock.now().getTime() + DAY_MS).toISOString()
  const { m, sub } = await subscribed(h, { card: CARDS.declined, extra: { trialEndAt } })
  h.clock.advance(DAY_MS + MINUTE_MS)
  await reconcile(m)
  const s = await getSub(m, sub.id)
  assert.equal(s.status, 'past_due')
  assert.equal(s.cycleNumber, 0)
})

test('KYC not approved: renewals are deferred, not failed; they run once KYC is approved', async (t) => {
  const h = await startTestApp(t)
  const { m, sub } = await subscribed(h)
  const kyc = await h.operator('PUT', `/operator/v1/merchants/${m.merchantId}/kyc`, {
    status: 'suspended',
  })
  assert.equal(kyc.status, 200, JSON.stringify(kyc.body))
  await reconcile(m)
  const s = await getSub(m, sub.id)
  assert.equal(s.status, 'active')
  assert.equal(s.cycleNumber, 0)
  assert.equal(s.failedAttempts, 0)
  assert.ok(Date.parse(s.nextChargeAt ?? '') > h.clock.now().getTime(), 'looked at again later')
  assert.deepEqual(await charges(m, sub.id), [])
  assert.equal((await paymentsOfCycle(h, m.merchantId, sub.id, 1)).length, 0)
  // Money-in routes are gated meanwhile.
  const now = await action(m, sub.id, 'charge-now')
  assert.equal(now.status, 403)
  assert.equal(now.body.code, 'SVC-KYC-3101')

  await h.operator('PUT', `/operator/v1/merchants/${m.merchantId}/kyc`, { status: 'approved' })
  h.clock.advance(61 * MINUTE_MS)
  await reconcile(m)
  const after = await getSub(m, sub.id)
  assert.equal(after.status, 'active')
  assert.equal(after.cycleNumber, 1)
})

test('an acquirer timeout: the renewal waits in charging, then settles once, as captured', async (t) => {
  const h = await startTestApp(t)
  const { m, sub } = await subscribed(h, { card: CARDS.timeout })
  await reconcile(m)
  const waiting = await getSub(m, sub.id)
  assert.equal(waiting.status, 'charging')
  assert.deepEqual(
    (await paymentsOfCycle(h, m.merchantId, sub.id, 1)).map((p) => p.status),
    ['pending'],
  )
  assert.deepEqual(await charges(m, sub.id), [], 'no outcome recorded while the bank is silent')
  // The next tick: the payments reconciler asks the bank (captured), then the renewal engine
  // records that same payment; no second attempt is made.
  await reconcile(m)
  const after = await getSub(m, sub.id)
  assert.equal(after.status, 'active')
  assert.equal(after.cycleNumber, 1)
  assert.deepEqual(
    (await paymentsOfCycle(h, m.merchantId, sub.id, 1)).map((p) => p.status),
    ['captured'],
  )
  assert.equal((await charges(m, sub.id)).length, 1)
})
