// Goal: bank reports racing for one QR session make one payment with one set of legs.
// Method: the sandbox bank's QR report sent five times at once through the signed API; on
// PostgreSQL they run in parallel transactions, hence *.pg.test.ts (docs/testing.md).
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { legsForPayment } from '../../src/modules/ledger/index.ts'
import { startTestApp } from '../helpers/app.ts'
import { createSession } from './_support.ts'

test('concurrent bank reports for one QR session make one payment', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const { sessionId } = await createSession(m.client, { amount: 9_900, mode: 'qr' })
  const results = await Promise.all(
    Array.from({ length: 5 }, () =>
      m.client.request<{ paymentId: string }>('POST', `/v1/sandbox/sessions/${sessionId}/qr-pay`, {
        body: {},
      }),
    ),
  )
  assert.deepEqual(results.map((r) => r.status).sort(), [200, 200, 200, 200, 201])
  assert.equal(new Set(results.map((r) => r.body.paymentId)).size, 1)
  const legs = await legsForPayment(h.deps.db, m.merchantId, results[0]!.body.paymentId)
  assert.equal(
    legs.filter((l) => l.direction === 'DEBIT').reduce((s, l) => s + l.amount, 0),
    9_900,
  )
})
