// Goal: the settlement reconciler moves each owner's captured net share from reserve to
// available once that owner's delay has passed — per owner for split payments, once (unique
// references), never more than the reserve holds (refunds and chargebacks consume it), and
// keeping captures still inside the delay back; the ledger stays balanced throughout.
// Method: signed HTTP against the real app; in demo (delay 0) POST /v1/sandbox/reconcile runs
// it, in live (delay 1 day) the worker's runDueOnce runs it while the test clock moves.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { Db } from '../../src/database.ts'
import { startTestApp, OPERATOR_TOKEN } from '../helpers/app.ts'
import { startLiveTestApp } from '../helpers/live-bank.ts'
import { CARDS, charge } from '../helpers/payments.ts'
import { assertLedgerOk, balanceOf, newSubmerchant, reconcile } from './_support.ts'

async function entries(db: Db, reference: string): Promise<number[]> {
  const rows = await db
    .selectFrom('ledger_entries as e')
    .innerJoin('ledger_legs as l', 'l.entry_id', 'e.id')
    .select('l.amount')
    .where('e.reference', '=', reference)
    .where('l.direction', '=', 'CREDIT')
    .execute()
  return rows.map((r) => r.amount)
}

function slim(b: { reserveMinor: number; availableMinor: number; payoutPendingMinor: number }) {
  return [b.reserveMinor, b.availableMinor, b.payoutPendingMinor]
}

test('a split payment settles per owner: each net share moves once, reserve → available', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const sub = await newSubmerchant(h, m.merchantId)
  const { res } = await charge(
    m.client,
    CARDS.frictionless,
    10_000,
    {},
    { splits: [{ submerchantId: sub.submerchantId, amountMinor: 3_000 }] },
  )
  assert.equal(res.status, 201)
  // Commission 274 apportioned 30/70: the submerchant nets 2,918, the parent 6,808.
  assert.deepEqual(slim(await balanceOf(m.client, sub.submerchantId)), [2_918, 0, 0])
  assert.deepEqual(slim(await balanceOf(m.client, m.merchantId)), [6_808, 0, 0])
  assert.equal(
    (await pay(sub.client, sub.submerchantId, 100)).status,
    409,
    'reserve is not payable',
  )

  const ran = await reconcile(m.client)
  assert.ok((ran['payouts.settle_funds'] ?? 0) >= 2)
  assert.deepEqual(slim(await balanceOf(m.client, sub.submerchantId)), [0, 2_918, 0])
  assert.deepEqual(slim(await balanceOf(sub.client, sub.submerchantId)), [0, 2_918, 0])
  assert.deepEqual(slim(await balanceOf(m.client, m.merchantId)), [0, 6_808, 0])
  const id = res.body.paymentId
  assert.deepEqual(
    await entries(h.deps.db, `settlement:capture:${id}:submerchant:${sub.submerchantId}`),
    [2_918],
  )
  assert.deepEqual(
    await entries(h.deps.db, `settlement:capture:${id}:merchant:${m.merchantId}`),
    [6_808],
  )

  // Idempotent: another run moves nothing.
  await reconcile(m.client)
  assert.deepEqual(slim(await balanceOf(m.client, sub.submerchantId)), [0, 2_918, 0])
  assert.deepEqual(
    await entries(h.deps.db, `settlement:capture:${id}:submerchant:${sub.submerchantId}`),
    [2_918],
  )

  // The settled share is payable, exactly.
  assert.equal((await pay(sub.client, sub.submerchantId, 2_919)).status, 409)
  assert.equal((await pay(sub.client, sub.submerchantId, 2_918)).status, 201)
  await assertLedgerOk(h)
})

function pay(client: Parameters<typeof balanceOf>[0], submerchantId: string, amountMinor: number) {
  return client.request<{ code?: string }>('POST', '/v1/payouts', {
    body: { submerchantId, rail: 'fast', amountMinor, currency: 'TRY' },
  })
}

test('refunds before settlement: only what the reserve still holds moves, never below zero', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const full = await charge(m.client, CARDS.frictionless, 10_000)
  const part = await charge(m.client, CARDS.frictionless, 10_000)
  const refundAll = await m.client.request(
    'POST',
    `/v1/payments/${full.res.body.paymentId}/refund`,
    {
      body: {},
    },
  )
  assert.equal(refundAll.status, 200)
  const refundPart = await m.client.request(
    'POST',
    `/v1/payments/${part.res.body.paymentId}/refund`,
    { body: { amount: 4_000 } },
  )
  assert.equal(refundPart.status, 200)
  const reserve = (await balanceOf(m.client, m.merchantId)).reserveMinor
  // Two nets of 9,726, minus everything of the first and 4,000 less its commission part.
  assert.ok(reserve > 0 && reserve < 9_726)

  await reconcile(m.client)
  assert.deepEqual(slim(await balanceOf(m.client, m.merchantId)), [0, reserve, 0])
  await assertLedgerOk(h)

  // A refund after settlement is taken from available (the reserve is empty).
  const late = await m.client.request('POST', `/v1/payments/${part.res.body.paymentId}/refund`, {
    body: { amount: 1_000 },
  })
  assert.equal(late.status, 200)
  await reconcile(m.client)
  const after = await balanceOf(m.client, m.merchantId)
  assert.equal(after.reserveMinor, 0)
  assert.ok(after.availableMinor < reserve && after.availableMinor > reserve - 1_000)
  await assertLedgerOk(h)
})

test('a chargeback empties the reserve; its reversal is settled when it comes back', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const { res } = await charge(m.client, CARDS.frictionless, 10_000)
  const id = res.body.paymentId
  const cb = await m.client.request<{ id: string }>(
    'POST',
    `/v1/sandbox/payments/${id}/chargebacks`,
    {
      body: { amount: 10_000 },
    },
  )
  assert.equal(cb.status, 201, JSON.stringify(cb.body))
  const taken = await balanceOf(m.client, m.merchantId)
  assert.ok(taken.reserveMinor <= 0)
  await reconcile(m.client)
  assert.deepEqual(
    slim(await balanceOf(m.client, m.merchantId)),
    slim(taken),
    'nothing to settle, and nothing goes negative because of settlement',
  )
  const reversed = await m.client.request(
    'POST',
    `/v1/payments/${id}/chargebacks/${cb.body.id}/reverse`,
    { body: {} },
  )
  assert.equal(reversed.status, 200, JSON.stringify(reversed.body))
  assert.deepEqual(slim(await balanceOf(m.client, m.merchantId)), [9_726, 0, 0])
  await reconcile(m.client)
  assert.deepEqual(slim(await balanceOf(m.client, m.merchantId)), [0, 9_726, 0])
  await assertLedgerOk(h)
})

test('live: shares wait out the 1-day delay; a newer capture stays in reserve', async (t) => {
  // Live charges through a bank POS (a simulator here), never the sandbox bank.
  const h = await startLiveTestApp(t, {
    env: {
      KURUS_MASTER_KEY: Buffer.alloc(32, 7).toString('hex'),
      KURUS_OPERATOR_TOKEN: OPERATOR_TOKEN,
    },
  })
  const m = await h.newMerchant()
  const sub = await newSubmerchant(h, m.merchantId)
  const split = [{ submerchantId: sub.submerchantId, amountMinor: 3_000 }]
  const noThreeDs = { threeDSecure: false }
  const first = await charge(m.client, CARDS.frictionless, 10_000, noThreeDs, { splits: split })
  assert.equal(first.res.status, 201)
  const settle = () => h.deps.jobs.runDueOnce()

  await settle()
  assert.deepEqual(slim(await balanceOf(m.client, sub.submerchantId)), [2_918, 0, 0])
  h.clock.advance(12 * 60 * 60 * 1000)
  const second = await charge(m.client, CARDS.frictionless, 10_000, noThreeDs, { splits: split })
  assert.equal(second.res.status, 201)
  h.clock.advance(12 * 60 * 60 * 1000 - 60_000)
  await settle()
  assert.deepEqual(
    slim(await balanceOf(m.client, sub.submerchantId)),
    [5_836, 0, 0],
    'a minute early',
  )

  h.clock.advance(2 * 60_000) // the first capture is a day old; the second is 12 hours old
  await settle()
  assert.deepEqual(slim(await balanceOf(m.client, sub.submerchantId)), [2_918, 2_918, 0])
  assert.deepEqual(slim(await balanceOf(m.client, m.merchantId)), [6_808, 6_808, 0])

  // A refund of the settled first payment takes the reserve first (the ledger's rule), so
  // the second payment's settlement releases only what is left, never more.
  const refund = await m.client.request('POST', `/v1/payments/${first.res.body.paymentId}/refund`, {
    body: {},
  })
  assert.equal(refund.status, 200)
  const afterRefund = await balanceOf(m.client, sub.submerchantId)
  assert.deepEqual(slim(afterRefund), [0, 2_918, 0])
  h.clock.advance(12 * 60 * 60 * 1000)
  await settle()
  assert.deepEqual(slim(await balanceOf(m.client, sub.submerchantId)), [0, 2_918, 0])
  await assertLedgerOk(h)
})
