// Goal: races resolve to exactly one outcome — 50 parallel same-key charges make one payment,
// one set of legs and one event (the rest replay it or get 409 SVC-GW-2002), another
// merchant's same key is independent, capture races void with one winner, and 20 partial
// refunds race the async-refund reconciler without over-refunding or losing one.
// Method: the real app on PostgreSQL, requests fired together through signed HTTP while the
// reconcilers run; the books are checked after every test.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { sql } from 'kysely'
import { startTestApp, type TestApp, type TestMerchant } from '../helpers/app.ts'
import { CARDS, openSession, tokenize } from '../helpers/payments.ts'
import { assertInvariants, drain, newKey } from './_harness.ts'

interface Body {
  paymentId: string
  status: string
  code?: string
  refundId?: string
  [k: string]: unknown
}

async function rows<T>(h: TestApp, query: ReturnType<typeof sql<T>>): Promise<T[]> {
  return (await query.execute(h.deps.db)).rows
}

async function charged(m: TestMerchant, amount: number, card: string, capture = true) {
  const { transactionId } = await openSession(m.client, amount)
  const cardToken = await tokenize(m.client, card)
  const res = await m.client.request<Body>('POST', '/v1/payments/card', {
    body: { transactionId, amount, currency: 'TRY', cardToken, capture },
  })
  assert.equal(res.status, 201, JSON.stringify(res.body))
  return res.body.paymentId
}

test('50 parallel charges with one key: one payment, one set of legs, one event; another merchant’s same key is its own', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const { transactionId } = await openSession(m.client, 25_000)
  const cardToken = await tokenize(m.client, CARDS.frictionless)
  const body = { transactionId, amount: 25_000, currency: 'TRY', cardToken }
  const key = newKey()

  const results = await Promise.all(
    Array.from({ length: 50 }, () =>
      m.client.request<Body>('POST', '/v1/payments/card', { body, idempotencyKey: key }),
    ),
  )
  const ok = results.filter((r) => r.status < 300)
  const others = results.filter((r) => r.status >= 300)
  assert.ok(ok.length >= 1)
  assert.ok(
    ok.every((r) => r.status === 201),
    JSON.stringify(ok.map((r) => r.status)),
  )
  // Replays are the first answer byte for byte.
  assert.equal(new Set(ok.map((r) => JSON.stringify(r.body))).size, 1)
  for (const r of others) {
    assert.equal(r.status, 409, JSON.stringify(r.body))
    assert.equal(r.body.code, 'SVC-GW-2002')
  }
  const paymentId = ok[0]?.body.paymentId ?? ''
  const payments = await rows(
    h,
    sql<{ id: string }>`select id from payments
      where merchant_id = ${m.merchantId} and transaction_id = ${transactionId}`,
  )
  assert.deepEqual(
    payments.map((p) => p.id),
    [paymentId],
  )
  const entries = await rows(
    h,
    sql<{
      n: number
    }>`select count(*)::int as n from ledger_entries where payment_id = ${paymentId}`,
  )
  assert.equal(entries[0]?.n, 1)
  const events = await rows(
    h,
    sql<{ n: number }>`select count(*)::int as n from events
      where resource_id = ${paymentId} and type = 'payment.captured'`,
  )
  assert.equal(events[0]?.n, 1)

  // The same key under another merchant's API key is another request altogether.
  const other = await h.newMerchant()
  const s2 = await openSession(other.client, 25_000)
  const token2 = await tokenize(other.client, CARDS.frictionless)
  const theirs = await other.client.request<Body>('POST', '/v1/payments/card', {
    body: { transactionId: s2.transactionId, amount: 25_000, currency: 'TRY', cardToken: token2 },
    idempotencyKey: key,
  })
  assert.equal(theirs.status, 201, JSON.stringify(theirs.body))
  assert.notEqual(theirs.body.paymentId, paymentId)
  // And it did not disturb the first merchant's record of the key.
  const again = await m.client.request<Body>('POST', '/v1/payments/card', {
    body,
    idempotencyKey: key,
  })
  assert.equal(again.body.paymentId, paymentId)
  await assertInvariants(h.deps.db)
})

test('20 parallel charges of one session without a key: the transactionId fence makes one payment', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const { transactionId } = await openSession(m.client, 8_000)
  const cardToken = await tokenize(m.client, CARDS.frictionless)
  const body = { transactionId, amount: 8_000, currency: 'TRY', cardToken }
  const results = await Promise.all(
    Array.from({ length: 20 }, () => m.client.request<Body>('POST', '/v1/payments/card', { body })),
  )
  assert.ok(
    results.every((r) => [200, 201, 202].includes(r.status)),
    JSON.stringify(results.map((r) => r.status)),
  )
  assert.equal(results.filter((r) => r.status === 201).length, 1)
  assert.equal(new Set(results.map((r) => r.body.paymentId)).size, 1)
  await assertInvariants(h.deps.db)
})

test('capture racing void: one wins, the other is refused, the bank saw only the winner', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  for (let round = 0; round < 4; round++) {
    const id = await charged(m, 6_000 + round, CARDS.frictionless, false)
    const calls = Array.from({ length: 20 }, (_, i) =>
      m.client.request<Body>('POST', `/v1/payments/${id}/${i % 2 === 0 ? 'capture' : 'void'}`, {
        body: {},
        ...(i < 4 ? { idempotencyKey: newKey() } : {}),
      }),
    )
    const results = await Promise.all(calls)
    const captures = results.filter((_, i) => i % 2 === 0)
    const voids = results.filter((_, i) => i % 2 === 1)
    const winner = captures.some((r) => r.status === 200) ? 'captured' : 'voided'
    const [wins, losses] = winner === 'captured' ? [captures, voids] : [voids, captures]
    assert.ok(
      wins.every((r) => r.status === 200 && r.body.status === winner),
      JSON.stringify(results.map((r) => [r.status, r.body.status ?? r.body.code])),
    )
    assert.ok(
      losses.every((r) => r.status === 409 && r.body.code === 'SVC-STATE-3401'),
      JSON.stringify(losses.map((r) => [r.status, r.body.code])),
    )
    const ops = await rows(
      h,
      sql<{ op: string }>`select op from acquirer_sandbox_operations
        where payment_id = ${id} and op in ('capture', 'void')`,
    )
    assert.deepEqual(
      ops.map((o) => o.op),
      [winner === 'captured' ? 'capture' : 'void'],
    )
  }
  await assertInvariants(h.deps.db)
})

/** Fires the refunds all at once while the reconcilers run in a loop beside them. */
async function refundsRacingReconciler(
  m: TestMerchant,
  paymentId: string,
  count: number,
  amount: number,
) {
  let racing = true
  const reconciler = (async () => {
    let runs = 0
    while (racing || runs === 0) {
      const res = await m.client.request('POST', '/v1/sandbox/reconcile', { body: {} })
      assert.equal(res.status, 200)
      runs++
    }
    return runs
  })()
  const results = await Promise.all(
    Array.from({ length: count }, () =>
      m.client.request<Body>('POST', `/v1/payments/${paymentId}/refund`, {
        body: { amount },
        idempotencyKey: newKey(),
      }),
    ),
  ).finally(() => (racing = false))
  assert.ok((await reconciler) >= 1)
  return results
}

test('20 partial refunds racing the async-refund reconciler: all complete once, none beyond the amount', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const id = await charged(m, 20_000, CARDS.asyncRefund)
  // 23 requests for 20 slots: exactly 20 are accepted whatever the interleaving.
  const results = await refundsRacingReconciler(m, id, 23, 1_000)
  const accepted = results.filter((r) => r.status === 200 || r.status === 202)
  const refused = results.filter((r) => r.status >= 400)
  assert.equal(accepted.length, 20, JSON.stringify(results.map((r) => [r.status, r.body.code])))
  assert.ok(refused.every((r) => ['SVC-VAL-3001', 'SVC-STATE-3401'].includes(r.body.code ?? '')))
  assert.deepEqual(await drain(h.deps.db, m.client), [])
  const refunds = await rows(
    h,
    sql<{ status: string; n: number; total: number }>`select status, count(*)::int as n,
      sum(amount)::int as total from refunds where payment_id = ${id} group by status`,
  )
  assert.deepEqual(refunds, [{ status: 'completed', n: 20, total: 20_000 }])
  const payment = await m.client.request<Body>('GET', `/v1/payments/${id}`)
  assert.equal(payment.body.status, 'refunded')

  // Refunds that the bank fails later give their reservation back.
  const failing = await charged(m, 10_000, CARDS.asyncRefundFails)
  const attempts = await refundsRacingReconciler(m, failing, 10, 1_000)
  assert.ok(attempts.every((r) => r.status === 200 || r.status === 202))
  assert.deepEqual(await drain(h.deps.db, m.client), [])
  const after = await m.client.request<Body>('GET', `/v1/payments/${failing}`)
  assert.equal(after.body.status, 'captured')
  assert.equal(after.body['refundableAmount'], 10_000)
  await assertInvariants(h.deps.db)
})
