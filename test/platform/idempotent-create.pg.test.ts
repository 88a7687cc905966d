// Goal: the domain half of idempotency (platform/idempotent-create.ts). One Idempotency-Key
// sent at once through several of a merchant's API keys passes the gateway several times (its
// record is per API key), so the requests race to the key stored on the resource's row: each
// gets an answer, and they all name the one refund (or payout) that was made.
// Method: signed HTTP requests fired together through keys made by rolling the merchant's key
// (the rolled-away keys keep working for their grace period); on PostgreSQL the claims run in
// parallel transactions and the losers meet the unique index, which is why this is *.pg.
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { test } from 'node:test'
import { sql } from 'kysely'
import type { Kurus } from '../../sdk/index.ts'
import { startTestApp, type TestApp, type TestMerchant } from '../helpers/app.ts'
import { CARDS, charge } from '../helpers/payments.ts'
import { fundedSubmerchant, type PayoutBody } from '../payouts/_support.ts'

const KEYS = 5

/** The merchant's client and KEYS - 1 more, each through an API key of its own. */
async function clientsOf(h: TestApp, m: TestMerchant): Promise<Kurus[]> {
  const clients = [m.client]
  let keyId = m.apiKeyId
  while (clients.length < KEYS) {
    const rolled = await h.operator<{ apiKeyId: string; publicKey: string; secretKey: string }>(
      'POST',
      `/operator/v1/merchants/${m.merchantId}/api-keys/${keyId}/roll`,
    )
    assert.equal(rolled.status, 201, JSON.stringify(rolled.body))
    keyId = rolled.body.apiKeyId
    clients.push(h.clientFor(rolled.body))
  }
  return clients
}

test('one key through several API keys at once: one refund, every answer names it', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const clients = await clientsOf(h, m)
  const { res } = await charge(m.client, CARDS.frictionless, 10_000)
  const paymentId = res.body.paymentId
  const key = randomUUID()
  const answers = await Promise.all(
    clients.map((client) =>
      client.request<{ refundAmount: number; lastRefund: { refundId: string } }>(
        'POST',
        `/v1/payments/${paymentId}/refund`,
        { body: { amount: 1_000 }, idempotencyKey: key },
      ),
    ),
  )
  // 200 once the bank answered; 202 for an answer read while the refund was still pending.
  for (const a of answers) assert.ok([200, 202].includes(a.status), JSON.stringify(a.body))
  const ids = new Set(answers.map((a) => a.body.lastRefund.refundId))
  assert.equal(ids.size, 1, 'every answer names the one refund')
  const rows = await sql<{ n: number }>`select count(*)::int as n from refunds
    where payment_id = ${paymentId}`.execute(h.deps.db)
  assert.equal(rows.rows[0]?.n, 1)
  const after = await m.client.request<{ refundAmount: number }>('GET', `/v1/payments/${paymentId}`)
  assert.equal(after.body.refundAmount, 1_000)
})

test('one key through several API keys at once: one payout, every answer names it', async (t) => {
  const h = await startTestApp(t)
  const { m, sub } = await fundedSubmerchant(h, 20_000)
  const clients = await clientsOf(h, m)
  const key = randomUUID()
  const body = {
    submerchantId: sub.submerchantId,
    rail: 'eft',
    amountMinor: 1_500,
    currency: 'TRY',
  }
  const answers = await Promise.all(
    clients.map((client) =>
      client.request<PayoutBody>('POST', '/v1/payouts', { body, idempotencyKey: key }),
    ),
  )
  for (const a of answers) assert.equal(a.status, 201, JSON.stringify(a.body))
  assert.equal(new Set(answers.map((a) => a.body.payoutId)).size, 1)
  const rows = await sql<{ n: number }>`select count(*)::int as n from payouts
    where merchant_id = ${m.merchantId}`.execute(h.deps.db)
  assert.equal(rows.rows[0]?.n, 1)
})
