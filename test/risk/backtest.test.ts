// Goal: the backtest (CONTRACT.md "Risk"): a condition replayed over the facts stored with
// the merchant's card payments of the last 30 days agrees with a hand count (evaluated,
// matched, matchedAmount, samples); older payments and other merchants' are not counted;
// an invalid condition is 400. Method: signed HTTP requests; the test clock moves 31 days.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { startTestApp } from '../helpers/app.ts'
import { CARDS, charge } from '../helpers/payments.ts'

interface Backtest {
  evaluated: number
  matched: number
  matchedAmount: number
  samplePaymentIds: string[]
}

test('backtest counts agree with a hand count over the last 30 days', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const other = await h.newMerchant()
  // 31 days ago: out of the window.
  assert.equal((await charge(m.client, CARDS.frictionless, 90_000)).res.status, 201)
  h.clock.advance(31 * 86_400_000)
  const made: { id: string; amount: number; brand: string }[] = []
  for (const [card, amount] of [
    [CARDS.frictionless, 12_000],
    [CARDS.frictionless, 30_000],
    [CARDS.debit, 45_000],
    [CARDS.frictionless, 5_000],
    [CARDS.declined, 25_000],
    [CARDS.troy, 60_000],
  ] as const) {
    const { res } = await charge(m.client, card, amount, { threeDSecure: false })
    const id = res.body.paymentId
    made.push({
      id,
      amount,
      brand: card === CARDS.troy ? 'troy' : card === CARDS.debit ? 'mastercard' : 'visa',
    })
  }
  await charge(other.client, CARDS.frictionless, 50_000)

  const condition = {
    and: [{ '>=': [{ var: 'amount' }, 20_000] }, { '==': [{ var: 'card.brand' }, 'visa'] }],
  }
  const res = await m.client.request<Backtest>('POST', '/v1/risk/rules/backtest', {
    body: { condition },
  })
  assert.equal(res.status, 200, JSON.stringify(res.body))
  const hand = made.filter((p) => p.amount >= 20_000 && p.brand === 'visa')
  assert.equal(hand.length, 2) // 30,000 and the declined 25,000
  assert.equal(res.body.evaluated, made.length)
  assert.equal(res.body.matched, hand.length)
  assert.equal(
    res.body.matchedAmount,
    hand.reduce((s, p) => s + p.amount, 0),
  )
  assert.deepEqual([...res.body.samplePaymentIds].sort(), hand.map((p) => p.id).sort())

  const velocity = await m.client.request<Backtest>('POST', '/v1/risk/rules/backtest', {
    body: { condition: { '>': [{ var: 'velocity.cardAttempts1h' }, 2] } },
  })
  // The 4th frictionless-card payment saw 3 attempts of that card within the hour.
  assert.equal(velocity.body.matched, 1)
  assert.deepEqual(velocity.body.samplePaymentIds, [made[3]?.id])

  const bad = await m.client.request<{ code: string }>('POST', '/v1/risk/rules/backtest', {
    body: { condition: { '>': [{ var: 'card.number' }, 1] } },
  })
  assert.equal(bad.status, 400)
  assert.equal(bad.body.code, 'SVC-VAL-3001')
})
