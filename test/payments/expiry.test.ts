// Goal: authorization expiry (CONTRACT.md "Payments, later phase"): an authorization not
// finished within KURUS_AUTHORIZATION_TTL is released by the reconciler as a void would
// release it: nothing captured → `voided`, partially captured → `captured` with what it
// has, both with reason `authorization_expired`. Method: the app's test clock is moved
// past the TTL and the sandbox reconcile route runs the reconciler; state and events are
// read back through the API and the outbox.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { sql } from 'kysely'
import { auditBooks } from '../../src/modules/audit/index.ts'
import { loadConfig, ConfigError } from '../../src/config.ts'
import { eventsForResource } from '../../src/modules/events/index.ts'
import type { Kurus } from '../../sdk/index.ts'
import { startTestApp } from '../helpers/app.ts'
import { CARDS, charge } from '../helpers/payments.ts'

const HOUR = 3_600_000

async function authorize(client: Kurus, amount: number) {
  const { res } = await charge(client, CARDS.frictionless, amount, { capture: false })
  assert.equal(res.body.status, 'authorized')
  return res.body.paymentId
}

async function reconcile(client: Kurus) {
  const res = await client.request<{ ran: Record<string, number> }>(
    'POST',
    '/v1/sandbox/reconcile',
    { body: {} },
  )
  assert.equal(res.status, 200)
  return res.body.ran
}

async function payment(client: Kurus, id: string) {
  const res = await client.request<{
    status: string
    capturedAmount: number
    refundableAmount: number
  }>('GET', `/v1/payments/${id}`)
  return res.body
}

test('after the TTL: uncaptured → voided, partially captured → captured with what it has', async (t) => {
  const h = await startTestApp(t, { env: { KURUS_AUTHORIZATION_TTL: '12h' } })
  const m = await h.newMerchant()
  const untouched = await authorize(m.client, 5_000)
  const partial = await authorize(m.client, 8_000)
  const cap = await m.client.request<{ status: string }>(
    'POST',
    `/v1/payments/${partial}/capture`,
    {
      body: { amount: 3_000, final: false },
    },
  )
  assert.equal(cap.body.status, 'partially_captured')
  const finished = await authorize(m.client, 4_000)
  await m.client.request('POST', `/v1/payments/${finished}/capture`, { body: {} })

  h.clock.advance(12 * HOUR - 60_000)
  await reconcile(m.client)
  assert.equal((await payment(m.client, untouched)).status, 'authorized')
  assert.equal((await payment(m.client, partial)).status, 'partially_captured')

  h.clock.advance(2 * 60_000)
  const ran = await reconcile(m.client)
  assert.equal(ran['payments.expire_authorizations'], 2)

  assert.equal((await payment(m.client, untouched)).status, 'voided')
  const voidedEvents = await eventsForResource(h.deps.db, m.merchantId, untouched)
  assert.equal(voidedEvents.at(-1)?.type, 'payment.voided')
  assert.equal(voidedEvents.at(-1)?.data['reason'], 'authorization_expired')

  const released = await payment(m.client, partial)
  assert.equal(released.status, 'captured')
  assert.equal(released.capturedAmount, 3_000)
  assert.equal(released.refundableAmount, 3_000)
  const releasedEvents = await eventsForResource(h.deps.db, m.merchantId, partial)
  assert.equal(releasedEvents.at(-1)?.type, 'payment.remainder_released')
  assert.equal(releasedEvents.at(-1)?.data['reason'], 'authorization_expired')
  assert.equal(releasedEvents.at(-1)?.data['releasedAmount'], 5_000)
  // The bank released the rest too.
  const bank = await sql<{ amount: string }>`select amount from acquirer_sandbox_operations
    where payment_id = ${partial} and op = 'void'`.execute(h.deps.db)
  assert.equal(Number(bank.rows[0]?.amount), 5_000)

  assert.equal((await payment(m.client, finished)).status, 'captured')
  // Nothing more to release: a second run moves nothing.
  assert.equal((await reconcile(m.client))['payments.expire_authorizations'], 0)
  const capture = await m.client.request<{ code: string }>(
    'POST',
    `/v1/payments/${untouched}/capture`,
  )
  assert.equal(capture.status, 409)
  assert.deepEqual((await auditBooks(h.deps.db)).problems, [])
})

test('the default TTL is 7 days; a bad value stops the configuration', async (t) => {
  const h = await startTestApp(t)
  assert.equal(h.config.authorizationTtlMs, 7 * 24 * HOUR)
  const m = await h.newMerchant()
  const id = await authorize(m.client, 5_000)
  h.clock.advance(7 * 24 * HOUR - HOUR)
  await reconcile(m.client)
  assert.equal((await payment(m.client, id)).status, 'authorized')
  h.clock.advance(2 * HOUR)
  await reconcile(m.client)
  assert.equal((await payment(m.client, id)).status, 'voided')

  const base = { KURUS_ENV: 'demo', KURUS_DATA_DIR: '/nonexistent-test-data-dir' }
  const overrides = { masterKey: Buffer.alloc(32, 7), operatorToken: 'x'.repeat(32) }
  for (const [raw, ms] of [
    ['90s', 90_000],
    ['30m', 30 * 60_000],
    ['36h', 36 * HOUR],
    ['7d', 7 * 24 * HOUR],
  ] as const) {
    const config = loadConfig({ ...base, KURUS_AUTHORIZATION_TTL: raw }, overrides)
    assert.equal(config.authorizationTtlMs, ms, raw)
  }
  for (const raw of ['7', '7 days', '1.5d', '-1d', '30s', '31d', 'd']) {
    assert.throws(
      () => loadConfig({ ...base, KURUS_AUTHORIZATION_TTL: raw }, overrides),
      (e: unknown) => e instanceof ConfigError && e.message.includes('KURUS_AUTHORIZATION_TTL'),
      raw,
    )
  }
})
