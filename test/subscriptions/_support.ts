import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import type { Kurus } from '../../sdk/index.ts'
import { eventsForResource } from '../../src/modules/events/index.ts'
import type { TestApp, TestMerchant } from '../helpers/app.ts'
import { CARDS, tokenize } from '../helpers/payments.ts'

// Shortcuts for the subscriptions tests; every call goes through the signed HTTP API.

export const DAY_MS = 24 * 60 * 60 * 1000

export interface SubscriptionBody {
  id: string
  merchantId: string
  storeId: string
  customerId: string
  publicHash?: string
  status: string
  amountMinor: number
  currency: string
  intervalCount: number
  intervalUnit: string
  cycleNumber: number
  nextChargeAt: string | null
  cardLast4: string
  cardBrand: string
  cancelAtPeriodEnd: boolean
  trialEndAt: string | null
  description: string | null
  generateInvoices: boolean
  failedAttempts: number
  cancelledAt: string | null
  createdAt: string
  testClockId?: string | null
}

export interface ChargeItem {
  cycleNumber: number
  paymentId: string | null
  status: string
  amountMinor: number
  chargedAt: string
}

export interface ErrorBody {
  code: string
  message: string
  details?: { field: string; reason: string }[]
}

/** A customer with a saved default card of the given test number. */
export async function customerWithCard(
  client: Kurus,
  card: string = CARDS.frictionless,
): Promise<{ customerId: string; cardToken: string }> {
  const customer = await client.request<{ id: string }>('POST', '/v1/customers', {
    body: { externalId: `ext-${randomUUID()}` },
  })
  assert.equal(customer.status, 201, JSON.stringify(customer.body))
  const cardToken = await tokenize(client, card)
  const attached = await client.request('POST', `/v1/customers/${customer.body.id}/cards`, {
    body: { cardToken, isDefault: true },
  })
  assert.equal(attached.status, 201, JSON.stringify(attached.body))
  return { customerId: customer.body.id, cardToken }
}

export async function createSubscription(
  m: TestMerchant,
  customerId: string,
  extra: Record<string, unknown> = {},
): Promise<SubscriptionBody> {
  const res = await m.client.request<SubscriptionBody>('POST', '/v1/subscriptions', {
    body: {
      storeId: m.storeId,
      customerId,
      amountMinor: 14_900,
      currency: 'TRY',
      intervalCount: 1,
      intervalUnit: 'month',
      ...extra,
    },
  })
  assert.equal(res.status, 201, JSON.stringify(res.body))
  return res.body
}

/** A merchant, a customer with a card, and a subscription of theirs. */
export async function subscribed(
  h: TestApp,
  options: { card?: string; extra?: Record<string, unknown>; kycStatus?: string } = {},
) {
  const m = await h.newMerchant(options.kycStatus ? { kycStatus: options.kycStatus } : {})
  const { customerId, cardToken } = await customerWithCard(m.client, options.card)
  const sub = await createSubscription(m, customerId, options.extra)
  return { m, customerId, cardToken, sub }
}

export async function getSub(m: TestMerchant, id: string): Promise<SubscriptionBody> {
  const res = await m.client.request<SubscriptionBody>('GET', `/v1/subscriptions/${id}`)
  assert.equal(res.status, 200, JSON.stringify(res.body))
  return res.body
}

export async function charges(m: TestMerchant, id: string): Promise<ChargeItem[]> {
  const res = await m.client.request<{ items: ChargeItem[] }>(
    'GET',
    `/v1/subscriptions/${id}/charges`,
  )
  assert.equal(res.status, 200, JSON.stringify(res.body))
  return res.body.items
}

/** POST /v1/sandbox/reconcile: every reconciler once, then every job queue drained. */
export async function reconcile(m: TestMerchant): Promise<Record<string, number>> {
  const res = await m.client.request<{ ran: Record<string, number> }>(
    'POST',
    '/v1/sandbox/reconcile',
    { body: {} },
  )
  assert.equal(res.status, 200, JSON.stringify(res.body))
  return res.body.ran
}

export async function action<T = Record<string, unknown>>(
  m: TestMerchant,
  id: string,
  verb: string,
  body: Record<string, unknown> = {},
) {
  return m.client.request<T & ErrorBody>('POST', `/v1/subscriptions/${id}/${verb}`, { body })
}

export async function eventTypes(h: TestApp, merchantId: string, id: string): Promise<string[]> {
  return (await eventsForResource(h.deps.db, merchantId, id)).map((e) => e.type)
}

/** The payments the service made for one subscription cycle (`<id>:<cycle>`). */
export async function paymentsOfCycle(
  h: TestApp,
  merchantId: string,
  subscriptionId: string,
  cycle: number,
): Promise<{ id: string; status: string }[]> {
  const rows = await h.deps.db
    .selectFrom('payments')
    .select(['id', 'status'])
    .where('merchant_id', '=', merchantId)
    .where('transaction_id', '=', `${subscriptionId}:${cycle}`)
    .orderBy('created_at')
    .execute()
  return rows
}
