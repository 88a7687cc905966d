// Goal: POST /v1/cards/tokens stores every CONTRACT test card with the right brand, type, bin
// and last4, and refuses every invalid card with a 400 envelope naming the field.
// Method: real app over HTTP on this file's own database; service calls through h.deps.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { transact } from '../../src/platform/db/transaction.ts'
import { AppError } from '../../src/platform/errors.ts'
import { bindCardToCustomer, getCardToken, revokeCardToken } from '../../src/modules/vault/index.ts'
import { startTestApp } from '../helpers/app.ts'
import { ALL_CARDS, cardBody, tokenize, withLuhn } from './_cards.ts'

interface ErrorBody {
  code: string
  message: string
  requestId: string
  details?: { field: string; reason: string }[]
}

const isAppError = (code: string, status: number) => (e: unknown) =>
  e instanceof AppError && e.code === code && e.status === status

test('every test card tokenizes with its brand, type, bin and last4', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  for (const card of ALL_CARDS) {
    const res = await m.client.request<Record<string, unknown>>('POST', '/v1/cards/tokens', {
      body: cardBody(h, card.number),
    })
    assert.equal(res.status, 201, card.number)
    const expYear = h.clock.now().getUTCFullYear() + 3
    assert.match(String(res.body['cardToken']), /^tok_[0-9a-z]{24}$/)
    // The card's fingerprint (docs/risk.md): a keyed hash, 32 bytes in base64url.
    const fingerprint = (res.body['card'] as { fingerprint?: string } | undefined)?.fingerprint
    assert.match(String(fingerprint), /^[A-Za-z0-9_-]{43}$/)
    assert.deepEqual(res.body, {
      cardToken: res.body['cardToken'],
      card: { fingerprint },
      last4: card.number.slice(-4),
      bin: card.number.slice(0, 6),
      brand: card.brand,
      cardType: card.cardType,
      expMonth: 12,
      expYear,
    })
    const info = await getCardToken(h.deps, m.merchantId, String(res.body['cardToken']))
    assert.equal(info.status, 'active')
    assert.equal(info.merchantId, m.merchantId)
    assert.equal(info.holderName, 'Ayşe Yılmaz')
    assert.equal(info.customerId, null)
    assert.ok(info.createdAt instanceof Date)
  }
})

test('brand by prefix for other cards; spaces in the number are accepted; amex needs 4 CVC digits', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const cases: [string, Record<string, unknown>, string][] = [
    ['4155 6501 0041 6111', {}, 'visa'],
    ['5105105105105100', {}, 'mastercard'],
    ['2221000000000009', {}, 'mastercard'],
    ['378282246310005', { cvc: '1234' }, 'amex'],
    ['6011111111111117', {}, 'unknown'],
    [withLuhn('97920000000'), {}, 'troy'],
    [withLuhn('4'.padEnd(18, '0')), {}, 'visa'],
  ]
  for (const [number, extra, brand] of cases) {
    const res = await m.client.request<{ brand: string; cardType: string; last4: string }>(
      'POST',
      '/v1/cards/tokens',
      { body: cardBody(h, number, extra) },
    )
    assert.equal(res.status, 201, `${number}: ${JSON.stringify(res.body)}`)
    assert.equal(res.body.brand, brand, number)
    assert.equal(res.body.cardType, 'credit')
  }
})

test('invalid cards are 400 SVC-VAL-3001 with the field in details', async (t) => {
  const h = await startTestApp(t)
  // A fixed "now" so the expiry edges are exact: 15 June 2030.
  h.clock.set(new Date('2030-06-15T12:00:00Z'))
  const m = await h.newMerchant()
  const ok = '4155650100416111'
  const cases: [string, Record<string, unknown>, string, RegExp?][] = [
    ['Luhn failure', { cardNumber: '4155650100416112' }, 'cardNumber', /Luhn/],
    ['11 digits', { cardNumber: withLuhn('4155650100') }, 'cardNumber', /12 to 19/],
    ['20 digits', { cardNumber: withLuhn('4'.padEnd(19, '0')) }, 'cardNumber', /12 to 19/],
    ['letters', { cardNumber: '4155abcd00416111' }, 'cardNumber', /digits/],
    ['empty number', { cardNumber: '' }, 'cardNumber'],
    ['past year', { expYear: 2029 }, 'expYear', /expired/],
    ['past month', { expYear: 2030, expMonth: 5 }, 'expMonth', /expired/],
    ['month 13', { expMonth: 13 }, 'expMonth'],
    ['month 0', { expMonth: 0 }, 'expMonth'],
    ['two-digit year', { expYear: 31 }, 'expYear'],
    ['year far ahead', { expYear: 2060 }, 'expYear'],
    ['CVC 2 digits', { cvc: '12' }, 'cvc', /3 digits/],
    ['CVC 4 digits on visa', { cvc: '1234' }, 'cvc', /3 digits/],
    ['CVC letters', { cvc: 'abc' }, 'cvc'],
    ['amex CVC 3 digits', { cardNumber: '378282246310005', cvc: '123' }, 'cvc', /4 digits/],
    ['blank holder', { holderName: '   ' }, 'holderName'],
    ['unknown field', { saveCard: true }, 'saveCard', /unknown field/],
    ['number as a number', { cardNumber: 4155650100416111 }, 'cardNumber'],
    ['month as a string', { expMonth: '12' }, 'expMonth'],
    ['year as a float', { expYear: 2031.5 }, 'expYear'],
    ['cvc as a number', { cvc: 123 }, 'cvc'],
    ['holder as null', { holderName: null }, 'holderName'],
  ]
  for (const [name, change, field, reason] of cases) {
    const res = await m.client.request<ErrorBody>('POST', '/v1/cards/tokens', {
      body: cardBody(h, ok, change),
    })
    assert.equal(res.status, 400, `${name}: ${JSON.stringify(res.body)}`)
    assert.equal(res.body.code, 'SVC-VAL-3001', name)
    assert.equal(typeof res.body.requestId, 'string')
    const detail = res.body.details?.find((d) => d.field === field)
    assert.ok(detail, `${name}: details ${JSON.stringify(res.body.details)} lack ${field}`)
    if (reason) assert.match(detail.reason, reason, name)
    assert.ok(!JSON.stringify(res.body).includes('415565010041611'), `${name}: echoes the number`)
  }

  for (const missing of ['cardNumber', 'expMonth', 'expYear', 'cvc', 'holderName']) {
    const body = Object.fromEntries(Object.entries(cardBody(h, ok)).filter(([k]) => k !== missing))
    const res = await m.client.request<ErrorBody>('POST', '/v1/cards/tokens', { body })
    assert.equal(res.status, 400)
    assert.deepEqual(res.body.details, [{ field: missing, reason: 'is required' }])
  }

  // The month the card expires in is still valid.
  const edge = await m.client.request('POST', '/v1/cards/tokens', {
    body: cardBody(h, ok, { expYear: 2030, expMonth: 6 }),
  })
  assert.equal(edge.status, 201)
})

test('several bad fields are all reported at once', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const res = await m.client.request<ErrorBody>('POST', '/v1/cards/tokens', {
    body: cardBody(h, '4155650100416112', { cvc: '1', expYear: 2001 }),
  })
  assert.equal(res.status, 400)
  assert.deepEqual(res.body.details?.map((d) => d.field).sort(), ['cardNumber', 'cvc', 'expYear'])
})

test('a token is its merchant’s: another merchant gets 404 SVC-RES-3301', async (t) => {
  const h = await startTestApp(t)
  const a = await h.newMerchant()
  const b = await h.newMerchant()
  const token = await tokenize(h, a, '4155650100416111')
  await assert.rejects(getCardToken(h.deps, b.merchantId, token), isAppError('SVC-RES-3301', 404))
  await assert.rejects(
    getCardToken(h.deps, a.merchantId, 'tok_doesnotexist'),
    isAppError('SVC-RES-3301', 404),
  )
  assert.equal((await getCardToken(h.deps, a.merchantId, token)).cardToken, token)
})

test('submerchant keys may not tokenize (403 SVC-AUTH-3201)', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const sub = await h.operator<{ publicKey: string; secretKey: string }>(
    'POST',
    `/operator/v1/merchants/${m.merchantId}/submerchants`,
    { name: 'Sub', iban: 'TR330006100519786457841326', holderName: 'Sub Ltd' },
  )
  assert.equal(sub.status, 201)
  const res = await h.clientFor(sub.body).request<ErrorBody>('POST', '/v1/cards/tokens', {
    body: cardBody(h, '4155650100416111'),
  })
  assert.equal(res.status, 403)
  assert.equal(res.body.code, 'SVC-AUTH-3201')
})

test('binding to a customer and revoking', async (t) => {
  const h = await startTestApp(t)
  const a = await h.newMerchant()
  const b = await h.newMerchant()
  const token = await tokenize(h, a, '4155650100416111')

  await transact(h.deps.db, (tx) => bindCardToCustomer(tx, a.merchantId, token, 'cus_one'))
  // Binding again to the same customer is a no-op.
  await transact(h.deps.db, (tx) => bindCardToCustomer(tx, a.merchantId, token, 'cus_one'))
  assert.equal((await getCardToken(h.deps, a.merchantId, token)).customerId, 'cus_one')
  await assert.rejects(
    transact(h.deps.db, (tx) => bindCardToCustomer(tx, a.merchantId, token, 'cus_two')),
    isAppError('SVC-RES-3302', 409),
  )
  await assert.rejects(
    transact(h.deps.db, (tx) => bindCardToCustomer(tx, b.merchantId, token, 'cus_one')),
    isAppError('SVC-RES-3301', 404),
  )

  await assert.rejects(
    transact(h.deps.db, (tx) => revokeCardToken(tx, b.merchantId, token)),
    isAppError('SVC-RES-3301', 404),
  )
  await transact(h.deps.db, (tx) => revokeCardToken(tx, a.merchantId, token))
  await transact(h.deps.db, (tx) => revokeCardToken(tx, a.merchantId, token))
  assert.equal((await getCardToken(h.deps, a.merchantId, token)).status, 'revoked')

  const fresh = await tokenize(h, a, '4155650100416111')
  await transact(h.deps.db, (tx) => revokeCardToken(tx, a.merchantId, fresh))
  await assert.rejects(
    transact(h.deps.db, (tx) => bindCardToCustomer(tx, a.merchantId, fresh, 'cus_one')),
    isAppError('SVC-STATE-3401', 409),
  )
})
