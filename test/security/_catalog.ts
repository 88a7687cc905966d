// The tenancy catalog: for each route, how to make a valid request for a resource that a
// given merchant owns. Every signed or dashboard route with a path parameter must have an
// entry (tenancy.test.ts fails listing those that do not); routes without one get a default
// request. Add an entry in the same change that adds a route.
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { multipartForm, type KurusResponse } from '../../sdk/index.ts'
import type { TestApp } from '../helpers/app.ts'
import { CARDS } from '../helpers/payments.ts'
import { fillPath, MUTATING, type RouteInfo } from './_routes.ts'
import {
  newSubmerchant,
  rawRequest,
  signed,
  trIban,
  type Actor,
  type RawResponse,
  type SubActor,
} from './_support.ts'

export interface Fixture {
  params: Record<string, string>
  body?: unknown
  query?: Record<string, string>
  /** The statuses the owner's own call may answer; any 2xx when unset. */
  ok?: number[]
}

export interface World {
  h: TestApp
  /** A loopback webhook receiver (demo allows it). */
  receiverUrl: string
}

export type Make = (w: World, m: Actor) => Promise<Fixture>

// ---------------------------------------------------------------- building blocks

/** A sandbox test clock of the merchant's (decision 0031). */
async function testClock(m: Actor): Promise<string> {
  const res = await m.client.request<{ id: string }>('POST', '/v1/sandbox/test-clocks', {
    body: { frozenTime: '2027-01-01T00:00:00Z' },
  })
  return expectOk(res, 'test clock').id
}

function expectOk<T>(res: KurusResponse<T>, what: string): T {
  assert.ok(
    res.status >= 200 && res.status < 300,
    `${what}: ${res.status} ${JSON.stringify(res.body)}`,
  )
  return res.body
}

function expectRaw(res: RawResponse, what: string): Record<string, unknown> {
  assert.ok(res.status >= 200 && res.status < 300, `${what}: ${res.status} ${res.text}`)
  return res.json as Record<string, unknown>
}

let accountSeq = 1000
/** A fresh 16-digit account number, so each submerchant has its own IBAN. */
export function nextAccount(): string {
  accountSeq += 1
  return String(4_200_000_000_000_000 + accountSeq)
}

export async function tokenize(w: World, m: Actor, card: string = CARDS.frictionless) {
  const body = expectOk(
    await m.client.request<{ cardToken: string }>('POST', '/v1/cards/tokens', {
      body: {
        cardNumber: card,
        expMonth: 12,
        expYear: w.h.clock.now().getUTCFullYear() + 3,
        cvc: '123',
        holderName: 'Ayşe Yılmaz',
      },
    }),
    'tokenize',
  )
  return body.cardToken
}

export async function session(m: Actor, amount: number, extra: Record<string, unknown> = {}) {
  const transactionId = `sec-${randomUUID()}`
  const body = expectOk(
    await m.client.request<{ sessionId: string }>('POST', '/v1/payments/sessions', {
      body: {
        transactionId,
        amount,
        currency: 'TRY',
        returnUrl: 'https://shop.example/r',
        ...extra,
      },
    }),
    'session',
  )
  return { sessionId: body.sessionId, transactionId }
}

export async function pay(
  w: World,
  m: Actor,
  opts: {
    card?: string
    amount?: number
    capture?: boolean
    session?: Record<string, unknown>
  } = {},
) {
  const amount = opts.amount ?? 10_000
  const { transactionId, sessionId } = await session(m, amount, opts.session)
  const cardToken = await tokenize(w, m, opts.card)
  const res = await m.client.request<{ paymentId: string; status: string; correlationId?: string }>(
    'POST',
    '/v1/payments/card',
    {
      body: {
        transactionId,
        amount,
        currency: 'TRY',
        cardToken,
        ...(opts.capture === false ? { capture: false } : {}),
      },
    },
  )
  return { res, transactionId, sessionId, cardToken }
}

export async function captured(w: World, m: Actor, amount = 10_000): Promise<string> {
  const { res } = await pay(w, m, { amount })
  assert.equal(res.status, 201, JSON.stringify(res.body))
  assert.equal(res.body.status, 'captured')
  return res.body.paymentId
}

async function authorized(w: World, m: Actor): Promise<string> {
  const { res } = await pay(w, m, { capture: false })
  assert.equal(res.body.status, 'authorized', JSON.stringify(res.body))
  return res.body.paymentId
}

export async function challenged(w: World, m: Actor) {
  const { res } = await pay(w, m, { card: CARDS.challenge })
  assert.equal(res.body.status, 'pending_3ds', JSON.stringify(res.body))
  return res.body.paymentId
}

export async function reconcile(m: Actor): Promise<void> {
  expectOk(await m.client.request('POST', '/v1/sandbox/reconcile', { body: {} }), 'reconcile')
}

export async function customer(m: Actor): Promise<string> {
  const body = expectOk(
    await m.client.request<{ id: string }>('POST', '/v1/customers', {
      body: { externalId: `ext-${randomUUID()}`, name: 'Ayşe Yılmaz' },
    }),
    'customer',
  )
  return body.id
}

export async function customerWithCard(w: World, m: Actor, card: string = CARDS.frictionless) {
  const customerId = await customer(m)
  const cardToken = await tokenize(w, m, card)
  const attached = expectOk(
    await m.client.request<{ id: string }>('POST', `/v1/customers/${customerId}/cards`, {
      body: { cardToken, isDefault: true },
    }),
    'attach card',
  )
  return { customerId, cardToken, cardId: attached.id }
}

export async function subscription(w: World, m: Actor, card: string = CARDS.frictionless) {
  const { customerId } = await customerWithCard(w, m, card)
  const body = expectOk(
    await m.client.request<{ id: string; publicHash: string }>('POST', '/v1/subscriptions', {
      body: {
        storeId: m.storeId,
        customerId,
        amountMinor: 14_900,
        currency: 'TRY',
        intervalCount: 1,
        intervalUnit: 'month',
      },
    }),
    'subscription',
  )
  return body
}

async function chargeback(w: World, m: Actor) {
  const paymentId = await captured(w, m)
  const cb = expectOk(
    await m.client.request<{ id: string }>(
      'POST',
      `/v1/sandbox/payments/${paymentId}/chargebacks`,
      {
        body: { amount: 1_000 },
      },
    ),
    'chargeback',
  )
  return { id: paymentId, cbid: cb.id }
}

/** A submerchant of `m` with 50,000 kuruş available (a split capture, then settlement). */
export async function settledSubmerchant(w: World, m: Actor): Promise<SubActor> {
  const sub = await newSubmerchant(w.h, m, nextAccount())
  const { res } = await pay(w, m, {
    amount: 100_000,
    session: { splits: [{ submerchantId: sub.submerchantId, amountMinor: 50_000 }] },
  })
  assert.equal(res.status, 201, JSON.stringify(res.body))
  await reconcile(m)
  return sub
}

const merchantFunds = new Map<string, Promise<void>>()
/** The merchant's own available balance, for payout drafts (once per merchant). */
function funded(w: World, m: Actor): Promise<void> {
  let p = merchantFunds.get(m.merchantId)
  if (!p) {
    p = (async () => {
      await captured(w, m, 500_000)
      await reconcile(m)
    })()
    merchantFunds.set(m.merchantId, p)
  }
  return p
}

async function draft(w: World, m: Actor): Promise<string> {
  await funded(w, m)
  const body = expectOk(
    await m.client.request<{ draftId: string }>('POST', '/v1/payout-drafts', {
      body: draftBody(m.storeId),
    }),
    'draft',
  )
  return body.draftId
}

function draftBody(storeId: string) {
  return {
    storeId,
    rows: [
      {
        rail: 'fast',
        dest: trIban(nextAccount()),
        holderName: 'Ali Veli',
        amountMinor: 1_000,
        currency: 'TRY',
      },
    ],
  }
}

async function exported(m: Actor, ready: boolean): Promise<string> {
  const body = expectOk(
    await m.client.request<{ exportId: string }>('POST', '/v1/transactions/exports', {
      body: { format: 'csv' },
    }),
    'export',
  )
  if (ready) await reconcile(m)
  return body.exportId
}

/** A report of `m` (issue 27), built when `ready`. */
async function reported(w: World, m: Actor, ready: boolean): Promise<string> {
  const now = w.h.clock.now()
  const body = expectOk(
    await m.client.request<{ reportId: string }>('POST', '/v1/reports', {
      body: {
        type: 'balance_summary',
        from: new Date(now.getTime() - 86_400_000).toISOString(),
        to: now.toISOString(),
        format: 'csv',
      },
    }),
    'report',
  )
  if (ready) await reconcile(m)
  return body.reportId
}

async function eventId(w: World, m: Actor): Promise<string> {
  const paymentId = await captured(w, m)
  const list = expectOk(
    await m.client.request<{ items: { id: string }[] }>('GET', '/v1/events', {
      query: { resourceId: paymentId },
    }),
    'events',
  )
  const first = list.items[0]
  assert.ok(first, 'the capture recorded an event')
  return first.id
}

async function endpoint(w: World, m: Actor): Promise<string> {
  const body = expectRaw(
    await m.dash('POST', `/v1/stores/${m.storeId}/webhooks`, { body: { url: w.receiverUrl } }),
    'webhook endpoint',
  )
  return body['id'] as string
}

async function delivery(w: World, m: Actor): Promise<string> {
  await endpoint(w, m)
  await captured(w, m)
  await reconcile(m)
  const list = expectRaw(
    await m.dash('GET', `/v1/stores/${m.storeId}/webhooks/deliveries`),
    'deliveries',
  )
  const first = (list['items'] as { id: string }[])[0]
  assert.ok(first, 'a delivery was made')
  return first.id
}

function invoiceBody(storeId: string) {
  return {
    storeId,
    amountMinor: 10_000,
    currency: 'TRY',
    lineItems: [{ name: 'Danışmanlık', qty: 1, unitPriceMinor: 10_000, lineTotalMinor: 10_000 }],
    buyerEmail: 'buyer@example.com',
  }
}

/** An uploaded evidence file (a signed multipart request). */
export async function evidenceFile(m: Actor): Promise<string> {
  const form = multipartForm(
    { purpose: 'dispute_evidence' },
    { field: 'file', filename: 'e.pdf', bytes: Buffer.from('%PDF-1.4\n%%EOF\n') },
  )
  const body = expectOk(
    await m.client.request<{ id: string }>('POST', '/v1/files', {
      rawBody: form.body,
      contentType: form.contentType,
    }),
    'upload',
  )
  return body.id
}

export async function paymentLink(m: Actor): Promise<{ id: string; url: string }> {
  return expectOk(
    await m.client.request<{ id: string; url: string }>('POST', '/v1/payment-links', {
      body: { storeId: m.storeId, amount: 14_990, description: 'Kupa' },
    }),
    'payment link',
  )
}

export async function invoice(m: Actor): Promise<{ id: string; publicHash: string }> {
  return expectOk(
    await m.client.request<{ id: string; publicHash: string }>('POST', '/v1/invoices', {
      body: invoiceBody(m.storeId),
    }),
    'invoice',
  )
}

async function issuedKey(m: Actor): Promise<string> {
  const body = expectRaw(
    await m.dash('POST', `/v1/stores/${m.storeId}/api-keys`, { body: {} }),
    'issue key',
  )
  return body['apiKeyId'] as string
}

// ---------------------------------------------------------------- the catalog

/**
 * Path parameters that name a kind, not a resource (`/v1/risk/lists/{list}/items`): the
 * tenancy tests never fabricate them, and a route whose only parameters are these counts as
 * a route without parameters.
 */
export const SELECTOR_PARAMS: ReadonlySet<string> = new Set(['list', 'bin'])

/** A route's parameters that name resources (the ones a tenant could guess). */
export function idParams(route: RouteInfo): string[] {
  return route.params.filter((p) => !SELECTOR_PARAMS.has(p))
}

let ipSeq = 0
/** A fresh documentation-range IP for block-list fixtures: no fixture charge sends one. */
function listIp(): string {
  ipSeq += 1
  return `198.18.${Math.floor(ipSeq / 250) % 250}.${(ipSeq % 250) + 1}`
}

async function riskListItem(m: Actor): Promise<string> {
  return expectOk(
    await m.client.request<{ id: string }>('POST', '/v1/risk/lists/ip/items', {
      body: { value: listIp() },
    }),
    'risk list item',
  ).id
}

/** A rule no charge matches (amounts are at least 100 kuruş). */
const INERT_CONDITION = { '==': [{ var: 'amount' }, 1] }
/** The amount the review rule of reviewedPayment matches; no other fixture charges it. */
const REVIEW_AMOUNT = 4_321
const reviewRules = new Map<string, Promise<void>>()

async function riskRule(m: Actor): Promise<string> {
  return expectOk(
    await m.client.request<{ id: string }>('POST', '/v1/risk/rules', {
      body: { name: 'inert', action: 'review', condition: INERT_CONDITION },
    }),
    'risk rule',
  ).id
}

/** An open review: a charge of REVIEW_AMOUNT under the merchant's review rule. */
async function review(w: World, m: Actor): Promise<string> {
  let ready = reviewRules.get(m.merchantId)
  if (!ready) {
    ready = m.client
      .request('POST', '/v1/risk/rules', {
        body: {
          name: 'review 43.21',
          action: 'review',
          condition: { '==': [{ var: 'amount' }, REVIEW_AMOUNT] },
        },
      })
      .then((res) => void expectOk(res, 'review rule'))
    reviewRules.set(m.merchantId, ready)
  }
  await ready
  const { res } = await pay(w, m, { amount: REVIEW_AMOUNT })
  assert.equal(res.body.status, 'authorized', JSON.stringify(res.body))
  const list = expectOk(
    await m.client.request<{ items: { id: string; paymentId: string }[] }>(
      'GET',
      '/v1/reviews?status=open',
    ),
    'reviews',
  )
  const found = list.items.find((r) => r.paymentId === res.body.paymentId)
  assert.ok(found, 'the review opened')
  return found.id
}

/** Today in Istanbul (the bank day), YYYY-MM-DD. */
function bankDay(w: World): string {
  return new Date(w.h.clock.now().getTime() + 3 * 3_600_000).toISOString().slice(0, 10)
}

async function posAccount(m: Actor): Promise<string> {
  const res = await m.client.request<{ id: string }>('POST', '/v1/pos-accounts', {
    body: {
      provider: 'est_v3',
      name: 'İşbank sanal POS',
      environment: 'test',
      credentials: {
        clientId: '700655000200',
        username: 'ISBANKAPI',
        password: 'ISBANK07',
        storeKey: 'TRPS0200',
      },
      bank: 'isbank',
      // Disabled: an enabled account would route this actor's other fixtures' charges to it.
      enabled: false,
    },
  })
  return expectOk(res, 'pos account').id
}

export const CATALOG: Record<string, Make> = {
  // payments
  'GET /v1/payments/{id}': async (w, m) => ({ params: { id: await captured(w, m) } }),
  'POST /v1/payments/{id}/capture': async (w, m) => ({
    params: { id: await authorized(w, m) },
    body: {},
  }),
  'PATCH /v1/payments/{id}': async (w, m) => ({
    params: { id: await captured(w, m) },
    body: { metadata: { orderId: 'SIP-1' } },
  }),
  'POST /v1/payments/{id}/void': async (w, m) => ({
    params: { id: await authorized(w, m) },
    body: { reason: 'customer changed their mind' },
  }),
  'POST /v1/payments/{id}/refund': async (w, m) => ({
    params: { id: await captured(w, m) },
    body: { amount: 100 },
  }),
  'GET /v1/payments/{id}/refunds': async (w, m) => ({ params: { id: await captured(w, m) } }),
  'POST /v1/payments/{id}/3ds-callback': async (w, m) => {
    const id = await challenged(w, m)
    const ch = expectOk(
      await m.client.request<{ pares: string; correlationId: string }>(
        'POST',
        `/v1/sandbox/payments/${id}/3ds-challenge`,
        { body: { otp: '123456' } },
      ),
      '3ds challenge',
    )
    return { params: { id }, body: { pares: ch.pares, correlationId: ch.correlationId } }
  },
  'GET /v1/payments/{id}/chargebacks': async (w, m) => ({ params: { id: await captured(w, m) } }),
  'POST /v1/payments/{id}/chargebacks/{cbid}/accept': async (w, m) => ({
    params: await chargeback(w, m),
    body: {},
  }),
  'POST /v1/payments/{id}/chargebacks/{cbid}/reverse': async (w, m) => ({
    params: await chargeback(w, m),
    body: {},
  }),
  'POST /v1/payments/{id}/chargebacks/{cbid}/evidence': async (w, m) => ({
    params: await chargeback(w, m),
    body: { productDescription: 'Kupa', shippingTrackingNumber: 'YK-1' },
  }),
  // transactions, events, exports
  'GET /v1/transactions/{id}': async (w, m) => ({ params: { id: await captured(w, m) } }),
  'GET /v1/transactions/{id}/ledger': async (w, m) => ({ params: { id: await captured(w, m) } }),
  'GET /v1/transactions/exports/{exportId}': async (_w, m) => ({
    params: { exportId: await exported(m, false) },
  }),
  'GET /v1/transactions/exports/{exportId}/download': async (_w, m) => ({
    params: { exportId: await exported(m, true) },
  }),
  'GET /v1/events/{id}': async (w, m) => ({ params: { id: await eventId(w, m) } }),
  // The request log shows the paths a merchant itself sent, so B's holds the ids of A it
  // probed (each a 404). Its successful requests never name A's ids: that is the check.
  'GET /v1/logs': async () => ({ params: {}, query: { status: '2xx', limit: '100' } }),
  // balance transactions and reports (issue 27)
  'GET /v1/reports/{reportId}': async (w, m) => ({
    params: { reportId: await reported(w, m, false) },
  }),
  'GET /v1/reports/{reportId}/download': async (w, m) => ({
    params: { reportId: await reported(w, m, true) },
  }),
  'POST /v1/reports': async (w) => ({
    params: {},
    body: {
      type: 'payout_reconciliation',
      from: new Date(w.h.clock.now().getTime() - 86_400_000).toISOString(),
      to: w.h.clock.now().toISOString(),
      format: 'pdf',
    },
  }),
  // acquiring and settlement (issues 39, 40)
  'POST /v1/pos-accounts': () =>
    Promise.resolve({
      params: {},
      body: {
        provider: 'est_v3',
        name: 'İşbank sanal POS',
        environment: 'test',
        credentials: {
          clientId: '700655000200',
          username: 'ISBANKAPI',
          password: 'ISBANK07',
          storeKey: 'TRPS0200',
        },
        bank: 'isbank',
      },
    }),
  'GET /v1/pos-accounts/{id}': async (_w, m) => ({ params: { id: await posAccount(m) } }),
  'PATCH /v1/pos-accounts/{id}': async (_w, m) => ({
    params: { id: await posAccount(m) },
    body: { name: 'Yeni ad' },
  }),
  'DELETE /v1/pos-accounts/{id}': async (_w, m) => ({ params: { id: await posAccount(m) } }),
  'GET /v1/bins/{bin}': () => Promise.resolve({ params: { bin: '435508' } }),
  // h-pos: a day's reconciliation of the actor's own POS (no order that day: the bank is not asked).
  'GET /v1/acquirer-reconciliation': async (w, m) => ({
    params: {},
    query: { date: bankDay(w), posAccountId: await posAccount(m) },
  }),
  'POST /v1/acquirer-reconciliation': async (w, m) => ({
    params: {},
    body: { date: bankDay(w), posAccountId: await posAccount(m) },
  }),
  'GET /v1/payouts/{id}/balance-transactions': (w, m) =>
    (CATALOG['GET /v1/payouts/{id}'] as Make)(w, m),
  'PUT /v1/bank-account': () =>
    Promise.resolve({
      params: {},
      body: { iban: 'TR330006100519786457841326', holderName: 'Örnek Mağaza A.Ş.' },
    }),
  // A merchant that never set one gets 404; the list checks need one set.
  'GET /v1/bank-account': async (_w, m) => {
    const res = await m.client.request('PUT', '/v1/bank-account', {
      body: { iban: 'TR330006100519786457841326', holderName: 'Örnek Mağaza A.Ş.' },
    })
    if (res.status !== 200) throw new Error(`bank account: ${res.status}`)
    return { params: {} }
  },
  'GET /v1/installment-options': async () => ({
    params: {},
    query: { bin: '435508', amount: '10000' },
  }),
  'PUT /v1/payout-schedule': () => Promise.resolve({ params: {}, body: { interval: 'daily' } }),
  'PUT /v1/routing': () => Promise.resolve({ params: {}, body: { rules: [], default: [] } }),
  // customers and their cards
  'GET /v1/customers/{id}': async (_w, m) => ({ params: { id: await customer(m) } }),
  'PUT /v1/customers/{id}': async (_w, m) => ({
    params: { id: await customer(m) },
    body: { name: 'Mehmet Öz' },
  }),
  'DELETE /v1/customers/{id}': async (_w, m) => ({ params: { id: await customer(m) } }),
  'POST /v1/customers/{id}/cards': async (w, m) => ({
    params: { id: await customer(m) },
    body: { cardToken: await tokenize(w, m) },
  }),
  'GET /v1/customers/{id}/cards': async (w, m) => ({
    params: { id: (await customerWithCard(w, m)).customerId },
  }),
  'GET /v1/customers/{id}/cards/default': async (w, m) => ({
    params: { id: (await customerWithCard(w, m)).customerId },
  }),
  'DELETE /v1/customers/{id}/cards/{cardId}': async (w, m) => {
    const c = await customerWithCard(w, m)
    return { params: { id: c.customerId, cardId: c.cardId } }
  },
  // payouts
  'GET /v1/payout-drafts/{id}': async (w, m) => ({ params: { id: await draft(w, m) } }),
  'POST /v1/payout-drafts/{id}/approve': async (w, m) => ({
    params: { id: await draft(w, m) },
    body: {},
  }),
  'POST /v1/payout-drafts/{id}/cancel': async (w, m) => ({
    params: { id: await draft(w, m) },
    body: {},
  }),
  'GET /v1/payouts/{id}': async (w, m) => {
    const sub = await settledSubmerchant(w, m)
    const body = expectOk(
      await m.client.request<{ payoutId: string }>('POST', '/v1/payouts', {
        body: {
          submerchantId: sub.submerchantId,
          rail: 'fast',
          amountMinor: 1_000,
          currency: 'TRY',
        },
      }),
      'payout',
    )
    return { params: { id: body.payoutId } }
  },
  // subscriptions
  'GET /v1/subscriptions/{id}': async (w, m) => ({ params: { id: (await subscription(w, m)).id } }),
  'GET /v1/subscriptions/{id}/charges': async (w, m) => ({
    params: { id: (await subscription(w, m)).id },
  }),
  'POST /v1/subscriptions/{id}/cancel': async (w, m) => ({
    params: { id: (await subscription(w, m)).id },
    body: { atPeriodEnd: false },
  }),
  'POST /v1/subscriptions/{id}/pause': async (w, m) => ({
    params: { id: (await subscription(w, m)).id },
    body: {},
  }),
  'POST /v1/subscriptions/{id}/resume': async (w, m) => {
    const { id } = await subscription(w, m)
    expectOk(await m.client.request('POST', `/v1/subscriptions/${id}/pause`, { body: {} }), 'pause')
    return { params: { id }, body: {} }
  },
  'POST /v1/subscriptions/{id}/retry': async (w, m) => {
    const { id } = await subscription(w, m, CARDS.declined)
    expectOk(
      await m.client.request('POST', `/v1/sandbox/subscriptions/${id}/advance`, { body: {} }),
      'advance',
    )
    return { params: { id }, body: {} }
  },
  'POST /v1/subscriptions/{id}/charge-now': async (w, m) => ({
    params: { id: (await subscription(w, m)).id },
    body: {},
  }),
  // invoices
  'GET /v1/invoices/{id}': async (_w, m) => ({ params: { id: (await invoice(m)).id } }),
  'GET /v1/invoices/{id}/pdf': async (_w, m) => ({ params: { id: (await invoice(m)).id } }),
  'POST /v1/invoices/{id}/send': async (_w, m) => ({
    params: { id: (await invoice(m)).id },
    body: {},
  }),
  'POST /v1/invoices/{id}/activate': async (_w, m) => ({
    params: { id: (await invoice(m)).id },
    body: {},
  }),
  'POST /v1/invoices/{id}/cancel': async (_w, m) => ({
    params: { id: (await invoice(m)).id },
    body: {},
  }),
  // files (multipart uploads: test/files/_support.ts)
  'GET /v1/files/{id}': async (_w, m) => ({ params: { id: await evidenceFile(m) } }),
  'GET /v1/files/{id}/contents': async (_w, m) => ({ params: { id: await evidenceFile(m) } }),
  // payment links
  'GET /v1/payment-links/{id}': async (_w, m) => ({ params: { id: (await paymentLink(m)).id } }),
  'POST /v1/payment-links/{id}/deactivate': async (_w, m) => ({
    params: { id: (await paymentLink(m)).id },
    body: {},
  }),
  // risk
  'DELETE /v1/risk/lists/{list}/items/{id}': async (_w, m) => ({
    params: { list: 'ip', id: await riskListItem(m) },
  }),
  'GET /v1/risk/rules/{id}': async (_w, m) => ({ params: { id: await riskRule(m) } }),
  'PATCH /v1/risk/rules/{id}': async (_w, m) => ({
    params: { id: await riskRule(m) },
    body: { enabled: false },
  }),
  'DELETE /v1/risk/rules/{id}': async (_w, m) => ({ params: { id: await riskRule(m) } }),
  'GET /v1/reviews/{id}': async (w, m) => ({ params: { id: await review(w, m) } }),
  'POST /v1/reviews/{id}/approve': async (w, m) => ({
    params: { id: await review(w, m) },
    body: {},
  }),
  'POST /v1/reviews/{id}/reject': async (w, m) => ({
    params: { id: await review(w, m) },
    body: {},
  }),
  // sandbox helpers (demo)
  'POST /v1/sandbox/payments/{id}/3ds-challenge': async (w, m) => ({
    params: { id: await challenged(w, m) },
    body: { otp: '123456' },
  }),
  'POST /v1/sandbox/payments/{id}/chargebacks': async (w, m) => ({
    params: { id: await captured(w, m) },
    body: { amount: 500 },
  }),
  'POST /v1/sandbox/sessions/{id}/qr-pay': async (_w, m) => ({
    params: { id: (await session(m, 5_000, { mode: 'qr' })).sessionId },
    body: {},
  }),
  'POST /v1/sandbox/subscriptions/{id}/advance': async (w, m) => ({
    params: { id: (await subscription(w, m)).id },
    body: {},
  }),
  'GET /v1/sandbox/test-clocks/{id}': async (_w, m) => ({ params: { id: await testClock(m) } }),
  'DELETE /v1/sandbox/test-clocks/{id}': async (_w, m) => ({
    params: { id: await testClock(m) },
  }),
  'POST /v1/sandbox/test-clocks/{id}/advance': async (_w, m) => ({
    params: { id: await testClock(m) },
    body: { frozenTime: '2027-02-01T00:00:00Z' },
  }),
  'POST /v1/sandbox/test-clocks': async () => ({
    params: {},
    body: { frozenTime: '2027-01-01T00:00:00Z' },
  }),
  // dashboard: the store's keys and webhooks
  'GET /v1/stores/{storeId}/api-keys': async (_w, m) => ({ params: { storeId: m.storeId } }),
  'GET /v1/stores/{storeId}/allowed-origins': async (_w, m) => ({
    params: { storeId: m.storeId },
  }),
  'PUT /v1/stores/{storeId}/allowed-origins': async (_w, m) => ({
    params: { storeId: m.storeId },
    body: { origins: ['https://shop.example'] },
  }),
  'POST /v1/stores/{storeId}/api-keys': async (_w, m) => ({
    params: { storeId: m.storeId },
    body: {},
  }),
  'POST /v1/stores/{storeId}/api-keys/{keyId}/roll': async (_w, m) => ({
    params: { storeId: m.storeId, keyId: await issuedKey(m) },
    body: {},
  }),
  'DELETE /v1/stores/{storeId}/api-keys/{keyId}': async (_w, m) => ({
    params: { storeId: m.storeId, keyId: await issuedKey(m) },
  }),
  'POST /v1/stores/{storeId}/webhooks': async (w, m) => ({
    params: { storeId: m.storeId },
    body: { url: w.receiverUrl },
  }),
  'GET /v1/stores/{storeId}/webhooks': async (_w, m) => ({ params: { storeId: m.storeId } }),
  'GET /v1/stores/{storeId}/webhooks/callback-secret': async (_w, m) => ({
    params: { storeId: m.storeId },
  }),
  'DELETE /v1/stores/{storeId}/webhooks/{id}': async (w, m) => ({
    params: { storeId: m.storeId, id: await endpoint(w, m) },
  }),
  'POST /v1/stores/{storeId}/webhooks/{id}/rotate-secret': async (w, m) => ({
    params: { storeId: m.storeId, id: await endpoint(w, m) },
    body: {},
  }),
  'POST /v1/stores/{storeId}/webhooks/{id}/enable': async (w, m) => ({
    params: { storeId: m.storeId, id: await endpoint(w, m) },
    body: {},
  }),
  'GET /v1/stores/{storeId}/webhooks/deliveries': async (_w, m) => ({
    params: { storeId: m.storeId },
  }),
  'POST /v1/stores/{storeId}/webhooks/deliveries/{id}/redeliver': async (w, m) => ({
    params: { storeId: m.storeId, id: await delivery(w, m) },
    body: {},
  }),

  // Routes without a path parameter whose default request (no query, `{}` body) would not
  // pass validation: a valid request of their own.
  'POST /v1/cards/tokens': async (w) => ({
    params: {},
    body: {
      cardNumber: CARDS.frictionless,
      expMonth: 12,
      expYear: w.h.clock.now().getUTCFullYear() + 3,
      cvc: '123',
      holderName: 'Ayşe Yılmaz',
    },
  }),
  'POST /v1/payments/sessions': async () => ({
    params: {},
    body: {
      transactionId: `sec-${randomUUID()}`,
      amount: 5_000,
      currency: 'TRY',
      returnUrl: 'https://shop.example/r',
    },
  }),
  'POST /v1/payments/card': async (w, m) => {
    const s = await session(m, 5_000)
    return {
      params: {},
      body: {
        transactionId: s.transactionId,
        amount: 5_000,
        currency: 'TRY',
        cardToken: await tokenize(w, m),
      },
    }
  },
  'GET /v1/installments': async () => ({
    params: {},
    query: { bin: CARDS.frictionless.slice(0, 6), amount: '10000' },
  }),
  'POST /v1/transactions/exports': async () => ({ params: {}, body: { format: 'csv' } }),
  // approved: the caller's own KYC stays as the other routes need it.
  'POST /v1/sandbox/kyc': async () => ({ params: {}, body: { status: 'approved' } }),
  'POST /v1/customers': async () => ({
    params: {},
    body: { externalId: `ext-${randomUUID()}`, name: 'Ayşe Yılmaz' },
  }),
  'POST /v1/payout-drafts': async (w, m) => {
    await funded(w, m)
    return { params: {}, body: draftBody(m.storeId) }
  },
  'POST /v1/payouts': async (w, m) => {
    const sub = await settledSubmerchant(w, m)
    return {
      params: {},
      body: { submerchantId: sub.submerchantId, rail: 'fast', amountMinor: 1_000, currency: 'TRY' },
    }
  },
  'POST /v1/subscriptions': async (w, m) => ({
    params: {},
    body: {
      storeId: m.storeId,
      customerId: (await customerWithCard(w, m)).customerId,
      amountMinor: 14_900,
      currency: 'TRY',
      intervalCount: 1,
      intervalUnit: 'month',
    },
  }),
  'POST /v1/invoices': async (_w, m) => ({ params: {}, body: invoiceBody(m.storeId) }),
  'POST /v1/risk/lists/{list}/items': async () => ({
    params: { list: 'ip' },
    body: { value: listIp(), note: 'fixture' },
  }),
  'GET /v1/risk/lists/{list}/items': async () => ({ params: { list: 'ip' } }),
  'POST /v1/risk/rules': async () => ({
    params: {},
    body: { name: 'inert', action: 'review', condition: INERT_CONDITION },
  }),
  'POST /v1/risk/rules/backtest': async () => ({
    params: {},
    body: { condition: { '>': [{ var: 'amount' }, 1000] } },
  }),
  'POST /v1/payment-links': async (_w, m) => ({
    params: {},
    body: { storeId: m.storeId, amount: 14_990, description: 'Kupa' },
  }),
  'POST /v1/dashboard/submerchants': async () => ({
    params: {},
    body: { name: 'Seller', iban: trIban(nextAccount()), holderName: 'Seller Ltd' },
  }),
}

/** The request a route gets when the catalog has no entry for it. */
export function defaultFixture(route: RouteInfo): Fixture {
  return { params: {}, ...(MUTATING.has(route.method) && route.body ? { body: {} } : {}) }
}

/** Sends a route's request as `actor`: signed for signed routes, the JWT for dashboard ones. */
export async function callAs(
  w: World,
  route: RouteInfo,
  actor: Actor | SubActor,
  fx: Fixture,
  params: Record<string, string> = fx.params,
): Promise<RawResponse> {
  const qs = fx.query ? `?${new URLSearchParams(fx.query).toString()}` : ''
  const path = fillPath(route.path, params) + qs
  const body =
    fx.body !== undefined
      ? JSON.stringify(fx.body)
      : MUTATING.has(route.method) && route.body
        ? '{}'
        : undefined
  if (route.cls === 'dashboard') {
    assert.ok('token' in actor, 'dashboard routes need a merchant actor')
    return rawRequest(w.h, {
      method: route.method,
      path,
      headers: {
        authorization: `Bearer ${await actor.token()}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body }),
    })
  }
  return signed(w.h, actor, { method: route.method, path, ...(body === undefined ? {} : { body }) })
}
