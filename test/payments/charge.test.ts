// Goal: the card charge and every test card of CONTRACT.md, the transactionId fence, the
// payment retrieval and public status. Method: signed HTTP requests against the real app.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { eventsForResource } from '../../src/modules/events/index.ts'
import { legsForPayment } from '../../src/modules/ledger/index.ts'
import { startTestApp } from '../helpers/app.ts'
import { CARDS, charge, openSession, tokenize } from '../helpers/payments.ts'

/** CONTRACT default pricing: 249 bps + 100 per extra installment, half-up, + 25 kuruş. */
function expectedCommission(amount: number, installments = 1): number {
  const bps = 249 + 100 * (installments - 1)
  return Math.floor((amount * bps + 5000) / 10000) + 25
}

test('a frictionless card is captured with commission, mask and balanced legs', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const { res, transactionId } = await charge(m.client, CARDS.frictionless, 10_050)
  assert.equal(res.status, 201, JSON.stringify(res.body))
  const p = res.body
  assert.equal(p.status, 'captured')
  assert.equal(p.amount, 10_050)
  assert.equal(p.commission, expectedCommission(10_050))
  assert.equal(p.netAmount, 10_050 - p.commission)
  assert.equal(p['cardMask'], '415565******6111')
  assert.equal(p['cardBrand'], 'visa')
  assert.equal(p['cardType'], 'credit')
  assert.equal(p['transactionId'], transactionId)
  assert.ok(p.authCode)

  const got = await m.client.request<Record<string, unknown>>('GET', `/v1/payments/${p.paymentId}`)
  assert.equal(got.status, 200)
  assert.equal(got.body['id'], p.paymentId)
  assert.equal(got.body['merchantId'], m.merchantId)
  assert.equal(got.body['bin'], '415565')
  assert.equal(got.body['refundAmount'], 0)
  assert.equal(got.body['refundableAmount'], 10_050)
  assert.equal(got.body['installmentCount'], 1)
  assert.equal(got.body['threeDSecure'], true)
  assert.equal(JSON.stringify(got.body).includes(CARDS.frictionless), false)

  const legs = await legsForPayment(h.deps.db, m.merchantId, p.paymentId)
  const debit = legs.filter((l) => l.direction === 'DEBIT').reduce((s, l) => s + l.amount, 0)
  const credit = legs.filter((l) => l.direction === 'CREDIT').reduce((s, l) => s + l.amount, 0)
  assert.equal(debit, 10_050)
  assert.equal(credit, 10_050)
  assert.ok(legs.some((l) => l.accountType === 'platform_commission' && l.amount === p.commission))
  assert.ok(legs.some((l) => l.accountType === 'merchant_reserve' && l.amount === p.netAmount))
  const events = await eventsForResource(h.deps.db, m.merchantId, p.paymentId)
  assert.deepEqual(
    events.map((e) => e.type),
    ['payment.captured'],
  )
})

test('public status shows only the payment id and status', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const { res } = await charge(m.client, CARDS.frictionless, 5000)
  const pub = await fetch(`${h.url}/v1/payments/${res.body.paymentId}/public-status`)
  assert.equal(pub.status, 200)
  assert.deepEqual(await pub.json(), { paymentId: res.body.paymentId, status: 'captured' })
  const missing = await fetch(`${h.url}/v1/payments/pay_nope/public-status`)
  assert.equal(missing.status, 404)
  assert.equal(((await missing.json()) as { code: string }).code, 'SVC-RES-3301')
})

test('installments are checked against the card BIN and priced per count', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const twelve = await charge(m.client, CARDS.frictionless, 120_000, { installmentCount: 12 })
  assert.equal(twelve.res.status, 201)
  assert.equal(twelve.res.body.commission, expectedCommission(120_000, 12))
  const tooMany = await charge(m.client, CARDS.challenge, 120_000, {
    installmentCount: 10,
    threeDSecure: false,
  })
  assert.equal(tooMany.res.status, 400)
  assert.equal(tooMany.res.body['code'], 'SVC-VAL-3001')
  const debit = await charge(m.client, CARDS.debit, 5000, { installmentCount: 3 })
  assert.equal(debit.res.status, 400)
  const thirteen = await charge(m.client, CARDS.frictionless, 5000, { installmentCount: 13 })
  assert.equal(thirteen.res.status, 400)

  const quote = await m.client.request<{
    brand: string
    options: { installmentCount: number; commission: number; totalAmount: number }[]
  }>('GET', '/v1/installments', { query: { bin: '552879', amount: 10_000 } })
  assert.equal(quote.status, 200)
  assert.equal(quote.body.brand, 'mastercard')
  assert.deepEqual(
    quote.body.options.map((o) => o.installmentCount),
    [1, 2, 3, 4, 5, 6, 7, 8, 9],
  )
  assert.equal(quote.body.options[2]?.commission, expectedCommission(10_000, 3))
})

test('debit, troy and 3DS-off challenge cards are approved', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  for (const card of [CARDS.debit, CARDS.troy]) {
    const { res } = await charge(m.client, card, 2500)
    assert.equal(res.status, 201, card)
    assert.equal(res.body.status, 'captured', card)
  }
  const noChallenge = await charge(m.client, CARDS.challenge, 2500, { threeDSecure: false })
  assert.equal(noChallenge.res.status, 201)
  assert.equal(noChallenge.res.body.status, 'captured')
  assert.equal(noChallenge.res.body['threeDSecure'], false)
})

test('declines are 402 with the stored failed payment, and a new attempt may follow', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  for (const [card, code] of [
    [CARDS.declined, 'card_declined'],
    [CARDS.insufficientFunds, 'insufficient_funds'],
  ] as const) {
    const { res, transactionId } = await charge(m.client, card, 3000)
    assert.equal(res.status, 402, JSON.stringify(res.body))
    assert.equal(res.body['code'], 'SVC-PAY-3501')
    assert.equal(res.body['declineCode'], code)
    const failedId = res.body.paymentId
    const stored = await m.client.request<{ status: string; declineCode: string }>(
      'GET',
      `/v1/payments/${failedId}`,
    )
    assert.equal(stored.body.status, 'failed')
    assert.equal(stored.body.declineCode, code)
    // The session allows another attempt, with any card.
    const good = await tokenize(m.client, CARDS.frictionless)
    const retry = await m.client.request<{ paymentId: string; status: string }>(
      'POST',
      '/v1/payments/card',
      { body: { transactionId, amount: 3000, currency: 'TRY', cardToken: good } },
    )
    assert.equal(retry.status, 201)
    assert.equal(retry.body.status, 'captured')
    assert.notEqual(retry.body.paymentId, failedId)
    const events = await eventsForResource(h.deps.db, m.merchantId, failedId)
    assert.deepEqual(
      events.map((e) => e.type),
      ['payment.failed'],
    )
  }
})

test('a session refuses a sixth failed attempt', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const { transactionId } = await openSession(m.client, 1000)
  const bad = await tokenize(m.client, CARDS.declined)
  for (let i = 0; i < 5; i++) {
    const res = await m.client.request('POST', '/v1/payments/card', {
      body: { transactionId, amount: 1000, currency: 'TRY', cardToken: bad },
    })
    assert.equal(res.status, 402)
  }
  const sixth = await m.client.request<{ code: string }>('POST', '/v1/payments/card', {
    body: { transactionId, amount: 1000, currency: 'TRY', cardToken: bad },
  })
  assert.equal(sixth.status, 429)
  assert.equal(sixth.body.code, 'SVC-GW-1004')
})

test('the transactionId fences a charge with and without an Idempotency-Key', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const { transactionId } = await openSession(m.client, 4000)
  const cardToken = await tokenize(m.client, CARDS.frictionless)
  const body = { transactionId, amount: 4000, currency: 'TRY', cardToken }
  const key = crypto.randomUUID()
  const first = await m.client.request<{ paymentId: string }>('POST', '/v1/payments/card', {
    body,
    idempotencyKey: key,
  })
  assert.equal(first.status, 201)
  const replay = await m.client.request<{ paymentId: string }>('POST', '/v1/payments/card', {
    body,
    idempotencyKey: key,
  })
  assert.equal(replay.status, 201)
  assert.equal(replay.headers.get('idempotent-replayed'), 'true')
  assert.deepEqual(replay.body, first.body)
  const fenced = await m.client.request<{ paymentId: string }>('POST', '/v1/payments/card', {
    body,
  })
  assert.equal(fenced.status, 200)
  assert.equal(fenced.body.paymentId, first.body.paymentId)
  const otherKey = await m.client.request<{ paymentId: string }>('POST', '/v1/payments/card', {
    body,
    idempotencyKey: crypto.randomUUID(),
  })
  assert.equal(otherKey.status, 200)
  assert.equal(otherKey.body.paymentId, first.body.paymentId)
  const different = await m.client.request<{ code: string }>('POST', '/v1/payments/card', {
    body: { ...body, installmentCount: 2 },
  })
  assert.equal(different.status, 409)
  assert.equal(different.body.code, 'SVC-GW-2001')
  const legs = await legsForPayment(h.deps.db, m.merchantId, first.body.paymentId)
  assert.equal(legs.filter((l) => l.direction === 'DEBIT').length, 1)
})

test('charge preconditions: session, amount, token owner, expiry, KYC', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const other = await h.newMerchant()
  const cardToken = await tokenize(m.client, CARDS.frictionless)
  const noSession = await m.client.request<{ code: string }>('POST', '/v1/payments/card', {
    body: { transactionId: 'nope', amount: 1000, currency: 'TRY', cardToken },
  })
  assert.equal(noSession.status, 404)
  const { transactionId } = await openSession(m.client, 1000)
  const wrongAmount = await m.client.request<{ code: string }>('POST', '/v1/payments/card', {
    body: { transactionId, amount: 1001, currency: 'TRY', cardToken },
  })
  assert.equal(wrongAmount.status, 400)
  assert.equal(wrongAmount.body.code, 'SVC-VAL-3001')
  const foreignToken = await tokenize(other.client, CARDS.frictionless)
  const foreign = await m.client.request<{ code: string }>('POST', '/v1/payments/card', {
    body: { transactionId, amount: 1000, currency: 'TRY', cardToken: foreignToken },
  })
  assert.equal(foreign.status, 404)
  const rawPan = await m.client.request<{ code: string }>('POST', '/v1/payments/card', {
    body: { transactionId, amount: 1000, currency: 'TRY', cardNumber: CARDS.frictionless },
  })
  assert.equal(rawPan.status, 400)
  h.clock.advance(31 * 60_000)
  const expired = await m.client.request<{ code: string }>('POST', '/v1/payments/card', {
    body: { transactionId, amount: 1000, currency: 'TRY', cardToken },
  })
  assert.equal(expired.status, 409)
  assert.equal(expired.body.code, 'SVC-STATE-3401')
  h.clock.reset()
  await h.operator('PUT', `/operator/v1/merchants/${m.merchantId}/kyc`, { status: 'suspended' })
  const kyc = await m.client.request<{ code: string }>('POST', '/v1/payments/card', {
    body: { transactionId, amount: 1000, currency: 'TRY', cardToken },
  })
  assert.equal(kyc.status, 403)
  assert.equal(kyc.body.code, 'SVC-KYC-3101')
})

test('session metadata and splits flow into the payment and its ledger legs', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const sub = await h.operator<{ submerchantId: string }>(
    'POST',
    `/operator/v1/merchants/${m.merchantId}/submerchants`,
    { name: 'Sub', iban: 'TR330006100519786457841326', holderName: 'Sub Ltd' },
  )
  const { res } = await charge(
    m.client,
    CARDS.frictionless,
    10_000,
    {},
    {
      splits: [{ submerchantId: sub.body.submerchantId, amountMinor: 3_000 }],
      metadata: { orderNo: 'A-17' },
    },
  )
  assert.equal(res.status, 201)
  const got = await m.client.request<{ metadata: Record<string, string> }>(
    'GET',
    `/v1/payments/${res.body.paymentId}`,
  )
  assert.deepEqual(got.body.metadata, { orderNo: 'A-17' })
  const legs = await legsForPayment(h.deps.db, m.merchantId, res.body.paymentId)
  const reserve = legs.filter((l) => l.accountType === 'merchant_reserve')
  const subLeg = reserve.find((l) => l.ownerId === sub.body.submerchantId)
  const parentLeg = reserve.find((l) => l.ownerId === m.merchantId)
  assert.ok(subLeg && parentLeg)
  assert.equal(subLeg.amount + parentLeg.amount + res.body.commission, 10_000)
  // Commission 274 apportioned 30/70 by gross share: 82.2 → 82 to the sub, 192 to the parent.
  assert.equal(subLeg.amount, 3_000 - 82)
})

test("save-card attaches the card to the session's customer after capture, and only to it", async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const customer = await m.client.request<{ id: string }>('POST', '/v1/customers', {
    body: { externalId: `buyer-${crypto.randomUUID()}` },
  })
  const other = await m.client.request<{ id: string }>('POST', '/v1/customers', {
    body: { externalId: `other-${crypto.randomUUID()}` },
  })
  const saved = await charge(
    m.client,
    CARDS.frictionless,
    5_000,
    { saveCard: true },
    { customerId: customer.body.id },
  )
  assert.equal(saved.res.status, 201)
  const cards = await m.client.request<{ items: { cardToken: string }[] }>(
    'GET',
    `/v1/customers/${customer.body.id}/cards`,
  )
  assert.deepEqual(
    cards.body.items.map((c) => c.cardToken),
    [saved.cardToken],
  )
  // A customer other than the session's is not honoured.
  const notBound = await charge(
    m.client,
    CARDS.frictionless,
    5_000,
    { saveCard: true, customerId: other.body.id },
    { customerId: customer.body.id },
  )
  assert.equal(notBound.res.status, 201)
  const otherCards = await m.client.request<{ items: unknown[] }>(
    'GET',
    `/v1/customers/${other.body.id}/cards`,
  )
  assert.equal(otherCards.body.items.length, 0)
  // Authorized only: saved at capture, not before.
  const preauth = await charge(
    m.client,
    CARDS.debit,
    5_000,
    { saveCard: true, capture: false },
    { customerId: customer.body.id },
  )
  const before = await m.client.request<{ items: unknown[] }>(
    'GET',
    `/v1/customers/${customer.body.id}/cards`,
  )
  assert.equal(before.body.items.length, 1)
  await m.client.request('POST', `/v1/payments/${preauth.res.body.paymentId}/capture`, { body: {} })
  const after = await m.client.request<{ items: unknown[] }>(
    'GET',
    `/v1/customers/${customer.body.id}/cards`,
  )
  assert.equal(after.body.items.length, 2)
})
