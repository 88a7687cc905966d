// Goal: every transition of the subscription state machine and its outbox event: first charge,
// trial end, pause/resume, cancel now and at period end, charge-now, sandbox advance. Method:
// signed HTTP, the renewal engine run through POST /v1/sandbox/reconcile, time moved on h.clock.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { startTestApp } from '../helpers/app.ts'
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

test('create → active, cycle 0, charged at the next tick: cycle 1, history, events, payment', async (t) => {
  const h = await startTestApp(t)
  const { m, sub } = await subscribed(h)
  assert.equal(sub.status, 'active')
  assert.equal(sub.cycleNumber, 0)
  assert.equal(sub.nextChargeAt, sub.createdAt, 'the first cycle is due at creation')

  await reconcile(m)
  const after = await getSub(m, sub.id)
  assert.equal(after.status, 'active')
  assert.equal(after.cycleNumber, 1)
  assert.ok(after.nextChargeAt !== null && after.nextChargeAt > sub.createdAt)

  const history = await charges(m, sub.id)
  assert.equal(history.length, 1)
  const [first] = history
  assert.ok(first)
  assert.deepEqual(Object.keys(first).sort(), [
    'amountMinor',
    'chargedAt',
    'cycleNumber',
    'paymentId',
    'status',
  ])
  assert.equal(first.cycleNumber, 1)
  assert.equal(first.status, 'captured')
  assert.equal(first.amountMinor, 14_900)

  // The renewal is a real payment: captured, merchant-initiated (no 3DS), fenced per cycle.
  const payment = await m.client.request<Record<string, unknown>>(
    'GET',
    `/v1/payments/${first.paymentId ?? ''}`,
  )
  assert.equal(payment.status, 200)
  assert.equal(payment.body['status'], 'captured')
  assert.equal(payment.body['threeDSecure'], false)
  assert.equal(payment.body['transactionId'], `${sub.id}:1`)
  assert.equal(payment.body['amount'], 14_900)

  assert.deepEqual(await eventTypes(h, m.merchantId, sub.id), [
    'subscription.created',
    'subscription.renewed',
  ])
  // A second tick in the same period charges nothing.
  await reconcile(m)
  assert.equal((await getSub(m, sub.id)).cycleNumber, 1)
  assert.equal((await paymentsOfCycle(h, m.merchantId, sub.id, 2)).length, 0)
})

test('trialing until trialEndAt: nothing charged before, the first charge at trial end → active', async (t) => {
  const h = await startTestApp(t)
  const trialEndAt = new Date(h.clock.now().getTime() + 14 * DAY_MS).toISOString()
  const { m, sub } = await subscribed(h, { extra: { trialEndAt, intervalUnit: 'week' } })
  assert.equal(sub.status, 'trialing')
  assert.equal(sub.trialEndAt, trialEndAt)
  assert.equal(sub.nextChargeAt, trialEndAt)

  await reconcile(m)
  h.clock.advance(13 * DAY_MS)
  await reconcile(m)
  const during = await getSub(m, sub.id)
  assert.equal(during.status, 'trialing')
  assert.equal(during.cycleNumber, 0)
  assert.deepEqual(await charges(m, sub.id), [])

  h.clock.advance(DAY_MS + 1000)
  await reconcile(m)
  const after = await getSub(m, sub.id)
  assert.equal(after.status, 'active')
  assert.equal(after.cycleNumber, 1)
  assert.equal(
    after.nextChargeAt,
    new Date(Date.parse(trialEndAt) + 7 * DAY_MS).toISOString(),
    'the schedule runs from the trial end',
  )
  assert.deepEqual(await eventTypes(h, m.merchantId, sub.id), [
    'subscription.created',
    'subscription.renewed',
  ])
})

test('pause: the engine ignores paused rows; resume → active and charged at the next tick', async (t) => {
  const h = await startTestApp(t)
  const { m, sub } = await subscribed(h, { extra: { intervalUnit: 'day' } })
  await reconcile(m)
  assert.equal((await getSub(m, sub.id)).cycleNumber, 1)

  const paused = await action<{ id: string; status: string }>(m, sub.id, 'pause')
  assert.equal(paused.status, 200)
  assert.deepEqual(paused.body, { id: sub.id, status: 'paused' })
  assert.equal((await getSub(m, sub.id)).nextChargeAt, null)

  h.clock.advance(5 * DAY_MS)
  await reconcile(m)
  const still = await getSub(m, sub.id)
  assert.equal(still.status, 'paused')
  assert.equal(still.cycleNumber, 1, 'no charge while paused')

  // Pausing again is a no-op; retry and resume-from-active are not transitions of this state.
  assert.equal((await action(m, sub.id, 'pause')).status, 200)
  assert.equal((await action(m, sub.id, 'retry')).body.code, 'SVC-STATE-3401')

  const resumed = await action<{ status: string }>(m, sub.id, 'resume')
  assert.equal(resumed.status, 200)
  assert.equal(resumed.body.status, 'active')
  const due = await getSub(m, sub.id)
  assert.ok(
    Math.abs(Date.parse(due.nextChargeAt ?? '') - h.clock.now().getTime()) < 60_000,
    'due at once',
  )
  await reconcile(m)
  const after = await getSub(m, sub.id)
  assert.equal(after.status, 'active')
  assert.equal(after.cycleNumber, 2, 'resume charges at once')
  assert.equal(
    Date.parse(after.nextChargeAt ?? '') - Date.parse(due.nextChargeAt ?? ''),
    DAY_MS,
    'a fresh period starts at the resume charge',
  )
  const again = await action(m, sub.id, 'resume')
  assert.equal(again.status, 409)
  assert.equal(again.body.code, 'SVC-STATE-3401')
  assert.deepEqual(await eventTypes(h, m.merchantId, sub.id), [
    'subscription.created',
    'subscription.renewed',
    'subscription.paused',
    'subscription.resumed',
    'subscription.renewed',
  ])
})

test('cancel now → cancelled at once; nothing is charged afterwards; cancelling again answers the state', async (t) => {
  const h = await startTestApp(t)
  const { m, sub } = await subscribed(h)
  await reconcile(m)
  const res = await action<{ id: string; status: string; cancelAtPeriodEnd: boolean }>(
    m,
    sub.id,
    'cancel',
    { atPeriodEnd: false, reason: 'customer asked' },
  )
  assert.equal(res.status, 200)
  assert.deepEqual(res.body, { id: sub.id, status: 'cancelled', cancelAtPeriodEnd: false })
  const after = await getSub(m, sub.id)
  assert.equal(after.nextChargeAt, null)
  assert.ok(after.cancelledAt)

  h.clock.advance(40 * DAY_MS)
  await reconcile(m)
  assert.equal((await getSub(m, sub.id)).cycleNumber, 1)
  assert.equal((await action(m, sub.id, 'cancel', { atPeriodEnd: false })).status, 200)
  for (const verb of ['pause', 'resume', 'retry', 'charge-now']) {
    const r = await action(m, sub.id, verb)
    assert.equal(r.status, 409, verb)
    assert.equal(r.body.code, 'SVC-STATE-3401', verb)
  }
  assert.deepEqual(await eventTypes(h, m.merchantId, sub.id), [
    'subscription.created',
    'subscription.renewed',
    'subscription.cancelled',
  ])
})

test('cancel at period end: status stays, cancelAtPeriodEnd; cancelled at nextChargeAt with no charge', async (t) => {
  const h = await startTestApp(t)
  const { m, sub } = await subscribed(h, { extra: { intervalUnit: 'week' } })
  await reconcile(m)
  const paid = await getSub(m, sub.id)
  const res = await action<{ id: string; status: string; cancelAtPeriodEnd: boolean }>(
    m,
    sub.id,
    'cancel',
    { atPeriodEnd: true },
  )
  assert.deepEqual(res.body, { id: sub.id, status: 'active', cancelAtPeriodEnd: true })
  const flagged = await getSub(m, sub.id)
  assert.equal(flagged.nextChargeAt, paid.nextChargeAt, 'the paid period runs out')

  h.clock.advance(6 * DAY_MS)
  await reconcile(m)
  assert.equal((await getSub(m, sub.id)).status, 'active')

  h.clock.advance(DAY_MS + 1000)
  await reconcile(m)
  const after = await getSub(m, sub.id)
  assert.equal(after.status, 'cancelled')
  assert.equal(after.cycleNumber, 1)
  assert.equal(after.nextChargeAt, null)
  assert.equal((await charges(m, sub.id)).length, 1, 'no charge at period end')
  assert.equal((await paymentsOfCycle(h, m.merchantId, sub.id, 2)).length, 0)
  assert.deepEqual(await eventTypes(h, m.merchantId, sub.id), [
    'subscription.created',
    'subscription.renewed',
    'subscription.cancel_scheduled',
    'subscription.cancelled',
  ])
})

test('charge-now: 202 queuing receipt, charging until the worker runs it, then active cycle + 1', async (t) => {
  const h = await startTestApp(t)
  const trialEndAt = new Date(h.clock.now().getTime() + 30 * DAY_MS).toISOString()
  const { m, sub } = await subscribed(h, { extra: { trialEndAt } })
  const res = await action<{
    status: string
    subscriptionId: string
    expectedAt: string
    checkAt: string
  }>(m, sub.id, 'charge-now')
  assert.equal(res.status, 202, JSON.stringify(res.body))
  assert.equal(res.body.status, 'queuing')
  assert.equal(res.body.subscriptionId, sub.id)
  assert.equal(res.body.checkAt, `/v1/subscriptions/${sub.id}`)
  assert.ok(Date.parse(res.body.expectedAt) >= h.clock.now().getTime() - 1000)

  assert.equal((await getSub(m, sub.id)).status, 'charging')
  // While charging: no second charge-now, no pause, no retry.
  for (const verb of ['charge-now', 'pause', 'retry']) {
    assert.equal((await action(m, sub.id, verb)).status, 409, verb)
  }

  await reconcile(m)
  const after = await getSub(m, sub.id)
  assert.equal(after.status, 'active')
  assert.equal(after.cycleNumber, 1)
  assert.equal(
    Date.parse(after.nextChargeAt ?? '') - h.clock.now().getTime() <= 31 * DAY_MS,
    true,
    'a fresh monthly period from now',
  )
  assert.equal((await charges(m, sub.id))[0]?.status, 'captured')
  assert.deepEqual(await eventTypes(h, m.merchantId, sub.id), [
    'subscription.created',
    'subscription.renewed',
  ])
})

test('a charge-now waiting for its job can be cancelled; the job then does nothing', async (t) => {
  const h = await startTestApp(t)
  const trialEndAt = new Date(h.clock.now().getTime() + 30 * DAY_MS).toISOString()
  const { m, sub } = await subscribed(h, { extra: { trialEndAt } })
  assert.equal((await action(m, sub.id, 'charge-now')).status, 202)
  const cancelled = await action<{ status: string }>(m, sub.id, 'cancel', { atPeriodEnd: false })
  assert.equal(cancelled.body.status, 'cancelled')
  await reconcile(m)
  assert.equal((await getSub(m, sub.id)).status, 'cancelled')
  assert.equal((await paymentsOfCycle(h, m.merchantId, sub.id, 1)).length, 0)
})

test('sandbox advance: each call jumps to the next charge time and runs it', async (t) => {
  const h = await startTestApp(t)
  const trialEndAt = new Date(h.clock.now().getTime() + 7 * DAY_MS).toISOString()
  const { m, sub } = await subscribed(h, { extra: { trialEndAt } })
  const first = await m.client.request<{
    status: string
    cycleNumber: number
    nextChargeAt: string
  }>('POST', `/v1/sandbox/subscriptions/${sub.id}/advance`, { body: {} })
  assert.equal(first.status, 200, JSON.stringify(first.body))
  assert.equal(first.body.status, 'active')
  assert.equal(first.body.cycleNumber, 1)
  // The schedule keeps its anchor: the trial end, plus one month.
  const expected = new Date(trialEndAt)
  expected.setUTCMonth(expected.getUTCMonth() + 1)
  assert.equal(first.body.nextChargeAt.slice(0, 10), expected.toISOString().slice(0, 10))

  const second = await m.client.request<{ cycleNumber: number; nextChargeAt: string }>(
    'POST',
    `/v1/sandbox/subscriptions/${sub.id}/advance`,
    { body: {} },
  )
  assert.equal(second.body.cycleNumber, 2)
  assert.ok(second.body.nextChargeAt > first.body.nextChargeAt)
  assert.equal((await charges(m, sub.id)).length, 2)

  await action(m, sub.id, 'pause')
  const refused = await m.client.request<{ code: string }>(
    'POST',
    `/v1/sandbox/subscriptions/${sub.id}/advance`,
    { body: {} },
  )
  assert.equal(refused.status, 409)
  assert.equal(refused.body.code, 'SVC-STATE-3401')
})
