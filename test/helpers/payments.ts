import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import type { Kurus } from '../../sdk/index.ts'

// Shortcuts for payment tests: every call still goes through the signed HTTP API.

export const CARDS = {
  frictionless: '4155650100416111',
  challenge: '5528790000000008',
  challengeFails: '4000000000003063',
  debit: '5890040000000016',
  troy: '9792020000000001',
  declined: '4000000000000002',
  insufficientFunds: '4000000000009995',
  asyncRefund: '4000000000000259',
  asyncRefundFails: '4000000000000697',
  timeout: '4000000000000119',
} as const

export async function tokenize(client: Kurus, cardNumber: string): Promise<string> {
  const res = await client.request<{ cardToken: string }>('POST', '/v1/cards/tokens', {
    body: { cardNumber, expMonth: 12, expYear: 2030, cvc: '123', holderName: 'Ayşe Yılmaz' },
  })
  assert.equal(res.status, 201, JSON.stringify(res.body))
  return res.body.cardToken
}

export async function openSession(
  client: Kurus,
  amount: number,
  extra: Record<string, unknown> = {},
): Promise<{ sessionId: string; transactionId: string }> {
  const transactionId = `ord-${randomUUID()}`
  const res = await client.request<{ sessionId: string }>('POST', '/v1/payments/sessions', {
    body: {
      transactionId,
      amount,
      currency: 'TRY',
      returnUrl: 'https://shop.example/return',
      ...extra,
    },
  })
  assert.equal(res.status, 201, JSON.stringify(res.body))
  return { sessionId: res.body.sessionId, transactionId }
}

export interface ChargeBody {
  paymentId: string
  status: string
  amount: number
  commission: number
  netAmount: number
  correlationId?: string
  challengeUrl?: string
  authCode: string | null
  [k: string]: unknown
}

/** Session + token + charge in one go; returns the raw response. */
export async function charge(
  client: Kurus,
  card: string,
  amount: number,
  body: Record<string, unknown> = {},
  sessionExtra: Record<string, unknown> = {},
) {
  const { transactionId } = await openSession(client, amount, sessionExtra)
  const cardToken = await tokenize(client, card)
  const res = await client.request<ChargeBody>('POST', '/v1/payments/card', {
    body: { transactionId, amount, currency: 'TRY', cardToken, ...body },
  })
  return { res, transactionId, cardToken }
}
