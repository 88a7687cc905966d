// Goal: velocity counts under concurrent charges (docs/risk.md "Velocity"): each charge
// writes its intent row first and counts after, so of N charges of one card fired at once
// the k-th to count sees at least k attempts and the last sees all N. A rule "more than 3
// attempts in an hour blocks" then lets at most 3 through, however the charges interleave,
// in one process or several (the count is in the database, not in memory).
// Method: sessions and tokens made first, then the charges fired together (Promise.all); on
// PostgreSQL they run in parallel connections (docs/testing.md).
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { sql } from 'kysely'
import { startTestApp } from '../helpers/app.ts'
import { CARDS, openSession, tokenize } from '../helpers/payments.ts'
import { createRule } from './_support.ts'

const N = 10

test(`${N} concurrent charges of one card: at most 3 pass a "more than 3 per hour" rule`, async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const rule = await createRule(m.client, 'block', {
    '>': [{ var: 'velocity.cardAttempts1h' }, 3],
  })
  const prepared = []
  for (let i = 0; i < N; i++) {
    const { transactionId } = await openSession(m.client, 5000)
    prepared.push({ transactionId, cardToken: await tokenize(m.client, CARDS.frictionless) })
  }
  const results = await Promise.all(
    prepared.map((p) =>
      m.client.request<{ status: string; code?: string }>('POST', '/v1/payments/card', {
        body: { ...p, amount: 5000, currency: 'TRY', threeDSecure: false },
      }),
    ),
  )
  const passed = results.filter((r) => r.status === 201)
  const blocked = results.filter((r) => r.status === 402)
  assert.equal(passed.length + blocked.length, N, JSON.stringify(results.map((r) => r.body)))
  assert.ok(passed.length <= 3, `${passed.length} passed`)
  assert.ok(blocked.every((r) => r.body.code === 'SVC-RISK-3701'))

  const { rows } = await sql<{ attempts: number; status: string; risk: { ruleIds: string[] } }>`
    select (risk_facts->'velocity'->>'cardAttempts1h')::int as attempts, status, risk
    from payments where merchant_id = ${m.merchantId}`.execute(h.deps.db)
  assert.equal(rows.length, N)
  const counts = rows.map((r) => r.attempts).sort((a, b) => a - b)
  // The k-th to count saw its own row and every earlier counter's: count(k) >= k.
  counts.forEach((c, i) => assert.ok(c >= i + 1, `counts ${counts.join(',')}`))
  assert.equal(counts.at(-1), N)
  for (const r of rows) {
    assert.equal(r.status === 'failed', r.attempts > 3, JSON.stringify(r))
    if (r.status === 'failed') assert.deepEqual(r.risk.ruleIds, [rule])
  }
})
