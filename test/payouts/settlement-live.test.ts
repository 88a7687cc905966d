// Goal: in live, a bank account change holds settlement payouts for 24 hours (CONTRACT.md):
// the run waits (nothing recorded) and pays once the hold is over.
// Method: a live app (settlement delay 1 day) charging through a bank POS on a simulator
// (live never reaches the sandbox bank); the worker's runDueOnce runs the reconcilers while
// the test clock moves.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { OPERATOR_TOKEN } from '../helpers/app.ts'
import { startLiveTestApp } from '../helpers/live-bank.ts'
import { CARDS, charge } from '../helpers/payments.ts'
import { assertLedgerOk, balanceOf, trIban } from './_support.ts'

test('live: payouts wait 24 hours after a bank account change, then pay', async (t) => {
  const h = await startLiveTestApp(t, {
    env: {
      KURUS_MASTER_KEY: Buffer.alloc(32, 7).toString('hex'),
      KURUS_OPERATOR_TOKEN: OPERATOR_TOKEN,
    },
  })
  const m = await h.newMerchant()
  const tick = () => h.deps.jobs.runDueOnce()
  h.clock.set(new Date('2026-12-01T07:00:00Z')) // 10:00 Istanbul
  const { res } = await charge(m.client, CARDS.frictionless, 10_000, { threeDSecure: false })
  assert.equal(res.status, 201, JSON.stringify(res.body))
  assert.equal(h.bank.orders.get(res.body.paymentId)?.amount, 10_000)
  h.clock.set(new Date('2026-12-02T08:00:00Z'))
  await tick() // settles (1-day delay over)
  const available = (await balanceOf(m.client, m.merchantId)).availableMinor
  assert.ok(available > 0)

  const put = await m.client.request<{ payoutsHeldUntil: string }>('PUT', '/v1/bank-account', {
    body: { iban: trIban('1212'), holderName: 'Canlı Mağaza A.Ş.' },
  })
  assert.equal(put.status, 200, JSON.stringify(put.body))
  const held = Date.parse(put.body.payoutsHeldUntil) - Date.parse('2026-12-03T08:00:00Z')
  assert.ok(held >= 0 && held < 60_000, put.body.payoutsHeldUntil)
  await tick()
  h.clock.set(new Date('2026-12-03T07:59:00Z'))
  await tick()
  const list = () =>
    m.client.request<{ items: { kind: string; amountMinor: number }[] }>('GET', '/v1/payouts')
  assert.deepEqual((await list()).body.items, [], 'held')
  h.clock.set(new Date('2026-12-03T08:02:00Z'))
  await tick()
  const items = (await list()).body.items.filter((p) => p.kind === 'settlement')
  assert.equal(items.length, 1)
  assert.equal(items[0]?.amountMinor, available)
  await assertLedgerOk(h)
})
