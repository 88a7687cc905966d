// Goal: chargebacks received → accepted | reversed, their ledger legs for a plain and a
// 3-way split payment, the over-amount rule and tenancy (concurrent resolutions:
// races.pg.test.ts).
// Method: signed HTTP (the sandbox helper plays the bank) against the real app.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { eventsForResource } from '../../src/modules/events/index.ts'
import { legsForPayment, type LegView } from '../../src/modules/ledger/index.ts'
import { apportion } from '../../src/platform/money.ts'
import { startTestApp, type TestApp, type TestMerchant } from '../helpers/app.ts'
import { CARDS, charge } from '../helpers/payments.ts'
import { raise, type Cb } from './_support.ts'

function balance(legs: LegView[]) {
  const d = legs.filter((l) => l.direction === 'DEBIT').reduce((s, l) => s + l.amount, 0)
  const c = legs.filter((l) => l.direction === 'CREDIT').reduce((s, l) => s + l.amount, 0)
  return { d, c }
}

async function submerchant(h: TestApp, m: TestMerchant, name: string) {
  const res = await h.operator<{ submerchantId: string }>(
    'POST',
    `/operator/v1/merchants/${m.merchantId}/submerchants`,
    { name, iban: 'TR330006100519786457841326', holderName: `${name} Ltd` },
  )
  return res.body.submerchantId
}

test('received posts the reversal, accept is bookkeeping only and terminal', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const { res } = await charge(m.client, CARDS.frictionless, 10_000)
  const id = res.body.paymentId
  const before = await legsForPayment(h.deps.db, m.merchantId, id)
  const cb = await raise(m, id, { amount: 4_000, reasonCode: '4853' })
  assert.equal(cb.status, 201, JSON.stringify(cb.body))
  assert.match(cb.body.id, /^cbk_/)
  assert.equal(cb.body.status, 'received')
  assert.equal(cb.body.amount, 4_000)
  assert.equal(cb.body.reasonCode, '4853')
  assert.ok(cb.body.bankChargebackId)
  assert.equal(cb.body.resolvedAt, null)

  const after = await legsForPayment(h.deps.db, m.merchantId, id)
  const added = after.slice(before.length)
  assert.deepEqual(balance(added), { d: 4_000, c: 4_000 })
  assert.ok(
    added.some(
      (l) => l.accountType === 'buyer_pending' && l.direction === 'CREDIT' && l.amount === 4_000,
    ),
  )
  assert.ok(added.filter((l) => l.direction === 'DEBIT').every((l) => l.ownerId === m.merchantId))

  const payment = await m.client.request<{ status: string; refundableAmount: number }>(
    'GET',
    `/v1/payments/${id}`,
  )
  assert.equal(payment.body.status, 'captured')
  assert.equal(payment.body.refundableAmount, 6_000)

  const accept = await m.client.request<Record<string, unknown>>(
    'POST',
    `/v1/payments/${id}/chargebacks/${cb.body.id}/accept`,
    { body: {} },
  )
  assert.equal(accept.status, 200)
  assert.equal(accept.body['chargebackId'], cb.body.id)
  assert.equal(accept.body['status'], 'accepted')
  assert.match(String(accept.body['resolvedAt']), /Z$/)
  assert.equal((await legsForPayment(h.deps.db, m.merchantId, id)).length, after.length)
  for (const action of ['accept', 'reverse']) {
    const again = await m.client.request<{ code: string }>(
      'POST',
      `/v1/payments/${id}/chargebacks/${cb.body.id}/${action}`,
      { body: {} },
    )
    assert.equal(again.status, 409, action)
    assert.equal(again.body.code, 'SVC-STATE-3401')
  }
  const list = await m.client.request<{ items: Cb[] }>('GET', `/v1/payments/${id}/chargebacks`)
  assert.deepEqual(
    list.body.items.map((c) => [c.id, c.status]),
    [[cb.body.id, 'accepted']],
  )
  const types = (await eventsForResource(h.deps.db, m.merchantId, cb.body.id)).map((e) => e.type)
  assert.deepEqual(types, ['chargeback.received', 'chargeback.accepted'])
})

test('a 3-way split: exact largest-remainder shares, and reverse mirrors them', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const s1 = await submerchant(h, m, 'Bir')
  const s2 = await submerchant(h, m, 'Iki')
  const { res } = await charge(
    m.client,
    CARDS.frictionless,
    10_000,
    {},
    {
      splits: [
        { submerchantId: s1, amountMinor: 3_000 },
        { submerchantId: s2, amountMinor: 2_000 },
      ],
    },
  )
  const id = res.body.paymentId
  const before = await legsForPayment(h.deps.db, m.merchantId, id)
  const cb = await raise(m, id, { amount: 3_333 })
  assert.equal(cb.status, 201)
  const afterReceive = await legsForPayment(h.deps.db, m.merchantId, id)
  const received = afterReceive.slice(before.length)
  assert.deepEqual(balance(received), { d: 3_333, c: 3_333 })
  const [parent, one, two] = apportion(3_333, [5_000, 3_000, 2_000])
  const debitOf = (owner: string) =>
    received
      .filter((l) => l.direction === 'DEBIT' && l.ownerId === owner)
      .reduce((s, l) => s + l.amount, 0)
  assert.equal(debitOf(m.merchantId), parent)
  assert.equal(debitOf(s1), one)
  assert.equal(debitOf(s2), two)

  const rev = await m.client.request<{ status: string }>(
    'POST',
    `/v1/payments/${id}/chargebacks/${cb.body.id}/reverse`,
    { body: {} },
  )
  assert.equal(rev.status, 200)
  assert.equal(rev.body.status, 'reversed')
  const afterReverse = await legsForPayment(h.deps.db, m.merchantId, id)
  // Legs come ordered by entry: the newest entry's legs are last.
  const mirror = afterReverse.slice(afterReverse.length - received.length)
  assert.equal(mirror.length, received.length)
  for (const leg of received) {
    assert.ok(
      mirror.some(
        (l) =>
          l.accountType === leg.accountType &&
          l.ownerId === leg.ownerId &&
          l.amount === leg.amount &&
          l.direction !== leg.direction,
      ),
      `mirror of ${JSON.stringify(leg)}`,
    )
  }
  const payment = await m.client.request<{ refundableAmount: number }>('GET', `/v1/payments/${id}`)
  assert.equal(payment.body.refundableAmount, 10_000)
  const types = (await eventsForResource(h.deps.db, m.merchantId, cb.body.id)).map((e) => e.type)
  assert.deepEqual(types, ['chargeback.received', 'chargeback.reversed'])
})

test('a chargeback may not exceed captured less refunds and standing chargebacks', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const { res } = await charge(m.client, CARDS.frictionless, 10_000)
  const id = res.body.paymentId
  const refund = await m.client.request('POST', `/v1/payments/${id}/refund`, {
    body: { amount: 2_500 },
  })
  assert.equal(refund.status, 200)
  const over = await raise(m, id, { amount: 7_501 })
  assert.equal(over.status, 400)
  assert.equal(over.body.code, 'SVC-VAL-3001')
  const first = await raise(m, id, { amount: 5_000 })
  assert.equal(first.status, 201)
  const second = await raise(m, id, { amount: 2_501 })
  assert.equal(second.status, 400)
  const rest = await raise(m, id)
  assert.equal(rest.status, 201)
  assert.equal(rest.body.amount, 2_500)
  const none = await raise(m, id, { amount: 1 })
  assert.equal(none.status, 400)
  const noRefund = await m.client.request<{ code: string }>('POST', `/v1/payments/${id}/refund`, {
    body: { amount: 1 },
  })
  assert.equal(noRefund.status, 409)

  const auth = await charge(m.client, CARDS.frictionless, 5_000, { capture: false })
  const uncaptured = await raise(m, auth.res.body.paymentId)
  assert.equal(uncaptured.status, 409)
})

test("another merchant's chargebacks are 404", async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const other = await h.newMerchant()
  const { res } = await charge(m.client, CARDS.frictionless, 6_000)
  const id = res.body.paymentId
  const cb = await raise(m, id, { amount: 100 })
  const list = await other.client.request<{ code: string }>('GET', `/v1/payments/${id}/chargebacks`)
  assert.equal(list.status, 404)
  for (const action of ['accept', 'reverse']) {
    const r = await other.client.request<{ code: string }>(
      'POST',
      `/v1/payments/${id}/chargebacks/${cb.body.id}/${action}`,
      { body: {} },
    )
    assert.equal(r.status, 404, action)
    assert.equal(r.body.code, 'SVC-RES-3301')
  }
  const raiseForeign = await raise(other, id)
  assert.equal(raiseForeign.status, 404)
  const unknown = await m.client.request('POST', `/v1/payments/${id}/chargebacks/cbk_nope/accept`, {
    body: {},
  })
  assert.equal(unknown.status, 404)
})

test('transactions show chargebacksCount and the chargeback items', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const { res } = await charge(m.client, CARDS.frictionless, 6_000)
  const id = res.body.paymentId
  const cb = await raise(m, id, { amount: 1_000, reasonCode: '4855' })
  const list = await m.client.request<{ items: { id: string; chargebacksCount: number }[] }>(
    'GET',
    '/v1/transactions',
  )
  assert.equal(list.body.items.find((i) => i.id === id)?.chargebacksCount, 1)
  const detail = await m.client.request<{
    chargebacksCount: number
    chargebacks: { chargebackId: string; amount: number; status: string; reasonCode: string }[]
  }>('GET', `/v1/transactions/${id}`)
  assert.equal(detail.status, 200)
  assert.equal(detail.body.chargebacksCount, 1)
  assert.deepEqual(
    detail.body.chargebacks.map((c) => [c.chargebackId, c.amount, c.status, c.reasonCode]),
    [[cb.body.id, 1_000, 'received', '4855']],
  )
})
