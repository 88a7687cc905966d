// Goal: each row of the spec's Payment state table: preauth, capture, void, 3DS, the
// acquirer timeout (the races — 20 captures, capture vs void, duplicate 3DS callbacks — are in
// races.pg.test.ts). Method: signed HTTP.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { sql } from 'kysely'
import { sandboxBank } from '../../src/modules/acquirer/index.ts'
import { eventsForResource } from '../../src/modules/events/index.ts'
import { legsForPayment } from '../../src/modules/ledger/index.ts'
import { startTestApp } from '../helpers/app.ts'
import { CARDS, charge } from '../helpers/payments.ts'

test('capture:false authorizes without legs; capture posts them once, idempotently', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const { res } = await charge(m.client, CARDS.frictionless, 8000, { capture: false })
  assert.equal(res.status, 201)
  assert.equal(res.body.status, 'authorized')
  const id = res.body.paymentId
  assert.equal((await legsForPayment(h.deps.db, m.merchantId, id)).length, 0)
  const cap = await m.client.request<Record<string, unknown>>(
    'POST',
    `/v1/payments/${id}/capture`,
    {
      body: {},
    },
  )
  assert.equal(cap.status, 200)
  assert.equal(cap.body['status'], 'captured')
  assert.equal(cap.body['refundableAmount'], 8000)
  assert.equal(cap.body['netAmount'], 8000 - Number(cap.body['commission']))
  const again = await m.client.request<Record<string, unknown>>(
    'POST',
    `/v1/payments/${id}/capture`,
  )
  assert.equal(again.status, 200)
  assert.equal(again.body['status'], 'captured')
  const legs = await legsForPayment(h.deps.db, m.merchantId, id)
  assert.equal(legs.filter((l) => l.accountType === 'buyer_pending').length, 1)
  const voidCaptured = await m.client.request<{ code: string }>('POST', `/v1/payments/${id}/void`, {
    body: {},
  })
  assert.equal(voidCaptured.status, 409)
  assert.equal(voidCaptured.body.code, 'SVC-STATE-3401')
  const types = (await eventsForResource(h.deps.db, m.merchantId, id)).map((e) => e.type)
  assert.deepEqual(types, ['payment.authorized', 'payment.captured'])
})

test('void with a reason, idempotent, no legs, and the event carries the reason', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const { res } = await charge(m.client, CARDS.frictionless, 8000, { capture: false })
  const id = res.body.paymentId
  const tooLong = await m.client.request<{ code: string }>('POST', `/v1/payments/${id}/void`, {
    body: { reason: 'x'.repeat(501) },
  })
  assert.equal(tooLong.status, 400)
  const voided = await m.client.request<Record<string, unknown>>(
    'POST',
    `/v1/payments/${id}/void`,
    {
      body: { reason: 'müşteri vazgeçti' },
    },
  )
  assert.equal(voided.status, 200)
  assert.deepEqual(voided.body, {
    id,
    status: 'voided',
    amount: 8000,
    currency: 'TRY',
    capturedAmount: 0,
  })
  const again = await m.client.request<Record<string, unknown>>('POST', `/v1/payments/${id}/void`, {
    body: {},
  })
  assert.equal(again.status, 200)
  assert.equal(again.body['status'], 'voided')
  assert.equal((await legsForPayment(h.deps.db, m.merchantId, id)).length, 0)
  const events = await eventsForResource(h.deps.db, m.merchantId, id)
  const voidEvent = events.find((e) => e.type === 'payment.voided')
  assert.equal(voidEvent?.data['reason'], 'müşteri vazgeçti')
  assert.deepEqual(
    events.map((e) => e.sequence),
    [1, 2],
  )
  const capture = await m.client.request<{ code: string }>('POST', `/v1/payments/${id}/capture`)
  assert.equal(capture.status, 409)
})

test('a capture that died after the bank captured is finished as a capture, never voided', async (t) => {
  // The request claimed the payment, the bank captured, and the process died before the
  // row was updated: the row says authorized with a capture claim a minute old.
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const died = async () => {
    const { res } = await charge(m.client, CARDS.frictionless, 5000, { capture: false })
    assert.equal(res.body.status, 'authorized')
    const id = res.body.paymentId
    const row = await sql<{ acquirer_reference: string }>`select acquirer_reference
      from payments where id = ${id}`.execute(h.deps.db)
    const reference = row.rows[0]?.acquirer_reference ?? ''
    // The full capture's id is derived from the payment's (cap_ + its random part).
    await sandboxBank.capture(h.deps, {
      paymentId: id,
      reference,
      captureId: `cap_${id.slice(4)}`,
      amount: 5000,
      final: true,
    })
    await sql`update payments set action_in_flight = 'capture',
      updated_at = now() - interval '2 minutes' where id = ${id}`.execute(h.deps.db)
    return id
  }

  // A void arriving after the claim went stale takes it over as the capture it was.
  const first = await died()
  const voided = await m.client.request<{ code: string }>('POST', `/v1/payments/${first}/void`, {
    body: {},
  })
  assert.equal(voided.status, 409, JSON.stringify(voided.body))
  assert.equal(voided.body.code, 'SVC-STATE-3401')
  const got = await m.client.request<{ status: string }>('GET', `/v1/payments/${first}`)
  assert.equal(got.body.status, 'captured')
  const legs = await legsForPayment(h.deps.db, m.merchantId, first)
  assert.equal(legs.filter((l) => l.accountType === 'buyer_pending').length, 1)
  const events = await eventsForResource(h.deps.db, m.merchantId, first)
  assert.equal(events.filter((e) => e.type === 'payment.captured').length, 1)
  assert.equal(events.filter((e) => e.type === 'payment.voided').length, 0)

  // With no request coming back, the reconciler finishes it.
  const second = await died()
  const ran = await m.client.request<{ ran: Record<string, number> }>(
    'POST',
    '/v1/sandbox/reconcile',
    { body: {} },
  )
  assert.equal(ran.status, 200)
  assert.equal(ran.body.ran['payments.finish_stale_actions'], 1)
  const after = await m.client.request<{ status: string }>('GET', `/v1/payments/${second}`)
  assert.equal(after.body.status, 'captured')
  assert.equal(
    (await eventsForResource(h.deps.db, m.merchantId, second)).filter(
      (e) => e.type === 'payment.captured',
    ).length,
    1,
  )
})

test('a wrong OTP, and the always-failing challenge card, end failed with 402', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  for (const [card, otp] of [
    [CARDS.challenge, '000000'],
    [CARDS.challengeFails, '123456'],
  ] as const) {
    const { res } = await charge(m.client, card, 6000)
    assert.equal(res.body.status, 'pending_3ds', card)
    const id = res.body.paymentId
    const solved = await m.client.request<{ pares: string; correlationId: string }>(
      'POST',
      `/v1/sandbox/payments/${id}/3ds-challenge`,
      { body: { otp } },
    )
    const cb = await m.client.request<Record<string, unknown>>(
      'POST',
      `/v1/payments/${id}/3ds-callback`,
      {
        body: solved.body,
      },
    )
    assert.equal(cb.status, 402, card)
    assert.equal(cb.body['code'], 'SVC-PAY-3501')
    assert.equal(cb.body['paymentId'], id)
    const got = await m.client.request<{ status: string }>('GET', `/v1/payments/${id}`)
    assert.equal(got.body.status, 'failed')
  }
})

test('an acquirer timeout answers 202 pending and a retry returns the same payment', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const { res, transactionId, cardToken } = await charge(m.client, CARDS.timeout, 5000)
  assert.equal(res.status, 202, JSON.stringify(res.body))
  assert.equal(res.body.status, 'pending')
  const retry = await m.client.request<{ paymentId: string; status: string }>(
    'POST',
    '/v1/payments/card',
    { body: { transactionId, amount: 5000, currency: 'TRY', cardToken } },
  )
  assert.equal(retry.status, 202)
  assert.equal(retry.body.paymentId, res.body.paymentId)
  assert.equal((await legsForPayment(h.deps.db, m.merchantId, res.body.paymentId)).length, 0)
})

test("another merchant's payment is a 404 everywhere", async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const other = await h.newMerchant()
  const { res } = await charge(m.client, CARDS.frictionless, 5000, { capture: false })
  const id = res.body.paymentId
  for (const [method, path] of [
    ['GET', `/v1/payments/${id}`],
    ['POST', `/v1/payments/${id}/capture`],
    ['POST', `/v1/payments/${id}/void`],
    ['POST', `/v1/payments/${id}/3ds-callback`],
  ] as const) {
    const r = await other.client.request<{ code: string }>(method, path, {
      ...(method === 'POST'
        ? { body: path.endsWith('callback') ? { pares: 'x', correlationId: 'y' } : {} }
        : {}),
    })
    assert.equal(r.status, 404, `${method} ${path}`)
    assert.equal(r.body.code, 'SVC-RES-3301')
  }
})
