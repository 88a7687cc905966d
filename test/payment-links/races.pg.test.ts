// Goal: a payment link's maxPayments is never exceeded when buyers press Pay at once and pay
// at once: of 20 concurrent presses on a 3-payment link exactly 3 get a checkout session (the
// others the 409 page), their 3 payments at once are all captured, and the link is then used
// up (410). Method: plain HTTP fired together (Promise.all); on PostgreSQL the presses run in
// parallel transactions that meet on the link's row lock (docs/testing.md).
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { sql } from 'kysely'
import type { PaymentLink } from '../../sdk/index.ts'
import { startTestApp } from '../helpers/app.ts'
import { createLink, hashOf, payByCard, pressPay } from './_support.ts'

test('20 buyers at once on a 3-payment link: 3 sessions, 3 captured payments, then 410', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const link = await createLink(m, { maxPayments: 3 })
  const hash = hashOf(link)
  const presses = await Promise.all(Array.from({ length: 20 }, () => pressPay(h, hash)))
  const statuses = presses.map((p) => p.status).sort()
  assert.deepEqual(statuses, [
    ...new Array<number>(3).fill(303),
    ...new Array<number>(17).fill(409),
  ])
  const sessionIds = presses
    .filter((p) => p.status === 303)
    .map((p) => (p.headers.get('location') ?? '').slice(3))
  const rows = await sql<{ transaction_id: string }>`select transaction_id from payment_sessions
    where payment_link_id = ${link.id}`.execute(h.deps.db)
  assert.deepEqual(rows.rows.map((r) => r.transaction_id).sort(), [
    `${link.id}:1`,
    `${link.id}:2`,
    `${link.id}:3`,
  ])

  const paid = await Promise.all(sessionIds.map((id) => payByCard(h, id)))
  assert.ok(
    paid.every((p) => p.body.status === 'captured'),
    JSON.stringify(paid),
  )
  const got = await m.client.request<PaymentLink>('GET', `/v1/payment-links/${link.id}`)
  assert.equal(got.body.paymentsCount, 3)
  assert.equal(got.body.status, 'completed')
  const captured = await sql<{ n: string }>`select count(*) as n from payments
    where payment_link_id = ${link.id} and status = 'captured'`.execute(h.deps.db)
  assert.equal(Number(captured.rows[0]?.n), 3)
  const late = await Promise.all(Array.from({ length: 5 }, () => pressPay(h, hash)))
  assert.ok(late.every((p) => p.status === 410))
})
