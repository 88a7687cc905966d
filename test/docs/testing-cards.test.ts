// Goal: the "Testing" page (docs/testing-cards.md, issue 38) cannot drift from the sandbox:
// it is what `npm run docs:testing` writes; its card rows are the sandbox bank's own card
// table (src/modules/acquirer/sandbox-bank.ts, read as the source it is, nothing left out);
// and every card does through the API what its row says — approved, challenged (123456 passes,
// another code fails), declined with its code, refunded at once or later, a lost answer
// settled by the reconciler. Method: the signed API of the real app in demo, one payment per
// card (two for the challenge card), `POST /v1/sandbox/reconcile` for the later outcomes.
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'
import {
  PASSING_OTP,
  TESTING_PAGE,
  TEST_CARDS,
  testingPage,
  type TestCard,
} from '../../scripts/testing-page.ts'
import type { Kurus } from '../../sdk/index.ts'
import { startTestApp } from '../helpers/app.ts'
import { charge, type ChargeBody } from '../helpers/payments.ts'

const root = new URL('../../', import.meta.url)

test('the committed page is what npm run docs:testing writes', async () => {
  assert.equal(readFileSync(new URL(TESTING_PAGE, root), 'utf8'), await testingPage())
})

test('the page lists exactly the sandbox bank’s test cards, with their behaviour', () => {
  const source = readFileSync(new URL('src/modules/acquirer/sandbox-bank.ts', root), 'utf8')
  const block = /const TEST_CARDS[^=]*= \{\n([\s\S]*?)\n\}/.exec(source)?.[1]
  assert.ok(block, 'the sandbox bank keeps its cards in TEST_CARDS')
  const sandbox = new Map<string, string>()
  for (const match of block.matchAll(/'(\d{16})': \{([^}]*)\}/g)) sandbox.set(match[1]!, match[2]!)
  assert.ok(sandbox.size >= 7, `${sandbox.size} cards read from the sandbox bank`)
  const field = (text: string, name: string) => new RegExp(`${name}: '?(\\w+)'?`).exec(text)?.[1]
  for (const [number, text] of sandbox) {
    const row = TEST_CARDS.find((c) => c.number === number)
    assert.ok(row, `${number} is a sandbox test card missing from the page`)
    assert.equal(row.threeDs, field(text, 'threeDs') ?? 'frictionless', number)
    assert.equal(row.declineCode, field(text, 'declineCode'), number)
    assert.equal(row.refund, field(text, 'refundMode') ?? 'sync', number)
    assert.equal(row.answerLost === true, field(text, 'answerLost') === 'true', number)
  }
  // The page's other cards behave as the sandbox's standard card.
  for (const row of TEST_CARDS.filter((c) => !sandbox.has(c.number))) {
    assert.deepEqual(
      [row.threeDs, row.declineCode, row.refund, row.answerLost],
      ['frictionless', undefined, 'sync', undefined],
      row.number,
    )
  }
  const page = readFileSync(new URL(TESTING_PAGE, root), 'utf8')
  for (const row of TEST_CARDS) assert.ok(page.includes(`\`${row.number}\``), row.number)
})

async function reconcile(client: Kurus) {
  const res = await client.request('POST', '/v1/sandbox/reconcile', { body: {} })
  assert.equal(res.status, 200)
}

async function payment(client: Kurus, id: string) {
  const res = await client.request<{ status: string }>('GET', `/v1/payments/${id}`)
  assert.equal(res.status, 200)
  return res.body
}

/** Types `otp` at the sandbox ACS and sends the bank's answer back, as the merchant's server. */
async function completeChallenge(client: Kurus, body: ChargeBody, otp: string) {
  const acs = await client.request<{ correlationId: string; pares: string }>(
    'POST',
    `/v1/sandbox/payments/${body.paymentId}/3ds-challenge`,
    { body: { otp } },
  )
  assert.equal(acs.status, 200, JSON.stringify(acs.body))
  return client.request<{ status: string; code?: string }>(
    'POST',
    `/v1/payments/${body.paymentId}/3ds-callback`,
    { body: { correlationId: acs.body.correlationId, pares: acs.body.pares } },
  )
}

async function checkRefund(client: Kurus, card: TestCard, paymentId: string) {
  const res = await client.request<{ lastRefund: { refundId: string; status: string } }>(
    'POST',
    `/v1/payments/${paymentId}/refund`,
    { body: { amount: 1000 } },
  )
  if (card.refund === 'sync') {
    assert.equal(res.status, 200, `${card.number} ${JSON.stringify(res.body)}`)
    assert.equal(res.body.lastRefund.status, 'completed', card.number)
    return
  }
  assert.equal(res.status, 202, card.number)
  assert.equal(res.body.lastRefund.status, 'pending', card.number)
  await reconcile(client)
  const list = await client.request<{ items: { refundId: string; status: string }[] }>(
    'GET',
    `/v1/payments/${paymentId}/refunds`,
  )
  const refund = list.body.items.find((r) => r.refundId === res.body.lastRefund.refundId)
  assert.equal(refund?.status, card.refund === 'async_completes' ? 'completed' : 'failed')
}

async function checkCard(client: Kurus, card: TestCard) {
  const { res } = await charge(client, card.number, 10000)
  const label = `${card.number}: ${JSON.stringify(res.body)}`
  if (card.declineCode) {
    assert.equal(res.status, 402, label)
    assert.equal(res.body['code'], 'SVC-PAY-3501', label)
    assert.equal(res.body['declineCode'], card.declineCode, label)
    return
  }
  let captured = res.body
  if (card.answerLost) {
    assert.equal(res.status, 202, label)
    assert.equal(res.body.status, 'pending', label)
    await reconcile(client)
    assert.equal((await payment(client, res.body.paymentId)).status, 'captured', label)
  } else if (card.threeDs === 'frictionless') {
    assert.equal(res.status, 201, label)
    assert.equal(res.body.status, 'captured', label)
  } else {
    assert.equal(res.body.status, 'pending_3ds', label)
    assert.ok(res.body.challengeUrl, label)
    const answer = await completeChallenge(client, res.body, PASSING_OTP)
    if (card.threeDs === 'challenge_fails') {
      assert.equal(answer.status, 402, label)
      assert.equal((await payment(client, res.body.paymentId)).status, 'failed', label)
      return
    }
    assert.equal(answer.status, 200, label)
    assert.equal(answer.body.status, 'captured', label)
    // Any other code fails the challenge.
    const another = await charge(client, card.number, 10000)
    const wrong = await completeChallenge(client, another.res.body, '000000')
    assert.equal(wrong.status, 402, label)
    captured = { ...res.body, status: 'captured' }
  }
  await checkRefund(client, card, captured.paymentId)
}

test('every card on the page does in the sandbox what its row says', async (t) => {
  const h = await startTestApp(t)
  const merchant = await h.newMerchant({ name: 'Testing Page Shop' })
  for (const card of TEST_CARDS) await checkCard(merchant.client, card)
})
