// Goal: every rule of POST /v1/payments/sessions (spec + CONTRACT.md Other resources).
// Method: signed requests over HTTP against the real app and a fresh database.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { startTestApp } from '../helpers/app.ts'

const base = { currency: 'TRY', returnUrl: 'https://shop.example/return' }

test('a payment session is active for 30 minutes and points at the hosted page', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const res = await m.client.request<Record<string, unknown>>('POST', '/v1/payments/sessions', {
    body: { ...base, transactionId: 'order-1', amount: 15000, description: 'Kitap' },
  })
  assert.equal(res.status, 201)
  const body = res.body
  assert.equal(body['status'], 'active')
  assert.equal(body['amount'], 15000)
  assert.equal(body['currency'], 'TRY')
  assert.equal(body['merchantId'], m.merchantId)
  assert.equal(body['checkoutUrl'], `${h.config.checkoutUrl}/s/${String(body['sessionId'])}`)
  const ttl = Date.parse(String(body['expiresAt'])) - h.clock.now().getTime()
  assert.ok(ttl > 29 * 60_000 && ttl <= 30 * 60_000, `expiresAt ${String(body['expiresAt'])}`)
  assert.match(String(body['expiresAt']), /Z$/)
})

test('the transactionId fences session creation', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const body = { ...base, transactionId: 'order-fence', amount: 1000 }
  const first = await m.client.request<{ sessionId: string }>('POST', '/v1/payments/sessions', {
    body,
  })
  const again = await m.client.request<{ sessionId: string }>('POST', '/v1/payments/sessions', {
    body,
  })
  assert.equal(first.status, 201)
  assert.equal(again.status, 200)
  assert.equal(again.body.sessionId, first.body.sessionId)
  const other = await m.client.request<{ code: string }>('POST', '/v1/payments/sessions', {
    body: { ...body, amount: 2000 },
  })
  assert.equal(other.status, 409)
  assert.equal(other.body.code, 'SVC-RES-3302')
  // Another merchant may use the same transactionId.
  const m2 = await h.newMerchant()
  assert.equal((await m2.client.request('POST', '/v1/payments/sessions', { body })).status, 201)
})

test('session validation rules answer 400 SVC-VAL-3001 and create nothing', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const sub = await h.operator<{ submerchantId: string }>(
    'POST',
    `/operator/v1/merchants/${m.merchantId}/submerchants`,
    { name: 'Sub', iban: 'TR330006100519786457841326', holderName: 'Sub Ltd' },
  )
  const other = await h.newMerchant()
  const foreignSub = await h.operator<{ submerchantId: string }>(
    'POST',
    `/operator/v1/merchants/${other.merchantId}/submerchants`,
    { name: 'Foreign', iban: 'TR330006100519786457841326', holderName: 'Foreign Ltd' },
  )
  const subId = sub.body.submerchantId
  const cases: [string, Record<string, unknown>][] = [
    ['amount below 100', { amount: 99 }],
    ['amount missing in payment mode', {}],
    ['amount missing in qr mode', { mode: 'qr' }],
    ['amount over the maximum', { amount: 10_000_000_001 }],
    ['amount not an integer', { amount: 100.5 }],
    ['amount as a string', { amount: '1000' }],
    ['currency other than TRY', { amount: 1000, currency: 'USD' }],
    ['amount in card_update_only', { mode: 'card_update_only', amount: 1000, customerId: 'cus_x' }],
    ['card_update_only without customer', { mode: 'card_update_only' }],
    ['unknown customer', { amount: 1000, customerId: 'cus_unknown' }],
    ['unknown mode', { amount: 1000, mode: 'crypto' }],
    [
      'splits in qr mode',
      { amount: 1000, mode: 'qr', splits: [{ submerchantId: subId, amountMinor: 100 }] },
    ],
    [
      'splits over the amount',
      { amount: 1000, splits: [{ submerchantId: subId, amountMinor: 1001 }] },
    ],
    [
      'duplicate split',
      {
        amount: 1000,
        splits: [
          { submerchantId: subId, amountMinor: 100 },
          { submerchantId: subId, amountMinor: 100 },
        ],
      },
    ],
    [
      'split of a foreign submerchant',
      {
        amount: 1000,
        splits: [{ submerchantId: foreignSub.body.submerchantId, amountMinor: 100 }],
      },
    ],
    ['zero split', { amount: 1000, splits: [{ submerchantId: subId, amountMinor: 0 }] }],
    ['returnUrl not a URL', { amount: 1000, returnUrl: 'not a url' }],
    ['unknown field', { amount: 1000, status: 'completed' }],
    ['metadata value too long', { amount: 1000, metadata: { note: 'x'.repeat(501) } }],
    ['metadata key too long', { amount: 1000, metadata: { ['k'.repeat(41)]: 'v' } }],
    ['metadata with a number value', { amount: 1000, metadata: { n: 1 } }],
    [
      'metadata with 51 keys',
      {
        amount: 1000,
        metadata: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, 'v'])),
      },
    ],
  ]
  for (const [name, patch] of cases) {
    const res = await m.client.request<{ code: string; details?: unknown[] }>(
      'POST',
      '/v1/payments/sessions',
      { body: { ...base, transactionId: `bad-${name}`, ...patch } },
    )
    assert.equal(res.status, 400, `${name}: ${JSON.stringify(res.body)}`)
    assert.equal(res.body.code, 'SVC-VAL-3001', name)
    // Nothing was created: the same transactionId with a valid body still makes a new session.
    const ok = await m.client.request('POST', '/v1/payments/sessions', {
      body: { ...base, transactionId: `bad-${name}`, amount: 1000 },
    })
    assert.equal(ok.status, 201, `${name} left a session behind`)
  }
})

test('valid splits, metadata and card_update_only sessions are accepted', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const sub = await h.operator<{ submerchantId: string }>(
    'POST',
    `/operator/v1/merchants/${m.merchantId}/submerchants`,
    { name: 'Sub', iban: 'TR330006100519786457841326', holderName: 'Sub Ltd' },
  )
  const split = await m.client.request<{ metadata: Record<string, string> }>(
    'POST',
    '/v1/payments/sessions',
    {
      body: {
        ...base,
        transactionId: 'split-1',
        amount: 10000,
        splits: [{ submerchantId: sub.body.submerchantId, amountMinor: 10000 }],
        metadata: { orderNo: '42', kanal: 'mağaza' },
      },
    },
  )
  assert.equal(split.status, 201)
  assert.deepEqual(split.body.metadata, { orderNo: '42', kanal: 'mağaza' })
  const customer = await m.client.request<{ id: string }>('POST', '/v1/customers', {
    body: { externalId: 'c-1' },
  })
  const update = await m.client.request<{ amount: null; mode: string }>(
    'POST',
    '/v1/payments/sessions',
    {
      body: {
        ...base,
        transactionId: 'upd-1',
        mode: 'card_update_only',
        customerId: customer.body.id,
      },
    },
  )
  assert.equal(update.status, 201)
  assert.equal(update.body.amount, null)
  assert.equal(update.body.mode, 'card_update_only')
})

test('sessions need approved KYC and a merchant key', async (t) => {
  const h = await startTestApp(t)
  const pending = await h.newMerchant({ kycStatus: 'pending' })
  const res = await pending.client.request<{ code: string }>('POST', '/v1/payments/sessions', {
    body: { ...base, transactionId: 'kyc-1', amount: 1000 },
  })
  assert.equal(res.status, 403)
  assert.equal(res.body.code, 'SVC-KYC-3101')

  const m = await h.newMerchant()
  const sub = await h.operator<{ publicKey: string; secretKey: string }>(
    'POST',
    `/operator/v1/merchants/${m.merchantId}/submerchants`,
    { name: 'Sub', iban: 'TR330006100519786457841326', holderName: 'Sub Ltd' },
  )
  const subClient = h.clientFor(sub.body)
  const scoped = await subClient.request<{ code: string }>('POST', '/v1/payments/sessions', {
    body: { ...base, transactionId: 'scope-1', amount: 1000 },
  })
  assert.equal(scoped.status, 403)
  assert.equal(scoped.body.code, 'SVC-AUTH-3201')
})
