// Goal: partial and multi-capture (CONTRACT.md "Payments, later phase"): several captures of
// one authorization, each with its own balanced ledger entry and payment.captured event,
// commission pro rata so the captures' sum is the one-shot commission to the kuruş (with
// marketplace splits too), the remainder and state rules (400 above the remainder, 409 with
// an amount on a captured payment, void releasing the rest), refunds of captured money (also
// between captures) with exact books. Concurrent captures are in races.pg.test.ts.
// Method: signed HTTP against the real database; the ledger and the audit are read back.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { sql } from 'kysely'
import { sandboxBank } from '../../src/modules/acquirer/index.ts'
import { auditBooks } from '../../src/modules/audit/index.ts'
import { eventsForResource } from '../../src/modules/events/index.ts'
import { apportionCapture } from '../../src/modules/ledger/index.ts'
import type { Kurus } from '../../sdk/index.ts'
import { startTestApp, type TestApp } from '../helpers/app.ts'
import { CARDS, charge } from '../helpers/payments.ts'
import { balanceOf, newSubmerchant } from '../payouts/_support.ts'

interface CaptureBody {
  id: string
  status: string
  amount: number
  capturedAmount: number
  commission: number
  netAmount: number
  refundableAmount: number
  captures: { id: string; amount: number; createdAt: string }[]
}

interface ErrorBody {
  code: string
  details?: { field: string; reason: string }[]
}

async function authorize(client: Kurus, amount: number, sessionExtra = {}) {
  const { res } = await charge(client, CARDS.frictionless, amount, { capture: false }, sessionExtra)
  assert.equal(res.status, 201, JSON.stringify(res.body))
  assert.equal(res.body.status, 'authorized')
  return res.body
}

function capture(client: Kurus, id: string, body: Record<string, unknown> = {}) {
  return client.request<CaptureBody & ErrorBody>('POST', `/v1/payments/${id}/capture`, { body })
}

/** The payment's capture entries: each one's legs summed per side, and its commission. */
async function captureEntries(h: TestApp, paymentId: string) {
  const rows = await sql<{
    reference: string
    debits: string
    credits: string
    commission: string
    buyer: string
  }>`select e.reference,
         sum(l.amount) filter (where l.direction = 'DEBIT') as debits,
         sum(l.amount) filter (where l.direction = 'CREDIT') as credits,
         coalesce(sum(l.amount) filter (where l.account_type = 'platform_commission'), 0) as commission,
         coalesce(sum(l.amount) filter (where l.account_type = 'buyer_pending'), 0) as buyer
       from ledger_entries e join ledger_legs l on l.entry_id = e.id
      where e.payment_id = ${paymentId} and e.kind = 'capture'
      group by e.id, e.reference, e.created_at
      order by e.created_at`.execute(h.deps.db)
  return rows.rows.map((r) => ({
    reference: r.reference,
    debits: Number(r.debits),
    credits: Number(r.credits),
    commission: Number(r.commission),
    buyer: Number(r.buyer),
  }))
}

async function assertBooksClean(h: TestApp) {
  const report = await auditBooks(h.deps.db)
  assert.deepEqual(report.problems, [])
}

test('three captures add up to the amount; each entry balances; commission sums to the one-shot', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  // 10,001 kuruş at 249 bps + 25: one-shot commission 274; thirds do not divide evenly.
  const auth = await authorize(m.client, 10_001)
  const oneShot = auth.commission
  assert.equal(oneShot, 274)
  const id = auth.paymentId

  const first = await capture(m.client, id, { amount: 3_333, final: false })
  assert.equal(first.status, 200, JSON.stringify(first.body))
  assert.equal(first.body.status, 'partially_captured')
  assert.equal(first.body.capturedAmount, 3_333)
  assert.equal(first.body.refundableAmount, 3_333, 'captured money is refundable at once')
  const second = await capture(m.client, id, { amount: 3_333, final: false })
  assert.equal(second.body.status, 'partially_captured')
  assert.equal(second.body.capturedAmount, 6_666)
  // No amount: the remainder, and the payment is captured.
  const third = await capture(m.client, id)
  assert.equal(third.status, 200, JSON.stringify(third.body))
  assert.equal(third.body.status, 'captured')
  assert.equal(third.body.capturedAmount, 10_001)
  assert.equal(third.body.commission, oneShot)
  assert.equal(third.body.netAmount, 10_001 - oneShot)
  assert.equal(third.body.refundableAmount, 10_001)
  assert.deepEqual(
    third.body.captures.map((c) => c.amount),
    [3_333, 3_333, 3_335],
  )
  assert.ok(third.body.captures.every((c) => /^cap_[0-9a-z]{24}$/.test(c.id)))

  const entries = await captureEntries(h, id)
  assert.equal(entries.length, 3)
  for (const e of entries) assert.equal(e.debits, e.credits, `${e.reference} balances`)
  assert.deepEqual(
    entries.map((e) => e.buyer),
    [3_333, 3_333, 3_335],
  )
  // Cumulative half-up: 274·3333/10001 = 91.3 → 91; 274·6666/10001 = 182.6 → 183; 274.
  assert.deepEqual(
    entries.map((e) => e.commission),
    [91, 92, 91],
  )
  assert.equal(
    entries.reduce((s, e) => s + e.commission, 0),
    oneShot,
  )
  assert.deepEqual(
    entries.map((e) => e.reference),
    third.body.captures.map((c) => `capture:${c.id}`),
  )

  const events = (await eventsForResource(h.deps.db, m.merchantId, id)).filter(
    (e) => e.type === 'payment.captured',
  )
  assert.deepEqual(
    events.map((e) => [e.data['captureId'], e.data['amount'], e.data['authorizedAmount']]),
    third.body.captures.map((c) => [c.id, c.amount, 10_001]),
  )
  assert.deepEqual(
    events.map((e) => e.data['status']),
    ['partially_captured', 'partially_captured', 'captured'],
  )

  const got = await m.client.request<CaptureBody>('GET', `/v1/payments/${id}`)
  assert.equal(got.body.capturedAmount, 10_001)
  assert.deepEqual(got.body.captures, third.body.captures)
  await assertBooksClean(h)
})

test('with splits: captures credit every owner exactly its one-shot net share', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const subA = await newSubmerchant(h, m.merchantId)
  const subB = await newSubmerchant(h, m.merchantId)
  const amount = 9_997
  const splits = [
    { submerchantId: subA.submerchantId, amountMinor: 3_331 },
    { submerchantId: subB.submerchantId, amountMinor: 4_999 },
  ]
  const auth = await authorize(m.client, amount, { splits })
  const id = auth.paymentId
  for (const part of [1_001, 2_999, 3_000]) {
    const res = await capture(m.client, id, { amount: part, final: false })
    assert.equal(res.status, 200, JSON.stringify(res.body))
  }
  const last = await capture(m.client, id, { final: true })
  assert.equal(last.body.status, 'captured')
  assert.equal(last.body.capturedAmount, amount)
  for (const e of await captureEntries(h, id)) assert.equal(e.debits, e.credits)

  const owners = apportionCapture(amount, auth.commission, [
    { ownerType: 'merchant', ownerId: m.merchantId, grossMinor: amount - 3_331 - 4_999 },
    { ownerType: 'submerchant', ownerId: subA.submerchantId, grossMinor: 3_331 },
    { ownerType: 'submerchant', ownerId: subB.submerchantId, grossMinor: 4_999 },
  ])
  for (const owner of owners) {
    const b = await balanceOf(m.client, owner.ownerId)
    assert.equal(b.reserveMinor + b.availableMinor, owner.netMinor, owner.ownerId)
  }
  await assertBooksClean(h)
})

test('above the remainder is 400; an amount on a captured payment is 409; a full repeat is 200', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const id = (await authorize(m.client, 10_000)).paymentId
  assert.equal((await capture(m.client, id, { amount: 6_000, final: false })).status, 200)

  const over = await capture(m.client, id, { amount: 4_001 })
  assert.equal(over.status, 400)
  assert.equal(over.body.code, 'SVC-VAL-3001')
  assert.equal(over.body.details?.[0]?.field, 'amount')
  const zero = await capture(m.client, id, { amount: 0 })
  assert.equal(zero.status, 400)
  const unchanged = await m.client.request<CaptureBody>('GET', `/v1/payments/${id}`)
  assert.equal(unchanged.body.status, 'partially_captured')
  assert.equal(unchanged.body.capturedAmount, 6_000)

  // final (the default) with less than the remainder releases the rest.
  const done = await capture(m.client, id, { amount: 1_000 })
  assert.equal(done.body.status, 'captured')
  assert.equal(done.body.capturedAmount, 7_000)
  assert.equal(done.body.refundableAmount, 7_000)

  const withAmount = await capture(m.client, id, { amount: 100 })
  assert.equal(withAmount.status, 409)
  assert.equal(withAmount.body.code, 'SVC-STATE-3401')
  const repeat = await capture(m.client, id)
  assert.equal(repeat.status, 200)
  assert.equal(repeat.body.status, 'captured')
  assert.equal(repeat.body.capturedAmount, 7_000)
  const noBody = await m.client.request<CaptureBody>('POST', `/v1/payments/${id}/capture`)
  assert.equal(noBody.status, 200)
  assert.equal((await captureEntries(h, id)).length, 2)
  // Nothing is left open at the bank either.
  const bank = await sql<{ op: string; amount: string; final: boolean | null }>`
    select op, amount, final from acquirer_sandbox_operations
     where payment_id = ${id} order by created_at`.execute(h.deps.db)
  assert.deepEqual(
    bank.rows.map((r) => [r.op, Number(r.amount), r.final]),
    [
      ['authorize', 10_000, null],
      ['capture', 6_000, false],
      ['capture', 1_000, true],
    ],
  )

  // A full capture of a one-shot capture keeps the payment's own ledger reference.
  const whole = (await authorize(m.client, 5_000)).paymentId
  const full = await capture(m.client, whole)
  assert.equal(full.body.status, 'captured')
  assert.deepEqual(
    (await captureEntries(h, whole)).map((e) => e.reference),
    [`capture:${whole}`],
  )
  assert.deepEqual(
    full.body.captures.map((c) => c.id),
    [`cap_${whole.slice(4)}`],
  )
  const wholeEvent = (await eventsForResource(h.deps.db, m.merchantId, whole)).find(
    (e) => e.type === 'payment.captured',
  )
  assert.deepEqual(
    [
      wholeEvent?.data['captureId'],
      wholeEvent?.data['amount'],
      wholeEvent?.data['authorizedAmount'],
    ],
    [`cap_${whole.slice(4)}`, 5_000, 5_000],
  )
  // A charge captured at once is one capture too, with the same id scheme.
  const { res: sale } = await charge(m.client, CARDS.frictionless, 3_000)
  const saleEvent = (await eventsForResource(h.deps.db, m.merchantId, sale.body.paymentId)).find(
    (e) => e.type === 'payment.captured',
  )
  assert.equal(saleEvent?.data['captureId'], `cap_${sale.body.paymentId.slice(4)}`)
  assert.equal(saleEvent?.data['capturedAmount'], 3_000)
  await assertBooksClean(h)
})

test('void of a partially captured payment releases the rest and keeps what was captured', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const auth = await authorize(m.client, 8_000)
  const id = auth.paymentId
  assert.equal((await capture(m.client, id, { amount: 2_500, final: false })).status, 200)
  const voided = await m.client.request<Record<string, unknown>>(
    'POST',
    `/v1/payments/${id}/void`,
    {
      body: { reason: 'kalan ürün stokta yok' },
    },
  )
  assert.equal(voided.status, 200, JSON.stringify(voided.body))
  assert.deepEqual(voided.body, {
    id,
    status: 'captured',
    amount: 8_000,
    currency: 'TRY',
    capturedAmount: 2_500,
  })
  const got = await m.client.request<CaptureBody>('GET', `/v1/payments/${id}`)
  assert.equal(got.body.status, 'captured')
  assert.equal(got.body.refundableAmount, 2_500)
  // Commission of 2,500 of 8,000: 224 · 2500 / 8000 = 70.
  assert.equal(auth.commission, 224)
  assert.equal(got.body.commission, 70)
  assert.equal(got.body.netAmount, 2_430)

  const events = await eventsForResource(h.deps.db, m.merchantId, id)
  assert.deepEqual(
    events.map((e) => e.type),
    ['payment.authorized', 'payment.captured', 'payment.remainder_released'],
  )
  assert.equal(events.at(-1)?.data['reason'], 'kalan ürün stokta yok')
  assert.equal(events.at(-1)?.data['releasedAmount'], 5_500)
  assert.equal(events.at(-1)?.data['status'], 'captured')

  const again = await capture(m.client, id, { amount: 100 })
  assert.equal(again.status, 409)
  const voidAgain = await m.client.request<ErrorBody>('POST', `/v1/payments/${id}/void`, {
    body: {},
  })
  assert.equal(voidAgain.status, 409)
  assert.equal(voidAgain.body.code, 'SVC-STATE-3401')
  await assertBooksClean(h)
})

test('refunds of captured money while partially captured, between captures; books exact', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  // A = 10,001, K = 274 (249 bps + 25): odd cuts, so every rounding is exercised.
  const id = (await authorize(m.client, 10_001)).paymentId
  const first = await capture(m.client, id, { amount: 3_333, final: false })
  assert.equal(first.body.refundableAmount, 3_333)
  const tooMuch = await m.client.request<ErrorBody>('POST', `/v1/payments/${id}/refund`, {
    body: { amount: 3_334 },
  })
  assert.equal(tooMuch.status, 400, 'the uncaptured remainder is not refundable')
  assert.equal(tooMuch.body.code, 'SVC-VAL-3001')
  const early = await m.client.request<{ status: string; refundableAmount: number }>(
    'POST',
    `/v1/payments/${id}/refund`,
    { body: { amount: 1_001 } },
  )
  assert.equal(early.status, 200, JSON.stringify(early.body))
  assert.equal(early.body.status, 'partially_captured')
  assert.equal(early.body.refundableAmount, 2_332)

  // More captures after the refund, then refunds of everything captured.
  assert.equal((await capture(m.client, id, { amount: 3_333, final: false })).status, 200)
  const last = await capture(m.client, id, { amount: 2_000, final: true })
  assert.equal(last.body.status, 'captured')
  assert.equal(last.body.capturedAmount, 8_666)
  assert.equal(last.body.refundableAmount, 8_666 - 1_001)
  const chargeback = await m.client.request<ErrorBody>(
    'POST',
    `/v1/sandbox/payments/${id}/chargebacks`,
    { body: { amount: 7_666 } },
  )
  assert.equal(chargeback.status, 400, JSON.stringify(chargeback.body))
  const part = await m.client.request<{ refundableAmount: number }>(
    'POST',
    `/v1/payments/${id}/refund`,
    { body: { amount: 2_222 } },
  )
  assert.equal(part.body.refundableAmount, 8_666 - 1_001 - 2_222)
  const rest = await m.client.request<{ status: string; refundableAmount: number }>(
    'POST',
    `/v1/payments/${id}/refund`,
    { body: {} },
  )
  assert.equal(rest.status, 200)
  assert.equal(rest.body.status, 'refunded')
  assert.equal(rest.body.refundableAmount, 0)
  // The whole commission charged on the 8,666 came back: the platform holds nothing of it,
  // the merchant's reserve and available net to zero.
  const net = await sql<{ account_type: string; net: string }>`
    select account_type, sum(case when direction = 'CREDIT' then amount else -amount end) as net
      from ledger_legs where payment_id = ${id} group by account_type`.execute(h.deps.db)
  for (const row of net.rows) assert.equal(Number(row.net), 0, row.account_type)
  await assertBooksClean(h)
})

test('a partially captured payment refunded in full becomes refunded when the rest is released', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const id = (await authorize(m.client, 10_000)).paymentId
  assert.equal((await capture(m.client, id, { amount: 4_000, final: false })).status, 200)
  const refund = await m.client.request<{ status: string; refundableAmount: number }>(
    'POST',
    `/v1/payments/${id}/refund`,
    { body: {} },
  )
  assert.equal(refund.status, 200)
  assert.equal(refund.body.status, 'partially_captured', 'more may still be captured')
  assert.equal(refund.body.refundableAmount, 0)
  const voided = await m.client.request<{ status: string; capturedAmount: number }>(
    'POST',
    `/v1/payments/${id}/void`,
    { body: {} },
  )
  assert.equal(voided.status, 200)
  assert.equal(voided.body.status, 'refunded')
  assert.equal(voided.body.capturedAmount, 4_000)
  const types = (await eventsForResource(h.deps.db, m.merchantId, id)).map((e) => e.type)
  assert.ok(types.includes('payment.remainder_released'))
  assert.equal(types.at(-1), 'payment.refunded')
  await assertBooksClean(h)
})

test('a partial capture whose request died after the bank captured is finished as it was', async (t) => {
  // The request claimed the payment, recorded its pending capture, the bank captured, and
  // the process died before the outcome was written (a state written by hand on purpose;
  // its commission is the pro rata one: 274 · 2500 / 10000 = 68.5 → 69).
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const id = (await authorize(m.client, 10_000)).paymentId
  const { reference } = await h.deps.db
    .selectFrom('payments')
    .select('acquirer_reference as reference')
    .where('id', '=', id)
    .executeTakeFirstOrThrow()
  const captureId = 'cap_diedaftertheb0nkcapturd'
  await sql`insert into captures
      (id, merchant_id, payment_id, amount, commission, final, status, created_at)
    values (${captureId}, ${m.merchantId}, ${id}, 2500, 69, false, 'pending', now())`.execute(
    h.deps.db,
  )
  await sandboxBank.capture(h.deps, {
    paymentId: id,
    reference: reference ?? '',
    captureId,
    amount: 2_500,
    final: false,
  })
  await sql`update payments set action_in_flight = 'capture',
    updated_at = now() - interval '2 minutes' where id = ${id}`.execute(h.deps.db)

  const ran = await m.client.request<{ ran: Record<string, number> }>(
    'POST',
    '/v1/sandbox/reconcile',
    { body: {} },
  )
  assert.equal(ran.body.ran['payments.finish_stale_actions'], 1)
  const got = await m.client.request<CaptureBody>('GET', `/v1/payments/${id}`)
  assert.equal(got.body.status, 'partially_captured')
  assert.equal(got.body.capturedAmount, 2_500)
  assert.deepEqual(
    got.body.captures.map((c) => c.id),
    [captureId],
  )
  // The next capture is checked against what the dead one took.
  const over = await capture(m.client, id, { amount: 7_501 })
  assert.equal(over.status, 400)
  const rest = await capture(m.client, id, { amount: 7_500 })
  assert.equal(rest.body.status, 'captured')
  await assertBooksClean(h)
})
