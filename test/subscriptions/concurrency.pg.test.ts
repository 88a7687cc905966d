// Goal: exactly one charge per cycle — two workers (two app processes' worth of engine over one
// database) racing the same due subscriptions, a charge-now job racing the reconciler, and a
// worker that crashed mid-charge being taken over without charging again. Method: real engine
// runs in parallel (PostgreSQL: truly concurrent connections; PGlite: serialised), crashed
// states made with raw SQL (deliberately, to stand for a dead worker), payments counted per
// transactionId `<subscriptionId>:<cycle>`.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { chargeSavedCard } from '../../src/modules/payments/index.ts'
import { renewDueSubscriptions, runQueuedCharge } from '../../src/modules/subscriptions/index.ts'
import { startTestApp, type TestApp } from '../helpers/app.ts'
import { CARDS } from '../helpers/payments.ts'
import {
  action,
  charges,
  createSubscription,
  customerWithCard,
  eventTypes,
  getSub,
  paymentsOfCycle,
  reconcile,
  subscribed,
} from './_support.ts'

async function assertOneChargePerCycle(
  h: TestApp,
  merchantId: string,
  ids: string[],
  cycle: number,
): Promise<void> {
  for (const id of ids) {
    const payments = await paymentsOfCycle(h, merchantId, id, cycle)
    assert.deepEqual(
      payments.map((p) => p.status),
      ['captured'],
      `${id}: exactly one payment for cycle ${cycle}`,
    )
  }
}

test('two app processes reconcile at once: every due subscription is charged exactly once', async (t) => {
  const h = await startTestApp(t)
  const other = await startTestApp(t, { database: h.database, clock: h.clock })
  const m = await h.newMerchant()
  const { customerId } = await customerWithCard(m.client)
  const subs = await Promise.all(
    Array.from({ length: 12 }, () => createSubscription(m, customerId, { intervalUnit: 'day' })),
  )
  const ids = subs.map((s) => s.id)
  const mOther = { ...m, client: other.clientFor(m) }

  await Promise.all([reconcile(m), reconcile(mOther), reconcile(m), reconcile(mOther)])
  await assertOneChargePerCycle(h, m.merchantId, ids, 1)
  for (const id of ids) {
    const s = await getSub(m, id)
    assert.equal(s.status, 'active')
    assert.equal(s.cycleNumber, 1)
    assert.equal((await charges(m, id)).length, 1)
    assert.deepEqual(await eventTypes(h, m.merchantId, id), [
      'subscription.created',
      'subscription.renewed',
    ])
  }

  // The next day, the same race again: one more charge each, for cycle 2.
  h.clock.advance(24 * 60 * 60 * 1000 + 1000)
  await Promise.all([
    renewDueSubscriptions(h.deps),
    renewDueSubscriptions(other.deps),
    renewDueSubscriptions(h.deps),
  ])
  await assertOneChargePerCycle(h, m.merchantId, ids, 2)
  for (const id of ids) assert.equal((await getSub(m, id)).cycleNumber, 2)
})

test('a charge-now job racing the reconciler and a rerun of the job: one charge', async (t) => {
  const h = await startTestApp(t)
  const trialEndAt = new Date(h.clock.now().getTime() + 10 * 24 * 60 * 60 * 1000).toISOString()
  const { m, sub } = await subscribed(h, { extra: { trialEndAt } })
  assert.equal((await action(m, sub.id, 'charge-now')).status, 202)
  // pg-boss runs a job at least once: the job twice, and the reconciler, all at once.
  await Promise.all([
    runQueuedCharge(h.deps, sub.id),
    runQueuedCharge(h.deps, sub.id),
    renewDueSubscriptions(h.deps),
  ])
  await reconcile(m)
  await assertOneChargePerCycle(h, m.merchantId, [sub.id], 1)
  const s = await getSub(m, sub.id)
  assert.equal(s.status, 'active')
  assert.equal(s.cycleNumber, 1)
  assert.equal((await charges(m, sub.id)).length, 1)
})

/** Leaves the row as a worker that claimed it and then died would (raw SQL on purpose). */
async function claimAsDeadWorker(h: TestApp, id: string): Promise<void> {
  const now = h.clock.now()
  await h.deps.db
    .updateTable('subscriptions')
    .set({
      status: 'charging',
      charge_from: 'active',
      charge_kind: 'renewal',
      claim_id: 'dead-worker',
      charging_since: now,
      charge_started_at: now,
    })
    .where('id', '=', id)
    .execute()
}

test('a worker died after charging: the takeover records that payment and charges nothing more', async (t) => {
  const h = await startTestApp(t)
  const { m, customerId, cardToken, sub } = await subscribed(h)
  await claimAsDeadWorker(h, sub.id)
  // The dead worker's charge went through before it could record it.
  const paid = await chargeSavedCard(h.deps, {
    merchantId: m.merchantId,
    storeId: m.storeId,
    transactionId: `${sub.id}:1`,
    amount: sub.amountMinor,
    cardToken,
    customerId,
  })
  assert.equal(paid.status, 'captured')

  // Until the claim is stale, the row is left alone.
  await reconcile(m)
  assert.equal((await getSub(m, sub.id)).status, 'charging')

  h.clock.advance(6 * 60 * 1000)
  await reconcile(m)
  const s = await getSub(m, sub.id)
  assert.equal(s.status, 'active')
  assert.equal(s.cycleNumber, 1)
  const [charge] = await charges(m, sub.id)
  assert.equal(charge?.paymentId, paid.id, 'the dead worker’s payment is the cycle’s charge')
  await assertOneChargePerCycle(h, m.merchantId, [sub.id], 1)
})

test('a worker died after a declined attempt: the takeover adopts the decline, no second attempt', async (t) => {
  const h = await startTestApp(t)
  const { m, customerId, cardToken, sub } = await subscribed(h, { card: CARDS.declined })
  await claimAsDeadWorker(h, sub.id)
  const declined = await chargeSavedCard(h.deps, {
    merchantId: m.merchantId,
    storeId: m.storeId,
    transactionId: `${sub.id}:1`,
    amount: sub.amountMinor,
    cardToken,
    customerId,
  })
  assert.equal(declined.status, 'failed')
  h.clock.advance(6 * 60 * 1000)
  await reconcile(m)
  const s = await getSub(m, sub.id)
  assert.equal(s.status, 'past_due')
  assert.equal(s.failedAttempts, 1)
  assert.deepEqual(
    (await paymentsOfCycle(h, m.merchantId, sub.id, 1)).map((p) => p.id),
    [declined.id],
  )
})

test('a takeover finishes the charge even if a cancel at period end arrived meanwhile', async (t) => {
  const h = await startTestApp(t)
  const { m, customerId, cardToken, sub } = await subscribed(h)
  await claimAsDeadWorker(h, sub.id)
  await chargeSavedCard(h.deps, {
    merchantId: m.merchantId,
    storeId: m.storeId,
    transactionId: `${sub.id}:1`,
    amount: sub.amountMinor,
    cardToken,
    customerId,
  })
  // While the charge is in flight, cancel now is refused and cancel at period end is noted.
  assert.equal((await action(m, sub.id, 'cancel', { atPeriodEnd: false })).status, 409)
  assert.equal((await action(m, sub.id, 'cancel', { atPeriodEnd: true })).status, 200)
  h.clock.advance(6 * 60 * 1000)
  await reconcile(m)
  const s = await getSub(m, sub.id)
  assert.equal(s.status, 'active', 'the paid cycle is recorded, not dropped')
  assert.equal(s.cycleNumber, 1)
  assert.equal(s.cancelAtPeriodEnd, true)
  await assertOneChargePerCycle(h, m.merchantId, [sub.id], 1)
})
