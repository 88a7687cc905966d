// Shared by the vault and acquirer tests: CONTRACT.md's test cards and a tokenizing helper.
import assert from 'node:assert/strict'
import type { TestApp, TestMerchant } from '../helpers/app.ts'

export interface TestCard {
  number: string
  brand: string
  cardType: string
  installments: number[]
}

const upTo = (n: number) => Array.from({ length: n }, (_, i) => i + 1)

export const CARDS = {
  frictionless: {
    number: '4155650100416111',
    brand: 'visa',
    cardType: 'credit',
    installments: upTo(12),
  },
  challenge: {
    number: '5528790000000008',
    brand: 'mastercard',
    cardType: 'credit',
    installments: upTo(9),
  },
  challengeFails: {
    number: '4000000000003063',
    brand: 'visa',
    cardType: 'credit',
    installments: upTo(6),
  },
  debit: { number: '5890040000000016', brand: 'mastercard', cardType: 'debit', installments: [1] },
  troy: { number: '9792020000000001', brand: 'troy', cardType: 'debit', installments: [1] },
  declined: {
    number: '4000000000000002',
    brand: 'visa',
    cardType: 'credit',
    installments: upTo(6),
  },
  noFunds: { number: '4000000000009995', brand: 'visa', cardType: 'credit', installments: upTo(6) },
  refundAsync: {
    number: '4000000000000259',
    brand: 'visa',
    cardType: 'credit',
    installments: upTo(6),
  },
  refundFails: {
    number: '4000000000000697',
    brand: 'visa',
    cardType: 'credit',
    installments: upTo(6),
  },
  timeout: { number: '4000000000000119', brand: 'visa', cardType: 'credit', installments: upTo(6) },
  other: { number: '4111111111111111', brand: 'visa', cardType: 'credit', installments: [1] },
} satisfies Record<string, TestCard>

export const ALL_CARDS: TestCard[] = Object.values(CARDS)

/** A body that passes every rule, expiring three years after the app's clock. */
export function cardBody(h: TestApp, number: string, overrides: Record<string, unknown> = {}) {
  return {
    cardNumber: number,
    expMonth: 12,
    expYear: h.clock.now().getUTCFullYear() + 3,
    cvc: '123',
    holderName: 'Ayşe Yılmaz',
    ...overrides,
  }
}

export async function tokenize(h: TestApp, m: TestMerchant, number: string): Promise<string> {
  const res = await m.client.request<{ cardToken: string }>('POST', '/v1/cards/tokens', {
    body: cardBody(h, number),
  })
  assert.equal(res.status, 201, JSON.stringify(res.body))
  return res.body.cardToken
}

/** Appends the Luhn check digit to a prefix. */
export function withLuhn(prefix: string): string {
  let sum = 0
  for (let i = 0; i < prefix.length; i++) {
    let d = Number(prefix[prefix.length - 1 - i])
    if (i % 2 === 0) {
      d *= 2
      if (d > 9) d -= 9
    }
    sum += d
  }
  return prefix + String((10 - (sum % 10)) % 10)
}
