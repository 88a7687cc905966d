// Goal: the acquirer authorizes, captures, voids and refunds each CONTRACT test card as the
// table says, once per paymentId / refundId however often it is called.
// Method: cards tokenized over HTTP, then sandboxBank called through h.deps; the bank's
// own table is counted to prove one operation per id.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { binInfo, sandboxBank, type AuthorizeResult } from '../../src/modules/acquirer/index.ts'
import { revokeCardToken } from '../../src/modules/vault/index.ts'
import { transact } from '../../src/platform/db/transaction.ts'
import { AppError } from '../../src/platform/errors.ts'
import { newId } from '../../src/platform/ids.ts'
import { startTestApp, type TestApp, type TestMerchant } from '../helpers/app.ts'
import { ALL_CARDS, CARDS, tokenize } from '../vault/_cards.ts'

const acquirer = sandboxBank

const isAppError = (code: string, status: number) => (e: unknown) =>
  e instanceof AppError && e.code === code && e.status === status

async function setup(t: Parameters<typeof startTestApp>[0]) {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  return { h, m }
}

function authorize(
  h: TestApp,
  m: TestMerchant,
  cardToken: string,
  over: { paymentId?: string; amount?: number; installmentCount?: number; capture?: boolean } = {},
) {
  return acquirer.authorize(h.deps, {
    paymentId: over.paymentId ?? newId('pay'),
    merchantId: m.merchantId,
    cardToken,
    amount: over.amount ?? 10_000,
    installmentCount: over.installmentCount ?? 1,
    capture: over.capture ?? true,
  })
}

async function bankOps(h: TestApp, paymentId: string, op?: string) {
  let q = h.deps.db
    .selectFrom('acquirer_sandbox_operations')
    .selectAll()
    .where('payment_id', '=', paymentId)
  if (op) q = q.where('op', '=', op as 'authorize')
  return q.execute()
}

function approved(r: AuthorizeResult): { authCode: string; reference: string } {
  if (r.status !== 'approved') assert.fail(`expected an approval, got ${JSON.stringify(r)}`)
  return r
}

const SANDBOX_ISSUER_BINS = ['415565', '552879', '400000', '589004', '979202']

test('the BIN table: test BINs and the prefix rules for unknown ones', () => {
  for (const card of ALL_CARDS) {
    const info = binInfo(card.number.slice(0, 6))
    assert.deepEqual(info, {
      bin: card.number.slice(0, 6),
      brand: card.brand,
      cardType: card.cardType,
      bank: 'Sandbox Bank',
      // The sandbox issuers are Turkish banks; other test BINs have no known issuer.
      country: SANDBOX_ISSUER_BINS.includes(card.number.slice(0, 6)) ? 'TR' : null,
      installments: card.installments,
    })
  }
  const unknown: [string, string][] = [
    ['411111', 'visa'],
    ['510000', 'mastercard'],
    ['559999', 'mastercard'],
    ['222100', 'mastercard'],
    ['272099', 'mastercard'],
    ['272100', 'unknown'],
    ['979200', 'troy'],
    ['340000', 'amex'],
    ['370000', 'amex'],
    ['601111', 'unknown'],
  ]
  for (const [bin, brand] of unknown) {
    assert.deepEqual(binInfo(bin), {
      bin,
      brand,
      cardType: 'credit',
      bank: 'Sandbox Bank',
      country: null,
      installments: [1],
    })
  }
})

test('approved cards, declines and installment limits', async (t) => {
  const { h, m } = await setup(t)
  for (const card of [
    CARDS.frictionless,
    CARDS.challenge,
    CARDS.challengeFails,
    CARDS.debit,
    CARDS.troy,
    CARDS.refundAsync,
    CARDS.refundFails,
    CARDS.other,
  ]) {
    const token = await tokenize(h, m, card.number)
    const max = Math.max(...card.installments)
    const result = approved(await authorize(h, m, token, { installmentCount: max }))
    assert.match(result.authCode, /^\d{6}$/)
    assert.match(result.reference, /^\d{12}$/)
    if (max < 12) {
      const over = await authorize(h, m, token, { installmentCount: max + 1 })
      assert.deepEqual(over, { status: 'declined', declineCode: 'installment_not_supported' })
    }
  }
  // Declines apply with or without 3-D Secure: no start3ds call here.
  const declined = await tokenize(h, m, CARDS.declined.number)
  assert.deepEqual(await authorize(h, m, declined), {
    status: 'declined',
    declineCode: 'card_declined',
  })
  const noFunds = await tokenize(h, m, CARDS.noFunds.number)
  assert.deepEqual(await authorize(h, m, noFunds, { installmentCount: 3 }), {
    status: 'declined',
    declineCode: 'insufficient_funds',
  })
  // A declined authorization is on the bank's books, with bin and last4 only.
  const paymentId = newId('pay')
  await authorize(h, m, declined, { paymentId })
  const [row] = await bankOps(h, paymentId)
  assert.equal(row?.status, 'declined')
  assert.equal(row?.bin, '400000')
  assert.equal(row?.last4, '0002')
})

test('a card that expired after tokenization is declined', async (t) => {
  const { h, m } = await setup(t)
  const token = await tokenize(h, m, CARDS.frictionless.number)
  h.clock.advance(5 * 366 * 86_400_000)
  assert.deepEqual(await authorize(h, m, token), {
    status: 'declined',
    declineCode: 'expired_card',
  })
})

test('authorize is idempotent per paymentId: one bank operation, one detokenization', async (t) => {
  const { h, m } = await setup(t)
  const token = await tokenize(h, m, CARDS.frictionless.number)
  const paymentId = newId('pay')
  const first = await authorize(h, m, token, { paymentId })
  const again = await authorize(h, m, token, { paymentId })
  assert.deepEqual(again, first)
  assert.equal((await bankOps(h, paymentId, 'authorize')).length, 1)
  const audits = await h.deps.db
    .selectFrom('vault_card_access')
    .selectAll()
    .where('card_token', '=', token)
    .execute()
  assert.deepEqual(
    audits.map((a) => [a.caller_service, a.result]),
    [['acquirer', 'ok']],
  )

  // Concurrent calls for a new payment all get the one stored answer.
  const racing = newId('pay')
  const answers = await Promise.all(
    Array.from({ length: 5 }, () => authorize(h, m, token, { paymentId: racing })),
  )
  for (const a of answers) assert.deepEqual(a, answers[0])
  assert.equal((await bankOps(h, racing, 'authorize')).length, 1)

  const declined = await tokenize(h, m, CARDS.declined.number)
  const declinedId = newId('pay')
  await authorize(h, m, declined, { paymentId: declinedId })
  assert.deepEqual(await authorize(h, m, declined, { paymentId: declinedId }), {
    status: 'declined',
    declineCode: 'card_declined',
  })
  assert.equal((await bankOps(h, declinedId)).length, 1)
})

test('timeout card: the bank approves, the caller hears unknown, inquire tells the approval', async (t) => {
  const { h, m } = await setup(t)
  const token = await tokenize(h, m, CARDS.timeout.number)
  const paymentId = newId('pay')
  assert.deepEqual(await authorize(h, m, token, { paymentId, capture: false }), {
    status: 'unknown',
  })
  // A retry does not authorize again (the answer is lost again; inquire is the way).
  assert.deepEqual(await authorize(h, m, token, { paymentId, capture: false }), {
    status: 'unknown',
  })
  const ops = await bankOps(h, paymentId)
  assert.equal(ops.length, 1)
  assert.equal(ops[0]?.status, 'approved')

  const inquired = approved(await acquirer.inquire(h.deps, { paymentId }))
  assert.equal(inquired.authCode, ops[0]?.auth_code)
  assert.equal(inquired.reference, ops[0]?.reference)
  assert.deepEqual(await acquirer.inquire(h.deps, { paymentId }), inquired)
  await acquirer.capture(h.deps, {
    paymentId,
    reference: inquired.reference,
    captureId: 'cap_timeout',
    amount: 10_000,
    final: true,
  })

  // A payment the bank never saw: a definite decline, nothing was charged.
  assert.deepEqual(await acquirer.inquire(h.deps, { paymentId: newId('pay') }), {
    status: 'declined',
    declineCode: 'authorization_not_found',
  })
  // inquire of a normal approval returns it unchanged.
  const normal = newId('pay')
  const other = await tokenize(h, m, CARDS.frictionless.number)
  const result = await authorize(h, m, other, { paymentId: normal })
  assert.deepEqual(await acquirer.inquire(h.deps, { paymentId: normal }), result)
})

/** A capture of the whole 10,000 under `captureId`. */
const full = (captureId: string) => ({ captureId, amount: 10_000, final: true })

test('capture and void of a preauthorization', async (t) => {
  const { h, m } = await setup(t)
  const token = await tokenize(h, m, CARDS.frictionless.number)

  const p1 = newId('pay')
  const a1 = approved(await authorize(h, m, token, { paymentId: p1, capture: false }))
  await assert.rejects(
    acquirer.capture(h.deps, { ...full('cap_p1'), paymentId: p1, reference: '000000000000' }),
    isAppError('SVC-RES-3301', 404),
  )
  await assert.rejects(
    acquirer.capture(h.deps, {
      ...full('cap_p1'),
      paymentId: p1,
      reference: a1.reference,
      amount: 10_001,
    }),
    isAppError('SVC-STATE-3401', 409),
  )
  await acquirer.capture(h.deps, { ...full('cap_p1'), paymentId: p1, reference: a1.reference })
  await acquirer.capture(h.deps, { ...full('cap_p1'), paymentId: p1, reference: a1.reference })
  assert.equal((await bankOps(h, p1, 'capture')).length, 1)
  await assert.rejects(
    acquirer.void(h.deps, { paymentId: p1, reference: a1.reference }),
    isAppError('SVC-STATE-3401', 409),
  )

  const p2 = newId('pay')
  const a2 = approved(await authorize(h, m, token, { paymentId: p2, capture: false }))
  await acquirer.void(h.deps, { paymentId: p2, reference: a2.reference })
  await acquirer.void(h.deps, { paymentId: p2, reference: a2.reference })
  assert.equal((await bankOps(h, p2, 'void')).length, 1)
  await assert.rejects(
    acquirer.capture(h.deps, { ...full('cap_p2'), paymentId: p2, reference: a2.reference }),
    isAppError('SVC-STATE-3401', 409),
  )
  await assert.rejects(
    acquirer.refund(h.deps, {
      paymentId: p2,
      refundId: newId('rfn'),
      reference: a2.reference,
      amount: 100,
    }),
    isAppError('SVC-STATE-3401', 409),
  )

  // A sale (capture: true) is captured already: capturing the same amount is a no-op.
  const p3 = newId('pay')
  const a3 = approved(await authorize(h, m, token, { paymentId: p3 }))
  await acquirer.capture(h.deps, { ...full('cap_p3'), paymentId: p3, reference: a3.reference })
  assert.equal((await bankOps(h, p3, 'capture')).length, 0)
})

test('partial captures: several up to the authorization, final closes it, void releases the rest', async (t) => {
  const { h, m } = await setup(t)
  const token = await tokenize(h, m, CARDS.frictionless.number)
  const capture = (
    paymentId: string,
    reference: string,
    id: string,
    amount: number,
    final = false,
  ) => acquirer.capture(h.deps, { paymentId, reference, captureId: id, amount, final })

  const p1 = newId('pay')
  const a1 = approved(await authorize(h, m, token, { paymentId: p1, capture: false }))
  await capture(p1, a1.reference, 'cap_a', 3_000)
  await capture(p1, a1.reference, 'cap_a', 3_000) // a retry of the same capture
  await assert.rejects(capture(p1, a1.reference, 'cap_a', 2_000), isAppError('SVC-STATE-3401', 409))
  await capture(p1, a1.reference, 'cap_b', 3_000)
  // 6,000 captured: 4,001 more would pass the authorization.
  await assert.rejects(capture(p1, a1.reference, 'cap_c', 4_001), isAppError('SVC-STATE-3401', 409))
  await capture(p1, a1.reference, 'cap_c', 1_000, true)
  // Final: nothing more can be captured or released.
  await assert.rejects(capture(p1, a1.reference, 'cap_d', 100), isAppError('SVC-STATE-3401', 409))
  await assert.rejects(
    acquirer.void(h.deps, { paymentId: p1, reference: a1.reference }),
    isAppError('SVC-STATE-3401', 409),
  )
  assert.equal((await bankOps(h, p1, 'capture')).length, 3)
  // Refunds are bounded by the 7,000 captured.
  await assert.rejects(
    acquirer.refund(h.deps, {
      paymentId: p1,
      refundId: newId('rfn'),
      reference: a1.reference,
      amount: 7_001,
    }),
    isAppError('SVC-STATE-3401', 409),
  )

  // A void after a partial capture releases the rest; the capture stays refundable.
  const p2 = newId('pay')
  const a2 = approved(await authorize(h, m, token, { paymentId: p2, capture: false }))
  await capture(p2, a2.reference, 'cap_e', 2_500)
  await acquirer.void(h.deps, { paymentId: p2, reference: a2.reference })
  const [released] = await bankOps(h, p2, 'void')
  assert.equal(released?.amount, 7_500)
  await assert.rejects(capture(p2, a2.reference, 'cap_f', 100), isAppError('SVC-STATE-3401', 409))
  const refunded = await acquirer.refund(h.deps, {
    paymentId: p2,
    refundId: newId('rfn'),
    reference: a2.reference,
    amount: 2_500,
  })
  assert.equal(refunded.status, 'completed')
})

test('refunds: synchronous, idempotent per refundId, bounded by the captured amount', async (t) => {
  const { h, m } = await setup(t)
  const token = await tokenize(h, m, CARDS.frictionless.number)
  const paymentId = newId('pay')
  const { reference } = approved(await authorize(h, m, token, { paymentId }))

  const r1 = newId('rfn')
  const first = await acquirer.refund(h.deps, { paymentId, refundId: r1, reference, amount: 4_000 })
  assert.equal(first.status, 'completed')
  assert.deepEqual(
    await acquirer.refund(h.deps, { paymentId, refundId: r1, reference, amount: 4_000 }),
    first,
  )
  assert.deepEqual(await acquirer.refundStatus(h.deps, { refundId: r1 }), first)
  assert.equal((await bankOps(h, paymentId, 'refund')).length, 1)

  // Two concurrent refunds of 4 000 against 6 000 left: exactly one fits.
  const outcomes = await Promise.allSettled([
    acquirer.refund(h.deps, { paymentId, refundId: newId('rfn'), reference, amount: 4_000 }),
    acquirer.refund(h.deps, { paymentId, refundId: newId('rfn'), reference, amount: 4_000 }),
  ])
  assert.deepEqual(outcomes.map((o) => o.status).sort(), ['fulfilled', 'rejected'])
  const rejected = outcomes.find((o) => o.status === 'rejected')
  assert.ok(isAppError('SVC-STATE-3401', 409)(rejected?.reason))
  await acquirer.refund(h.deps, { paymentId, refundId: newId('rfn'), reference, amount: 2_000 })
  await assert.rejects(
    acquirer.refund(h.deps, { paymentId, refundId: newId('rfn'), reference, amount: 1 }),
    isAppError('SVC-STATE-3401', 409),
  )
  await assert.rejects(
    acquirer.refundStatus(h.deps, { refundId: newId('rfn') }),
    isAppError('SVC-RES-3301', 404),
  )
  // Refunding a preauthorization that was never captured is refused.
  const pre = newId('pay')
  const a = approved(await authorize(h, m, token, { paymentId: pre, capture: false }))
  await assert.rejects(
    acquirer.refund(h.deps, {
      paymentId: pre,
      refundId: newId('rfn'),
      reference: a.reference,
      amount: 1,
    }),
    isAppError('SVC-STATE-3401', 409),
  )
})

test('async refund cards: …0259 pending then completed, …0697 pending then failed', async (t) => {
  const { h, m } = await setup(t)
  for (const [card, final] of [
    [CARDS.refundAsync, 'completed'],
    [CARDS.refundFails, 'failed'],
  ] as const) {
    const token = await tokenize(h, m, card.number)
    const paymentId = newId('pay')
    const { reference } = approved(await authorize(h, m, token, { paymentId }))
    const refundId = newId('rfn')
    const started = await acquirer.refund(h.deps, {
      paymentId,
      refundId,
      reference,
      amount: 10_000,
    })
    assert.equal(started.status, 'pending')
    // A retry while pending makes no second refund.
    assert.deepEqual(
      await acquirer.refund(h.deps, { paymentId, refundId, reference, amount: 10_000 }),
      started,
    )
    assert.deepEqual(await acquirer.refundStatus(h.deps, { refundId }), {
      status: final,
      bankRefundId: started.bankRefundId,
    })
    assert.deepEqual(await acquirer.refundStatus(h.deps, { refundId }), {
      status: final,
      bankRefundId: started.bankRefundId,
    })
    assert.equal((await bankOps(h, paymentId, 'refund')).length, 1)
    if (final === 'failed') {
      // A failed refund releases the amount: a new refund may take it.
      const again = await acquirer.refund(h.deps, {
        paymentId,
        refundId: newId('rfn'),
        reference,
        amount: 10_000,
      })
      assert.equal(again.status, 'pending')
    }
  }
})

test('a revoked or foreign token cannot be charged, and the bank records nothing', async (t) => {
  const { h, m } = await setup(t)
  const other = await h.newMerchant()
  const token = await tokenize(h, m, CARDS.frictionless.number)
  const foreign = newId('pay')
  await assert.rejects(
    authorize(h, other, token, { paymentId: foreign }),
    isAppError('SVC-RES-3301', 404),
  )
  assert.equal((await bankOps(h, foreign)).length, 0)
  await transact(h.deps.db, (tx) => revokeCardToken(tx, m.merchantId, token))
  const revoked = newId('pay')
  await assert.rejects(
    authorize(h, m, token, { paymentId: revoked }),
    isAppError('SVC-STATE-3401', 409),
  )
  assert.equal((await bankOps(h, revoked)).length, 0)
})
