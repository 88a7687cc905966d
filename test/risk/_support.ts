import assert from 'node:assert/strict'
import type { Kurus } from '../../sdk/index.ts'
import { charge } from '../helpers/payments.ts'

// Shortcuts for the risk tests: every call goes through the signed HTTP API.

export interface RiskView {
  decision: string
  score: number
  reasons: string[]
  ruleIds: string[]
}

export interface PaymentView {
  id: string
  status: string
  failureCode: string | null
  risk: RiskView | null
  card: { fingerprint: string } | null
  capturedAmount: number
  [k: string]: unknown
}

export async function fingerprintOf(client: Kurus, cardNumber: string): Promise<string> {
  const res = await client.request<{ card: { fingerprint: string } }>('POST', '/v1/cards/tokens', {
    body: { cardNumber, expMonth: 12, expYear: 2030, cvc: '123', holderName: 'Ayşe Yılmaz' },
  })
  assert.equal(res.status, 201, JSON.stringify(res.body))
  return res.body.card.fingerprint
}

export async function addItem(client: Kurus, list: string, value: string, note?: string) {
  const res = await client.request<{ id: string; value: string }>(
    'POST',
    `/v1/risk/lists/${list}/items`,
    { body: { value, ...(note === undefined ? {} : { note }) } },
  )
  assert.equal(res.status, 201, JSON.stringify(res.body))
  return res.body
}

export async function createRule(
  client: Kurus,
  action: 'block' | 'review' | 'require_3ds',
  condition: unknown,
  name = `rule ${action}`,
) {
  const res = await client.request<{ id: string }>('POST', '/v1/risk/rules', {
    body: { name, action, condition },
  })
  assert.equal(res.status, 201, JSON.stringify(res.body))
  return res.body.id
}

export async function getPayment(client: Kurus, id: string): Promise<PaymentView> {
  const res = await client.request<PaymentView>('GET', `/v1/payments/${id}`)
  assert.equal(res.status, 200, JSON.stringify(res.body))
  return res.body
}

export async function customerWithEmail(client: Kurus, email: string): Promise<string> {
  const res = await client.request<{ id: string }>('POST', '/v1/customers', {
    body: { externalId: `ext-${email}`, email, name: 'Ayşe' },
  })
  assert.equal(res.status, 201, JSON.stringify(res.body))
  return res.body.id
}

/** A charge the risk check blocks: 402 SVC-RISK-3701, the payment failed/blocked. */
export async function assertBlocked(
  client: Kurus,
  out: Awaited<ReturnType<typeof charge>>,
  reason: string,
): Promise<PaymentView> {
  const { res } = out
  assert.equal(res.status, 402, JSON.stringify(res.body))
  assert.equal(res.body['code'], 'SVC-RISK-3701')
  const paymentId = res.body['paymentId']
  assert.equal(typeof paymentId, 'string')
  const p = await getPayment(client, paymentId)
  assert.equal(p.status, 'failed')
  assert.equal(p.failureCode, 'blocked')
  assert.equal(p.risk?.decision, 'block')
  assert.ok(p.risk.reasons.includes(reason), JSON.stringify(p.risk.reasons))
  return p
}
