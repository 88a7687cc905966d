// Goal: creating, reading and listing invoices: the money rules (line totals, their sum) with
// field details, the store/customer/expiry checks, Idempotency-Key, tenancy, the public link
// stored only as a digest, keyset paging. Method: signed HTTP against the real app.
import assert from 'node:assert/strict'
import { createHash, randomUUID } from 'node:crypto'
import { test } from 'node:test'
import { startTestApp } from '../helpers/app.ts'
import {
  LINES,
  TOTAL,
  createInvoice,
  eventTypes,
  getInvoice,
  invoiceBody,
  type ErrorBody,
  type InvoiceBody,
} from './_support.ts'

test('create answers 201 with a draft invoice, its link and every field', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const customer = await m.client.request<{ id: string }>('POST', '/v1/customers', {
    body: { externalId: `ext-${randomUUID()}` },
  })
  const invoice = await createInvoice(m, {
    customerId: customer.body.id,
    dueDate: '2027-02-28T09:00:00Z',
    expiresAt: '2030-01-01T00:00:00Z',
    notes: 'Teşekkürler!\nİyi okumalar.',
  })
  assert.match(invoice.id, /^inv_[0-9a-z]{24}$/)
  assert.equal(invoice.status, 'draft')
  assert.equal(invoice.merchantId, m.merchantId)
  assert.equal(invoice.storeId, m.storeId)
  assert.equal(invoice.customerId, customer.body.id)
  assert.equal(invoice.amountMinor, TOTAL)
  assert.equal(invoice.currency, 'TRY')
  assert.deepEqual(invoice.lineItems, LINES)
  assert.equal(invoice.buyerEmail, 'ayse@example.com')
  assert.equal(invoice.buyerName, 'Ayşe Yılmaz')
  assert.equal(invoice.dueDate, '2027-02-28T09:00:00.000Z')
  assert.equal(invoice.expiresAt, '2030-01-01T00:00:00.000Z')
  assert.equal(invoice.notes, 'Teşekkürler!\nİyi okumalar.')
  // 128 random bits, base64url.
  assert.match(invoice.publicHash, /^[A-Za-z0-9_-]{22}$/)
  assert.equal(invoice.url, `${h.config.checkoutUrl}/invoice/${invoice.publicHash}`)
  for (const field of ['sentAt', 'activatedAt', 'viewedAt', 'paidAt', 'cancelledAt'] as const) {
    assert.equal(invoice[field], null)
  }
  assert.deepEqual(await eventTypes(h, m.merchantId, invoice.id), ['invoice.created'])
  // GET returns the same invoice, link included.
  assert.deepEqual(await getInvoice(m, invoice.id), invoice)
})

test('the link is stored as its SHA-256 (and sealed), never in the clear', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const invoice = await createInvoice(m)
  const row = await h.deps.db
    .selectFrom('invoices')
    .selectAll()
    .where('id', '=', invoice.id)
    .executeTakeFirstOrThrow()
  assert.equal(
    row.public_hash_sha256,
    createHash('sha256').update(invoice.publicHash).digest('hex'),
  )
  assert.ok(!JSON.stringify(row).includes(invoice.publicHash))
  const other = await createInvoice(m)
  assert.notEqual(other.publicHash, invoice.publicHash)
})

test('a line total other than qty × unit price is 400 with the field in details', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const lines = [LINES[0], { ...LINES[1], lineTotalMinor: 33_457 }]
  const res = await m.client.request<ErrorBody>('POST', '/v1/invoices', {
    body: invoiceBody(m, { lineItems: lines, amountMinor: 90_000 + 33_457 }),
  })
  assert.equal(res.status, 400)
  assert.equal(res.body.code, 'SVC-VAL-3001')
  assert.deepEqual(res.body.details, [
    { field: 'lineItems[1].lineTotalMinor', reason: 'must equal qty × unitPriceMinor (33456)' },
  ])
})

test('an amount other than the sum of the line totals is 400 on amountMinor', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const res = await m.client.request<ErrorBody>('POST', '/v1/invoices', {
    body: invoiceBody(m, { amountMinor: TOTAL + 1 }),
  })
  assert.equal(res.status, 400)
  assert.equal(res.body.code, 'SVC-VAL-3001')
  assert.deepEqual(res.body.details, [
    { field: 'amountMinor', reason: `must equal the sum of the line totals (${TOTAL})` },
  ])
})

test('every money error is reported at once', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const lines = [
    { name: 'a', qty: 3, unitPriceMinor: 100, lineTotalMinor: 301 },
    { name: 'b', qty: 1, unitPriceMinor: 500, lineTotalMinor: 500 },
    { name: 'c', qty: 7, unitPriceMinor: 3, lineTotalMinor: 20 },
  ]
  const res = await m.client.request<ErrorBody>('POST', '/v1/invoices', {
    body: invoiceBody(m, { lineItems: lines, amountMinor: 800 }),
  })
  assert.equal(res.status, 400)
  assert.deepEqual(
    res.body.details?.map((d) => d.field),
    ['lineItems[0].lineTotalMinor', 'lineItems[2].lineTotalMinor', 'amountMinor'],
  )
})

test('large amounts are checked exactly (qty × unit price near the limit)', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const line = {
    name: 'Makine',
    qty: 99_999,
    unitPriceMinor: 100_001,
    lineTotalMinor: 9_999_999_999,
  }
  const ok = await createInvoice(m, { lineItems: [line], amountMinor: 9_999_999_999 })
  assert.equal(ok.amountMinor, 9_999_999_999)
  const off = await m.client.request<ErrorBody>('POST', '/v1/invoices', {
    body: invoiceBody(m, {
      lineItems: [{ ...line, lineTotalMinor: 9_999_999_998 }],
      amountMinor: 9_999_999_998,
    }),
  })
  assert.equal(off.status, 400)
  assert.equal(off.body.details?.[0]?.field, 'lineItems[0].lineTotalMinor')
})

test('shape errors are 400: currency, unknown fields, no lines, bad email, tiny amount', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const bad: Record<string, unknown>[] = [
    { currency: 'USD' },
    { surprise: true },
    { lineItems: [] },
    { buyerEmail: 'not-an-email' },
    { lineItems: [{ ...LINES[0], qty: 0 }] },
    { lineItems: [{ ...LINES[0], qty: 1.5 }] },
    { lineItems: [{ ...LINES[0], extra: 1 }] },
    { amountMinor: '123456' },
    {
      amountMinor: 99,
      lineItems: [{ name: 'x', qty: 1, unitPriceMinor: 99, lineTotalMinor: 99 }],
    },
    { dueDate: 'tomorrow' },
  ]
  for (const extra of bad) {
    const res = await m.client.request<ErrorBody>('POST', '/v1/invoices', {
      body: invoiceBody(m, extra),
    })
    assert.equal(res.status, 400, JSON.stringify(extra))
    assert.equal(res.body.code, 'SVC-VAL-3001', JSON.stringify(extra))
  }
})

test('a link expiry in the past is 400; an unknown customer is 400', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const past = new Date(h.clock.now().getTime() - 1000).toISOString()
  const expired = await m.client.request<ErrorBody>('POST', '/v1/invoices', {
    body: invoiceBody(m, { expiresAt: past }),
  })
  assert.equal(expired.status, 400)
  assert.equal(expired.body.details?.[0]?.field, 'expiresAt')
  const customer = await m.client.request<ErrorBody>('POST', '/v1/invoices', {
    body: invoiceBody(m, { customerId: 'cus_doesnotexist' }),
  })
  assert.equal(customer.status, 400)
  assert.equal(customer.body.details?.[0]?.field, 'customerId')
})

test("another merchant's store and invoices are 404", async (t) => {
  const h = await startTestApp(t)
  const a = await h.newMerchant()
  const b = await h.newMerchant()
  const store = await b.client.request<ErrorBody>('POST', '/v1/invoices', {
    body: invoiceBody(b, { storeId: a.storeId }),
  })
  assert.equal(store.status, 404)
  assert.equal(store.body.code, 'SVC-RES-3301')
  const invoice = await createInvoice(a)
  for (const [method, path] of [
    ['GET', `/v1/invoices/${invoice.id}`],
    ['GET', `/v1/invoices/${invoice.id}/pdf`],
    ['POST', `/v1/invoices/${invoice.id}/send`],
    ['POST', `/v1/invoices/${invoice.id}/activate`],
    ['POST', `/v1/invoices/${invoice.id}/cancel`],
  ] as const) {
    const res = await b.client.request<ErrorBody>(
      method,
      path,
      method === 'POST' ? { body: {} } : {},
    )
    assert.equal(res.status, 404, path)
    assert.equal(res.body.code, 'SVC-RES-3301', path)
  }
  const missing = await a.client.request<ErrorBody>('GET', '/v1/invoices/inv_nope')
  assert.equal(missing.status, 404)
})

test('Idempotency-Key: a replay returns the same invoice; another body is 409', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const key = randomUUID()
  const first = await m.client.request<InvoiceBody>('POST', '/v1/invoices', {
    body: invoiceBody(m),
    idempotencyKey: key,
  })
  assert.equal(first.status, 201)
  const again = await m.client.request<InvoiceBody>('POST', '/v1/invoices', {
    body: invoiceBody(m),
    idempotencyKey: key,
  })
  assert.equal(again.status, 201)
  assert.equal(again.body.id, first.body.id)
  assert.equal(again.body.publicHash, first.body.publicHash)
  const other = await m.client.request<ErrorBody>('POST', '/v1/invoices', {
    body: invoiceBody(m, { buyerName: 'Başkası' }),
    idempotencyKey: key,
  })
  assert.equal(other.status, 409)
  assert.equal(other.body.code, 'SVC-GW-2001')
  const count = await h.deps.db
    .selectFrom('invoices')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('merchant_id', '=', m.merchantId)
    .executeTakeFirstOrThrow()
  assert.equal(count.n, 1)
})

test('list: newest first, keyset pages, status and store filters, a tampered cursor is 400', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const ids: string[] = []
  for (let i = 0; i < 5; i++) {
    ids.push((await createInvoice(m)).id)
    h.clock.advance(1000)
  }
  const activated = ids[1] ?? ''
  assert.equal(
    (await m.client.request('POST', `/v1/invoices/${activated}/activate`, { body: {} })).status,
    200,
  )
  const seen: string[] = []
  let cursor: string | undefined
  for (let page = 0; page < 5; page++) {
    const res = await m.client.request<{
      items: { id: string; storeId: string; status: string; amountMinor: number }[]
      nextCursor: string | null
    }>('GET', '/v1/invoices', { query: { limit: '2', ...(cursor ? { cursor } : {}) } })
    assert.equal(res.status, 200, JSON.stringify(res.body))
    assert.ok(res.body.items.length <= 2)
    for (const item of res.body.items) {
      assert.deepEqual(Object.keys(item).sort(), [
        'amountMinor',
        'createdAt',
        'currency',
        'id',
        'status',
        'storeId',
      ])
      seen.push(item.id)
    }
    if (!res.body.nextCursor) break
    cursor = res.body.nextCursor
  }
  assert.deepEqual(seen, [...ids].reverse())

  const drafts = await m.client.request<{ items: { id: string }[] }>('GET', '/v1/invoices', {
    query: { status: 'activated' },
  })
  assert.deepEqual(
    drafts.body.items.map((i) => i.id),
    [activated],
  )
  const byStore = await m.client.request<{ items: unknown[] }>('GET', '/v1/invoices', {
    query: { storeId: 'sto_other' },
  })
  assert.deepEqual(byStore.body.items, [])

  const first = await m.client.request<{ nextCursor: string }>('GET', '/v1/invoices', {
    query: { limit: '1' },
  })
  const tampered = `${first.body.nextCursor.slice(0, -2)}xx`
  const bad = await m.client.request<ErrorBody>('GET', '/v1/invoices', {
    query: { cursor: tampered },
  })
  assert.equal(bad.status, 400)
  assert.equal(bad.body.code, 'SVC-VAL-3001')
  // Another merchant's cursor does not verify here either.
  const other = await h.newMerchant()
  const foreign = await other.client.request<ErrorBody>('GET', '/v1/invoices', {
    query: { cursor: first.body.nextCursor },
  })
  assert.equal(foreign.status, 400)
  const tooMany = await m.client.request<ErrorBody>('GET', '/v1/invoices', {
    query: { limit: '101' },
  })
  assert.equal(tooMany.status, 400)
})
