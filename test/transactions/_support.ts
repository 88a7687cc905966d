import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import type { Kurus } from '../../sdk/index.ts'
import type { TestApp } from '../helpers/app.ts'
import { insertPayment } from '../../src/modules/payments/payments.repository.ts'
import { CARDS, tokenize } from '../helpers/payments.ts'

// Shared by the transactions tests: payments made through the signed API, and list paging.

export interface ListItem {
  id: string
  storeId: string
  transactionId: string
  status: string
  method: string
  amount: number
  currency: string
  refundsCount: number
  chargebacksCount: number
  createdAt: string
}

export interface ListBody {
  items: ListItem[]
  nextCursor: string | null
}

/** A card token per (client, card): charging one token many times keeps setup cheap. */
const tokens = new Map<Kurus, Map<string, string>>()
async function tokenFor(client: Kurus, card: string): Promise<string> {
  let byCard = tokens.get(client)
  if (!byCard) tokens.set(client, (byCard = new Map<string, string>()))
  let token = byCard.get(card)
  if (!token) byCard.set(card, (token = await tokenize(client, card)))
  return token
}

export interface PayOptions {
  card?: string
  capture?: boolean
  customerId?: string
  transactionId?: string
}

/** One payment through the real API (session, then charge); returns its id. */
export async function pay(client: Kurus, amount: number, opts: PayOptions = {}): Promise<string> {
  const transactionId = opts.transactionId ?? `ord-${randomUUID()}`
  const session = await client.request('POST', '/v1/payments/sessions', {
    body: {
      transactionId,
      amount,
      currency: 'TRY',
      returnUrl: 'https://shop.example/return',
      ...(opts.customerId !== undefined ? { customerId: opts.customerId } : {}),
    },
  })
  assert.equal(session.status, 201, JSON.stringify(session.body))
  const card = opts.card ?? CARDS.frictionless
  const res = await client.request<{ paymentId: string; code?: string }>(
    'POST',
    '/v1/payments/card',
    {
      body: {
        transactionId,
        amount,
        currency: 'TRY',
        cardToken: await tokenFor(client, card),
        threeDSecure: false,
        ...(opts.capture === false ? { capture: false } : {}),
      },
    },
  )
  assert.ok(res.status === 201 || res.status === 402, JSON.stringify(res.body))
  return res.body.paymentId
}

/** A QR payment through the real API: a `qr` session, then the sandbox bank pays it. */
export async function payQr(client: Kurus, amount: number): Promise<string> {
  const session = await client.request<{ sessionId: string }>('POST', '/v1/payments/sessions', {
    body: {
      transactionId: `qr-${randomUUID()}`,
      amount,
      currency: 'TRY',
      mode: 'qr',
      returnUrl: 'https://shop.example/return',
    },
  })
  assert.equal(session.status, 201, JSON.stringify(session.body))
  const paid = await client.request<{ paymentId: string }>(
    'POST',
    `/v1/sandbox/sessions/${session.body.sessionId}/qr-pay`,
    { body: {} },
  )
  assert.equal(paid.status, 201, JSON.stringify(paid.body))
  return paid.body.paymentId
}

/** A customer of the merchant (payments may name only their merchant's customers). */
export async function customer(client: Kurus, name: string): Promise<string> {
  const res = await client.request<{ id: string }>('POST', '/v1/customers', {
    body: { externalId: `ext-${randomUUID()}`, name },
  })
  assert.equal(res.status, 201, JSON.stringify(res.body))
  return res.body.id
}

/** Every page of a list, following nextCursor. */
export async function listAll(
  client: Kurus,
  query: Record<string, string | number | undefined>,
  limit = 100,
): Promise<ListItem[]> {
  const out: ListItem[] = []
  let cursor: string | undefined
  for (let guard = 0; guard < 1000; guard++) {
    const res = await client.request<ListBody>('GET', '/v1/transactions', {
      query: { ...query, limit, cursor },
    })
    assert.equal(res.status, 200, JSON.stringify(res.body))
    out.push(...res.body.items)
    if (res.body.nextCursor === null) return out
    cursor = res.body.nextCursor
  }
  throw new Error('listAll: too many pages')
}

/**
 * Test-only: a payment row written straight through the payments repository, for the test of
 * rows that share one instant (the API stamps each payment with its own clock reading, so
 * identical and sub-millisecond timestamps cannot be made through it). The row satisfies every
 * constraint of the payments table.
 */
export async function insertQrPayment(
  h: TestApp,
  merchant: { merchantId: string; storeId: string },
  amount: number,
  id: string,
): Promise<void> {
  const now = h.clock.now()
  await insertPayment(h.deps.db, {
    id,
    merchant_id: merchant.merchantId,
    store_id: merchant.storeId,
    session_id: null,
    transaction_id: `qr-${randomUUID()}`,
    method: 'qr',
    status: 'captured',
    amount,
    currency: 'TRY',
    commission: 0,
    installment_count: 1,
    card_token: null,
    card_mask: null,
    card_brand: null,
    card_type: null,
    bin: null,
    three_d_secure: false,
    capture_requested: true,
    auth_code: null,
    acquirer_reference: null,
    decline_code: null,
    correlation_id: null,
    customer_id: null,
    save_card: false,
    callback_url: null,
    shares: JSON.stringify([]),
    metadata: JSON.stringify({}),
    fingerprint: 'test-only',
    void_reason: null,
    created_at: now,
    authorized_at: now,
    completed_at: now,
    updated_at: now,
  })
}

/** Newest first, ties by id descending: the order the API promises. */
export function keysetOrder(a: ListItem, b: ListItem): number {
  if (a.createdAt !== b.createdAt) return a.createdAt < b.createdAt ? 1 : -1
  return a.id < b.id ? 1 : a.id > b.id ? -1 : 0
}
