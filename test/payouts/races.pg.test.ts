// Goal: payouts racing for the same money stay within it — two workers on one pending payout
// make one set of legs and one paid event; two payouts that each fit but not together: one
// wins; two approvals of one draft at once fan it out once and answer the same.
// Method: signed HTTP and processPayout over the app's deps, fired together; on PostgreSQL
// they run in parallel transactions (the owner's advisory lock and the draft's row lock
// decide), hence *.pg.test.ts (docs/testing.md).
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { eventsForResource } from '../../src/modules/events/index.ts'
import { processPayout } from '../../src/modules/payouts/index.ts'
import { startTestApp } from '../helpers/app.ts'
import {
  assertLedgerOk,
  balanceOf,
  captureAndSettle,
  fundedSubmerchant,
  pay,
  trIban,
} from './_support.ts'

interface ApproveBody {
  draftId: string
  status: string
  payoutIds: string[]
  payoutCount: number
}

test('two workers on one pending payout at once: one set of legs, one paid event', async (t) => {
  const h = await startTestApp(t)
  const { m, sub } = await fundedSubmerchant(h, 50_000)
  const next = await pay(m.client, sub.submerchantId, 1_000)
  assert.equal(next.status, 201)
  const outcomes = await Promise.all([
    processPayout(h.deps, m.merchantId, next.body.payoutId),
    processPayout(h.deps, m.merchantId, next.body.payoutId),
  ])
  assert.deepEqual(outcomes, ['paid', 'paid'])
  assert.deepEqual(
    (await eventsForResource(h.deps.db, m.merchantId, next.body.payoutId)).map((e) => e.type),
    ['payout.created', 'payout.paid'],
  )
  assert.equal((await balanceOf(m.client, sub.submerchantId)).payoutPendingMinor, 0)
  await assertLedgerOk(h)
})

test('the available balance: more is 409 SVC-PAY-3502; two racing payouts, one wins', async (t) => {
  const h = await startTestApp(t)
  const { m, sub } = await fundedSubmerchant(h, 10_000)
  const { availableMinor } = await balanceOf(m.client, sub.submerchantId)
  const tooMuch = await pay(m.client, sub.submerchantId, availableMinor + 1)
  assert.equal(tooMuch.status, 409)
  assert.equal(tooMuch.body.code, 'SVC-PAY-3502')
  const list = await m.client.request<{ items: unknown[] }>('GET', '/v1/payouts')
  assert.equal(list.body.items.length, 0, 'a refused payout leaves no row behind')

  // Each alone fits; together they exceed the balance.
  const share = Math.floor(availableMinor * 0.6)
  const results = await Promise.all([
    pay(m.client, sub.submerchantId, share),
    pay(sub.client, sub.submerchantId, share),
  ])
  assert.deepEqual(results.map((r) => r.status).sort(), [201, 409])
  assert.equal(results.find((r) => r.status === 409)?.body.code, 'SVC-PAY-3502')
  const after = await balanceOf(m.client, sub.submerchantId)
  assert.equal(after.availableMinor, availableMinor - share)
  assert.equal(after.payoutPendingMinor, share)
  await assertLedgerOk(h)
})

test("two approvals of one draft at once: the draft's lock lets one fan out, the other answers the same", async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  await captureAndSettle(m, 12_000) // net 11,676 available
  const rows = [
    { rail: 'fast', dest: trIban('1'), holderName: 'A', amountMinor: 5_000, currency: 'TRY' },
    { rail: 'fast', dest: trIban('2'), holderName: 'B', amountMinor: 5_000, currency: 'TRY' },
  ]
  const d = await m.client.request<{ draftId: string; validTotalMinor: number }>(
    'POST',
    '/v1/payout-drafts',
    { body: { storeId: m.storeId, rows } },
  )
  assert.equal(d.body.validTotalMinor, 10_000)
  const [ok, twin] = await Promise.all(
    [1, 2].map(() =>
      m.client.request<ApproveBody>('POST', `/v1/payout-drafts/${d.body.draftId}/approve`, {
        body: {},
      }),
    ),
  )
  assert.equal(ok?.status, 200, JSON.stringify(ok?.body))
  assert.equal(twin?.status, 200, JSON.stringify(twin?.body))
  assert.equal(ok.body.payoutCount, 2)
  assert.deepEqual(twin.body.payoutIds, ok.body.payoutIds)
  assert.equal((await balanceOf(m.client, m.merchantId)).payoutPendingMinor, 10_000)
  await assertLedgerOk(h)
})
