// Goal: the per-IP card-testing guard of CONTRACT (100 tokenizations per 10 minutes in demo,
// 20 in live; beyond → 429 SVC-GW-1004 with Retry-After), and its log purge.
// Method: many unsigned card submissions from one client, the clock moved past the window.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { startTestApp, type TestApp } from '../helpers/app.ts'
import type { TestMerchant } from '../helpers/app.ts'
import { browser, createCustomer, createSession } from './_support.ts'

// A Luhn failure: the vault refuses it, but it still counts as a tokenization attempt.
const BAD_CARD = {
  number: '4155650100416112',
  expMonth: 12,
  expYear: 2030,
  cvc: '123',
  holderName: 'X',
}

async function cardUpdateSession(m: TestMerchant) {
  const customerId = await createCustomer(m.client)
  return (await createSession(m.client, { mode: 'card_update_only', customerId })).sessionId
}

async function attempts(h: TestApp, sessionId: string, n: number): Promise<number[]> {
  const statuses: number[] = []
  for (let i = 0; i < n; i++) {
    const res = await browser(h, 'POST', `/v1/public/sessions/${sessionId}/card`, {
      json: { card: BAD_CARD },
    })
    statuses.push(res.status)
  }
  return statuses
}

test('demo: the 101st tokenization from one IP in 10 minutes is refused, then allowed again', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const sessionId = await cardUpdateSession(m)
  const first = await attempts(h, sessionId, 100)
  assert.deepEqual(new Set(first), new Set([400]))
  const refused = await browser(h, 'POST', `/v1/public/sessions/${sessionId}/card`, {
    json: { card: BAD_CARD },
  })
  assert.equal(refused.status, 429)
  assert.equal(refused.body['code'], 'SVC-GW-1004')
  assert.equal(refused.headers.get('retry-after'), '600')
  // The payment endpoint shares the budget.
  const other = await createSession(m.client, { amount: 1_000 })
  const pay = await browser(h, 'POST', `/v1/public/sessions/${other.sessionId}/pay`, {
    json: { card: BAD_CARD },
  })
  assert.equal(pay.status, 429)

  h.clock.advance(11 * 60 * 1000)
  const report = await m.client.request<{ ran: Record<string, number> }>(
    'POST',
    '/v1/sandbox/reconcile',
    { body: {} },
  )
  assert.ok((report.body.ran['checkout.purge_tokenization_log'] ?? 0) >= 101)
  const fresh = await cardUpdateSession(m)
  assert.deepEqual(await attempts(h, fresh, 1), [400])
})

test('live: the limit is 20', async (t) => {
  const h = await startTestApp(t, { env: { KURUS_ENV: 'live' }, freshDatabase: true })
  const m = await h.newMerchant({ env: 'live' })
  const sessionId = await cardUpdateSession(m)
  const statuses = await attempts(h, sessionId, 21)
  assert.deepEqual(statuses.slice(0, 20), Array<number>(20).fill(400))
  assert.equal(statuses[20], 429)
})
