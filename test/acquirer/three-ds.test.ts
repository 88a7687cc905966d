// Goal: 3-D Secure per test card (frictionless, OTP challenge, always-failing challenge) and a
// pares that verifies only when genuine, unexpired and bound to its payment and challenge.
// Method: cards tokenized over HTTP; start3ds/completeChallenge/verifyPares via h.deps; forged
// JWS made with jose under a wrong key, with alg none, and by editing a genuine one.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { SignJWT, UnsecuredJWT, decodeJwt } from 'jose'
import { sandboxBank } from '../../src/modules/acquirer/index.ts'
import { AppError } from '../../src/platform/errors.ts'
import { newId } from '../../src/platform/ids.ts'
import { startTestApp, type TestApp, type TestMerchant } from '../helpers/app.ts'
import { CARDS, tokenize } from '../vault/_cards.ts'

const acquirer = sandboxBank

const is3dsError = (e: unknown) =>
  e instanceof AppError && e.code === 'SVC-3DS-3601' && e.status === 400

async function challenge(h: TestApp, m: TestMerchant, number: string) {
  const cardToken = await tokenize(h, m, number)
  const paymentId = newId('pay')
  const start = await acquirer.start3ds(h.deps, {
    paymentId,
    merchantId: m.merchantId,
    cardToken,
    amount: 25_000,
  })
  assert.equal(start.kind, 'challenge')
  const correlationId = start.kind === 'challenge' ? start.correlationId : ''
  return { cardToken, paymentId, correlationId }
}

function complete(
  h: TestApp,
  m: TestMerchant,
  c: { paymentId: string; correlationId: string },
  otp: string,
) {
  return acquirer.completeChallenge(h.deps, { ...c, merchantId: m.merchantId, otp })
}

test('frictionless cards need no challenge; start3ds is idempotent per payment', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  for (const card of [CARDS.frictionless, CARDS.debit, CARDS.troy, CARDS.declined, CARDS.other]) {
    const cardToken = await tokenize(h, m, card.number)
    const p = { paymentId: newId('pay'), merchantId: m.merchantId, cardToken, amount: 100 }
    assert.deepEqual(await acquirer.start3ds(h.deps, p), { kind: 'frictionless' }, card.number)
  }
  const c = await challenge(h, m, CARDS.challenge.number)
  const again = await acquirer.start3ds(h.deps, {
    paymentId: c.paymentId,
    merchantId: m.merchantId,
    cardToken: c.cardToken,
    amount: 25_000,
  })
  assert.deepEqual(again, { kind: 'challenge', correlationId: c.correlationId })
  // A challenge cannot be completed for a frictionless payment.
  const token = await tokenize(h, m, CARDS.frictionless.number)
  const paymentId = newId('pay')
  await acquirer.start3ds(h.deps, {
    paymentId,
    merchantId: m.merchantId,
    cardToken: token,
    amount: 100,
  })
  await assert.rejects(
    complete(h, m, { paymentId, correlationId: c.correlationId }, '123456'),
    is3dsError,
  )
})

test('5528…0008: OTP 123456 authenticates, any other OTP does not', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const c = await challenge(h, m, CARDS.challenge.number)

  const wrong = await complete(h, m, c, '654321')
  assert.equal(wrong.correlationId, c.correlationId)
  assert.equal(decodeJwt(wrong.pares)['result'], 'N')
  assert.deepEqual(await acquirer.verifyPares(h.deps, { ...c, pares: wrong.pares }), {
    authenticated: false,
  })

  const right = await complete(h, m, c, '123456')
  const claims = decodeJwt(right.pares)
  assert.equal(claims['paymentId'], c.paymentId)
  assert.equal(claims['correlationId'], c.correlationId)
  assert.equal(claims['result'], 'Y')
  assert.deepEqual(await acquirer.verifyPares(h.deps, { ...c, pares: right.pares }), {
    authenticated: true,
  })
  // Verification is repeatable (the 3ds-callback is idempotent).
  assert.deepEqual(await acquirer.verifyPares(h.deps, { ...c, pares: right.pares }), {
    authenticated: true,
  })
  // The card still authorizes after the challenge.
  const result = await acquirer.authorize(h.deps, {
    paymentId: c.paymentId,
    merchantId: m.merchantId,
    cardToken: c.cardToken,
    amount: 25_000,
    installmentCount: 9,
    capture: true,
  })
  assert.equal(result.status, 'approved')
})

test('4000…3063: the challenge always fails, even with OTP 123456', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const c = await challenge(h, m, CARDS.challengeFails.number)
  const done = await complete(h, m, c, '123456')
  assert.equal(decodeJwt(done.pares)['result'], 'N')
  assert.deepEqual(await acquirer.verifyPares(h.deps, { ...c, pares: done.pares }), {
    authenticated: false,
  })
})

test('forged, edited, mismatched and expired pares are 400 SVC-3DS-3601', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const c = await challenge(h, m, CARDS.challenge.number)
  const other = await challenge(h, m, CARDS.challenge.number)
  const { pares } = await complete(h, m, c, '123456')
  const otherPares = (await complete(h, m, other, '123456')).pares

  const now = Math.floor(h.clock.now().getTime() / 1000)
  const claims = { paymentId: c.paymentId, correlationId: c.correlationId, result: 'Y' }
  const wrongKey = await new SignJWT(claims)
    .setProtectedHeader({ alg: 'HS256' })
    .setIssuer('kurus-acs')
    .setIssuedAt(now)
    .setExpirationTime(now + 600)
    .sign(new Uint8Array(32).fill(9))
  const unsigned = new UnsecuredJWT(claims).setIssuer('kurus-acs').setIssuedAt(now).encode()
  const [header, , signature] = pares.split('.')
  const editedPayload = Buffer.from(
    JSON.stringify({ ...decodeJwt(pares), result: 'Y', paymentId: other.paymentId }),
  ).toString('base64url')
  const edited = `${header}.${editedPayload}.${signature}`

  for (const [name, bad] of [
    ['wrong key', wrongKey],
    ['alg none', unsigned],
    ['edited payload', edited],
    ['garbage', 'not-a-jws'],
    ['empty', ''],
    ['truncated signature', pares.slice(0, -3)],
  ] as const) {
    await assert.rejects(acquirer.verifyPares(h.deps, { ...c, pares: bad }), is3dsError, name)
  }
  // A genuine pares of another payment, or sent with the other challenge's ids.
  await assert.rejects(acquirer.verifyPares(h.deps, { ...c, pares: otherPares }), is3dsError)
  await assert.rejects(
    acquirer.verifyPares(h.deps, {
      paymentId: other.paymentId,
      correlationId: c.correlationId,
      pares,
    }),
    is3dsError,
  )
  await assert.rejects(
    acquirer.verifyPares(h.deps, {
      paymentId: c.paymentId,
      correlationId: other.correlationId,
      pares,
    }),
    is3dsError,
  )
  // Completing a challenge with ids that do not belong together.
  await assert.rejects(
    complete(h, m, { paymentId: other.paymentId, correlationId: c.correlationId }, '123456'),
    is3dsError,
  )
  await assert.rejects(
    complete(h, m, { paymentId: c.paymentId, correlationId: newId('pay') }, '123456'),
    is3dsError,
  )
  const stranger = await h.newMerchant()
  await assert.rejects(complete(h, stranger, c, '123456'), is3dsError)

  // Still good now; 16 minutes later it has expired.
  assert.deepEqual(await acquirer.verifyPares(h.deps, { ...c, pares }), { authenticated: true })
  h.clock.advance(16 * 60_000)
  await assert.rejects(acquirer.verifyPares(h.deps, { ...c, pares }), is3dsError)
})
