// Goal: one settlement payout per merchant per run, whatever the number of workers: two
// workers running the settlement run at once make one payout, one run row, one set of legs.
// Method: runSettlementPayouts twice in parallel over the app's deps; on PostgreSQL the two
// transactions really run at once (the run's unique key and the owner's locks decide),
// hence *.pg.test.ts.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { runSettlementPayouts } from '../../src/modules/payouts/settlement-payouts.service.ts'
import { startTestApp } from '../helpers/app.ts'
import { CARDS, charge } from '../helpers/payments.ts'
import { assertLedgerOk, balanceOf, trIban } from './_support.ts'

test('two workers run the same settlement run at once: one payout', async (t) => {
  const h = await startTestApp(t)
  const merchants = await Promise.all([h.newMerchant(), h.newMerchant(), h.newMerchant()])
  h.clock.set(new Date('2026-12-08T06:00:00Z')) // Tuesday 09:00 Istanbul
  for (const [i, m] of merchants.entries()) {
    const put = await m.client.request('PUT', '/v1/bank-account', {
      body: { iban: trIban(`55${String(i)}`), holderName: 'Paralel Ticaret' },
    })
    assert.equal(put.status, 200)
    const { res } = await charge(m.client, CARDS.frictionless, 10_000 + i)
    assert.equal(res.status, 201)
  }
  // Settle only (the reserve → available reconciler), then race two runs.
  await h.deps.jobs.runDueOnce()
  h.clock.set(new Date('2026-12-09T06:00:00Z'))
  const before = await Promise.all(
    merchants.map(async (m) => (await balanceOf(m.client, m.merchantId)).availableMinor),
  )
  const created = await Promise.all([runSettlementPayouts(h.deps), runSettlementPayouts(h.deps)])
  assert.ok(
    created.reduce((a, b) => a + b, 0) <= merchants.length,
    `at most one payout per merchant: ${JSON.stringify(created)}`,
  )
  for (const [i, m] of merchants.entries()) {
    const rows = await h.deps.db
      .selectFrom('payouts')
      .select(['amount_minor', 'run_date'])
      .where('merchant_id', '=', m.merchantId)
      .where('kind', '=', 'settlement')
      .execute()
    const expected = before[i] ?? 0
    if (expected > 0) {
      assert.deepEqual(rows, [{ amount_minor: expected, run_date: '2026-12-09' }])
    }
    const runs = await h.deps.db
      .selectFrom('payout_runs')
      .select('run_date')
      .where('merchant_id', '=', m.merchantId)
      .where('run_date', '=', '2026-12-09')
      .execute()
    assert.equal(runs.length, 1)
  }
  await assertLedgerOk(h)
})
