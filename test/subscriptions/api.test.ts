// Goal: the subscription endpoints' contract — create (defaults, card choice, trial, validation,
// Idempotency-Key, publicHash only on create), retrieval, the list with every filter and signed
// cursors, the charges list, tenancy and KYC gates. Method: signed HTTP as a merchant's server.
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { test } from 'node:test'
import { startTestApp } from '../helpers/app.ts'
import { CARDS, tokenize } from '../helpers/payments.ts'
import {
  DAY_MS,
  action,
  createSubscription,
  customerWithCard,
  reconcile,
  subscribed,
  type ErrorBody,
  type SubscriptionBody,
} from './_support.ts'

test('create: 201 with the whole subscription and a publicHash; GET has no publicHash', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const { customerId } = await customerWithCard(m.client)
  const res = await m.client.request<SubscriptionBody>('POST', '/v1/subscriptions', {
    body: {
      storeId: m.storeId,
      customerId,
      amountMinor: 9_990,
      currency: 'TRY',
      intervalCount: 3,
      intervalUnit: 'month',
      description: 'Gold plan',
      generateInvoices: true,
    },
  })
  assert.equal(res.status, 201, JSON.stringify(res.body))
  const s = res.body
  assert.match(s.id, /^sub_[0-9a-z]{24}$/)
  assert.match(s.publicHash ?? '', /^[A-Za-z0-9_-]{22}$/, '128 random bits, base64url')
  assert.equal(s.merchantId, m.merchantId)
  assert.equal(s.storeId, m.storeId)
  assert.equal(s.customerId, customerId)
  assert.equal(s.status, 'active')
  assert.equal(s.amountMinor, 9_990)
  assert.equal(s.currency, 'TRY')
  assert.equal(s.intervalCount, 3)
  assert.equal(s.intervalUnit, 'month')
  assert.equal(s.cycleNumber, 0)
  assert.equal(s.cardLast4, '6111', "the customer's default card")
  assert.equal(s.cardBrand, 'visa')
  assert.equal(s.cancelAtPeriodEnd, false)
  assert.equal(s.trialEndAt, null)
  assert.equal(s.description, 'Gold plan')
  assert.equal(s.generateInvoices, true)
  assert.match(s.createdAt, /Z$/)

  const got = await m.client.request<SubscriptionBody>('GET', `/v1/subscriptions/${s.id}`)
  assert.equal(got.status, 200)
  assert.equal('publicHash' in got.body, false)
  const { publicHash: _omitted, ...rest } = s
  assert.deepEqual(got.body, rest)
  // The bearer is stored only as its digest.
  const stored = await h.deps.db
    .selectFrom('subscriptions')
    .selectAll()
    .where('id', '=', s.id)
    .executeTakeFirstOrThrow()
  assert.equal(JSON.stringify(stored).includes(s.publicHash ?? '-'), false)
})

test('cardToken: one of the customer’s cards; another customer’s or an unattached token is 400', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const { customerId } = await customerWithCard(m.client)
  // A second card of the same customer, not the default.
  const second = await tokenize(m.client, CARDS.troy)
  await m.client.request('POST', `/v1/customers/${customerId}/cards`, {
    body: { cardToken: second },
  })
  const chosen = await createSubscription(m, customerId, { cardToken: second })
  assert.equal(chosen.cardLast4, '0001')
  assert.equal(chosen.cardBrand, 'troy')

  const other = await customerWithCard(m.client)
  const foreign = await m.client.request<ErrorBody>('POST', '/v1/subscriptions', {
    body: {
      storeId: m.storeId,
      customerId,
      amountMinor: 1000,
      currency: 'TRY',
      intervalCount: 1,
      intervalUnit: 'week',
      cardToken: other.cardToken,
    },
  })
  assert.equal(foreign.status, 400)
  assert.equal(foreign.body.code, 'SVC-VAL-3001')
  assert.equal(foreign.body.details?.[0]?.field, 'cardToken')

  const loose = await tokenize(m.client, CARDS.debit)
  const unattached = await m.client.request<ErrorBody>('POST', '/v1/subscriptions', {
    body: {
      storeId: m.storeId,
      customerId,
      amountMinor: 1000,
      currency: 'TRY',
      intervalCount: 1,
      intervalUnit: 'week',
      cardToken: loose,
    },
  })
  assert.equal(unattached.status, 400)

  // Another merchant's token does not exist for this one.
  const stranger = await h.newMerchant()
  const theirs = await tokenize(stranger.client, CARDS.frictionless)
  const cross = await m.client.request<ErrorBody>('POST', '/v1/subscriptions', {
    body: {
      storeId: m.storeId,
      customerId,
      amountMinor: 1000,
      currency: 'TRY',
      intervalCount: 1,
      intervalUnit: 'week',
      cardToken: theirs,
    },
  })
  assert.equal(cross.status, 404)
})

test('a customer without a default card needs a cardToken', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const customer = await m.client.request<{ id: string }>('POST', '/v1/customers', {
    body: { externalId: 'no-cards' },
  })
  const res = await m.client.request<ErrorBody>('POST', '/v1/subscriptions', {
    body: {
      storeId: m.storeId,
      customerId: customer.body.id,
      amountMinor: 1000,
      currency: 'TRY',
      intervalCount: 1,
      intervalUnit: 'month',
    },
  })
  assert.equal(res.status, 400)
  assert.equal(res.body.details?.[0]?.field, 'cardToken')
})

test('validation: 400 SVC-VAL-3001 naming the field', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const { customerId } = await customerWithCard(m.client)
  const base = {
    storeId: m.storeId,
    customerId,
    amountMinor: 1000,
    currency: 'TRY',
    intervalCount: 1,
    intervalUnit: 'month',
  }
  const past = new Date(h.clock.now().getTime() - DAY_MS).toISOString()
  const far = new Date(h.clock.now().getTime() + 800 * DAY_MS).toISOString()
  const cases: [Record<string, unknown>, string][] = [
    [{ currency: 'USD' }, 'currency'],
    [{ amountMinor: 99 }, 'amountMinor'],
    [{ amountMinor: 10.5 }, 'amountMinor'],
    [{ intervalUnit: 'fortnight' }, 'intervalUnit'],
    [{ intervalCount: 0 }, 'intervalCount'],
    [{ intervalCount: 13 }, 'intervalCount'],
    [{ intervalUnit: 'year', intervalCount: 2 }, 'intervalCount'],
    [{ trialEndAt: past }, 'trialEndAt'],
    [{ trialEndAt: far }, 'trialEndAt'],
    [{ trialEndAt: 'tomorrow' }, 'trialEndAt'],
    [{ surprise: true }, 'surprise'],
  ]
  for (const [patch, field] of cases) {
    const res = await m.client.request<ErrorBody>('POST', '/v1/subscriptions', {
      body: { ...base, ...patch },
    })
    assert.equal(res.status, 400, `${field}: ${JSON.stringify(res.body)}`)
    assert.equal(res.body.code, 'SVC-VAL-3001')
    assert.ok(
      JSON.stringify(res.body).includes(field),
      `${field} named: ${JSON.stringify(res.body)}`,
    )
  }
  for (const missing of ['storeId', 'customerId', 'amountMinor', 'intervalCount', 'intervalUnit']) {
    const body = Object.fromEntries(Object.entries(base).filter(([key]) => key !== missing))
    const res = await m.client.request<ErrorBody>('POST', '/v1/subscriptions', { body })
    assert.equal(res.status, 400, missing)
  }
  const cancel = await m.client.request<ErrorBody>('POST', '/v1/subscriptions/sub_x/cancel', {
    body: {},
  })
  assert.equal(cancel.status, 400, 'cancel needs atPeriodEnd')
})

test('Idempotency-Key: the same create replays the same subscription; another body is 409', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const { customerId } = await customerWithCard(m.client)
  const key = randomUUID()
  const body = {
    storeId: m.storeId,
    customerId,
    amountMinor: 5000,
    currency: 'TRY',
    intervalCount: 1,
    intervalUnit: 'month',
  }
  const a = await m.client.request<SubscriptionBody>('POST', '/v1/subscriptions', {
    body,
    idempotencyKey: key,
  })
  const b = await m.client.request<SubscriptionBody>('POST', '/v1/subscriptions', {
    body,
    idempotencyKey: key,
  })
  assert.equal(a.status, 201)
  assert.equal(b.status, 201)
  assert.deepEqual(b.body, a.body)
  const list = await m.client.request<{ items: unknown[] }>('GET', '/v1/subscriptions', {
    query: { customerId },
  })
  assert.equal(list.body.items.length, 1)
  const c = await m.client.request<ErrorBody>('POST', '/v1/subscriptions', {
    body: { ...body, amountMinor: 6000 },
    idempotencyKey: key,
  })
  assert.equal(c.status, 409)
  assert.equal(c.body.code, 'SVC-GW-2001')
})

test('list: newest first, every filter, signed cursors, exact item shape', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const store2 = await h.operator<{ storeId: string }>(
    'POST',
    `/operator/v1/merchants/${m.merchantId}/stores`,
  )
  assert.equal(store2.status, 201, JSON.stringify(store2.body))
  const a = await customerWithCard(m.client)
  const b = await customerWithCard(m.client)
  const made: SubscriptionBody[] = []
  for (let i = 0; i < 5; i++) {
    made.push(await createSubscription(m, i % 2 === 0 ? a.customerId : b.customerId))
    h.clock.advance(1000)
  }
  const onStore2 = await createSubscription(m, a.customerId, { storeId: store2.body.storeId })
  made.push(onStore2)
  await action(m, made[1]?.id ?? '', 'pause')

  type Page = { items: Record<string, unknown>[]; nextCursor: string | null }
  const all = await m.client.request<Page>('GET', '/v1/subscriptions', { query: { limit: 100 } })
  assert.equal(all.status, 200)
  assert.deepEqual(
    all.body.items.map((i) => i['id']),
    [...made].reverse().map((s) => s.id),
  )
  assert.deepEqual(Object.keys(all.body.items[0] ?? {}).sort(), [
    'amountMinor',
    'createdAt',
    'currency',
    'id',
    'intervalCount',
    'intervalUnit',
    'nextChargeAt',
    'status',
    'storeId',
  ])
  assert.equal(all.body.nextCursor, null)

  // Pages of two, following the cursor.
  const seen: unknown[] = []
  let cursor: string | null = null
  do {
    const page: { body: Page } = await m.client.request<Page>('GET', '/v1/subscriptions', {
      query: { limit: 2, ...(cursor ? { cursor } : {}) },
    })
    seen.push(...page.body.items.map((i) => i['id']))
    cursor = page.body.nextCursor
  } while (cursor)
  assert.deepEqual(
    seen,
    all.body.items.map((i) => i['id']),
  )

  const ids = async (query: Record<string, string | number>) =>
    (await m.client.request<Page>('GET', '/v1/subscriptions', { query })).body.items.map(
      (i) => i['id'],
    )
  assert.deepEqual(await ids({ customerId: b.customerId }), [made[3]?.id, made[1]?.id])
  assert.deepEqual(await ids({ storeId: store2.body.storeId }), [onStore2.id])
  assert.deepEqual(await ids({ status: 'paused' }), [made[1]?.id])
  assert.deepEqual(await ids({ from: made[3]?.createdAt ?? '', to: onStore2.createdAt }), [
    made[4]?.id,
    made[3]?.id,
  ])

  const tampered = await m.client.request<ErrorBody>('GET', '/v1/subscriptions', {
    query: { cursor: 'abc.def' },
  })
  assert.equal(tampered.status, 400)
  const badStatus = await m.client.request<ErrorBody>('GET', '/v1/subscriptions', {
    query: { status: 'sleeping' },
  })
  assert.equal(badStatus.status, 400)
  // Another merchant's cursor does not verify here.
  const other = await h.newMerchant()
  const { customerId: oc } = await customerWithCard(other.client)
  await createSubscription(other, oc)
  await createSubscription(other, oc)
  const theirs = await other.client.request<Page>('GET', '/v1/subscriptions', {
    query: { limit: 1 },
  })
  const stolen = await m.client.request<ErrorBody>('GET', '/v1/subscriptions', {
    query: { cursor: theirs.body.nextCursor ?? '' },
  })
  assert.equal(stolen.status, 400)
})

test('charges: newest first with a cursor; 404 for an unknown subscription', async (t) => {
  const h = await startTestApp(t)
  const { m, sub } = await subscribed(h, { extra: { intervalUnit: 'day' } })
  for (let i = 0; i < 3; i++) {
    await reconcile(m)
    h.clock.advance(DAY_MS + 1000)
  }
  type Page = { items: { cycleNumber: number }[]; nextCursor: string | null }
  const first = await m.client.request<Page>('GET', `/v1/subscriptions/${sub.id}/charges`, {
    query: { limit: 2 },
  })
  assert.deepEqual(
    first.body.items.map((c) => c.cycleNumber),
    [3, 2],
  )
  const second = await m.client.request<Page>('GET', `/v1/subscriptions/${sub.id}/charges`, {
    query: { limit: 2, cursor: first.body.nextCursor ?? '' },
  })
  assert.deepEqual(
    second.body.items.map((c) => c.cycleNumber),
    [1],
  )
  assert.equal(second.body.nextCursor, null)
  const missing = await m.client.request<ErrorBody>('GET', '/v1/subscriptions/sub_nope/charges')
  assert.equal(missing.status, 404)
})

test("tenancy: another merchant's subscription is 404 everywhere", async (t) => {
  const h = await startTestApp(t)
  const { sub } = await subscribed(h)
  const stranger = await h.newMerchant()
  const get = await stranger.client.request<ErrorBody>('GET', `/v1/subscriptions/${sub.id}`)
  assert.equal(get.status, 404)
  assert.equal(get.body.code, 'SVC-RES-3301')
  for (const verb of ['pause', 'resume', 'retry', 'charge-now']) {
    assert.equal((await action(stranger, sub.id, verb)).status, 404, verb)
  }
  assert.equal((await action(stranger, sub.id, 'cancel', { atPeriodEnd: false })).status, 404)
  const charges = await stranger.client.request('GET', `/v1/subscriptions/${sub.id}/charges`)
  assert.equal(charges.status, 404)
  const advance = await stranger.client.request(
    'POST',
    `/v1/sandbox/subscriptions/${sub.id}/advance`,
    {
      body: {},
    },
  )
  assert.equal(advance.status, 404)
  // Someone else's customer and store are not this merchant's either.
  const { customerId } = await customerWithCard(stranger.client)
  const { m } = await subscribed(h)
  const crossCustomer = await m.client.request<ErrorBody>('POST', '/v1/subscriptions', {
    body: {
      storeId: m.storeId,
      customerId,
      amountMinor: 1000,
      currency: 'TRY',
      intervalCount: 1,
      intervalUnit: 'month',
    },
  })
  assert.equal(crossCustomer.status, 404)
  const crossStore = await m.client.request<ErrorBody>('POST', '/v1/subscriptions', {
    body: {
      storeId: stranger.storeId,
      customerId: sub.customerId,
      amountMinor: 1000,
      currency: 'TRY',
      intervalCount: 1,
      intervalUnit: 'month',
    },
  })
  assert.equal(crossStore.status, 404)
})

test('KYC gates create, charge-now and resume (403 SVC-KYC-3101); pause and cancel stay allowed', async (t) => {
  const h = await startTestApp(t)
  const { m, customerId, sub } = await subscribed(h, {
    extra: { trialEndAt: new Date(h.clock.now().getTime() + DAY_MS).toISOString() },
  })
  await h.operator('PUT', `/operator/v1/merchants/${m.merchantId}/kyc`, { status: 'pending' })
  const create = await m.client.request<ErrorBody>('POST', '/v1/subscriptions', {
    body: {
      storeId: m.storeId,
      customerId,
      amountMinor: 1000,
      currency: 'TRY',
      intervalCount: 1,
      intervalUnit: 'month',
    },
  })
  assert.equal(create.status, 403)
  assert.equal(create.body.code, 'SVC-KYC-3101')
  assert.equal((await action(m, sub.id, 'charge-now')).status, 403)
  assert.equal((await action(m, sub.id, 'pause')).status, 200)
  assert.equal((await action(m, sub.id, 'resume')).status, 403)
  assert.equal((await action(m, sub.id, 'cancel', { atPeriodEnd: true })).status, 200)
})

test('the OpenAPI document lists every subscription endpoint', async (t) => {
  const h = await startTestApp(t)
  const doc = (await (await fetch(`${h.url}/openapi.json`)).json()) as {
    paths: Record<string, Record<string, unknown>>
  }
  const expected: [string, string][] = [
    ['/v1/subscriptions', 'post'],
    ['/v1/subscriptions', 'get'],
    ['/v1/subscriptions/{id}', 'get'],
    ['/v1/subscriptions/{id}/charges', 'get'],
    ['/v1/subscriptions/{id}/cancel', 'post'],
    ['/v1/subscriptions/{id}/pause', 'post'],
    ['/v1/subscriptions/{id}/resume', 'post'],
    ['/v1/subscriptions/{id}/retry', 'post'],
    ['/v1/subscriptions/{id}/charge-now', 'post'],
    ['/v1/public/subscriptions/{hash}', 'get'],
    ['/v1/public/subscriptions/{hash}/cancel', 'post'],
    ['/v1/public/subscriptions/{hash}/update-card-session', 'post'],
    ['/v1/sandbox/subscriptions/{id}/advance', 'post'],
  ]
  for (const [path, method] of expected) {
    assert.ok(doc.paths[path]?.[method], `${method.toUpperCase()} ${path}`)
  }
})
