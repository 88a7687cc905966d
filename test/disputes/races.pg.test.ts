// Goal: an accept and a reverse of one chargeback sent at once: exactly one wins, and the
// ledger has the reversal legs only when reverse won.
// Method: signed HTTP (the sandbox helper plays the bank), both calls fired together; on
// PostgreSQL they run in parallel transactions, hence *.pg.test.ts (docs/testing.md).
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { legsForPayment } from '../../src/modules/ledger/index.ts'
import { startTestApp } from '../helpers/app.ts'
import { CARDS, charge } from '../helpers/payments.ts'
import { raise } from './_support.ts'

test('concurrent accept and reverse: exactly one wins', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  for (let round = 0; round < 4; round++) {
    const { res } = await charge(m.client, CARDS.frictionless, 6_000)
    const id = res.body.paymentId
    const cb = await raise(m, id)
    const [a, r] = await Promise.all(
      ['accept', 'reverse'].map((action) =>
        m.client.request<{ status: string; code?: string }>(
          'POST',
          `/v1/payments/${id}/chargebacks/${cb.body.id}/${action}`,
          { body: {} },
        ),
      ),
    )
    assert.ok(a && r)
    const statuses = [a.status, r.status].sort()
    assert.deepEqual(statuses, [200, 409], JSON.stringify([a.body, r.body]))
    const legs = await legsForPayment(h.deps.db, m.merchantId, id)
    const reversals = legs.filter(
      (l) => l.accountType === 'buyer_pending' && l.direction === 'DEBIT',
    )
    // The capture's debit, plus the reversal's when reverse won.
    assert.equal(reversals.length, r.status === 200 ? 2 : 1)
  }
})
