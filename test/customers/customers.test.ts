// Goal: the customer resource of the spec: create, read, partial update, soft delete, the list
// with filters and signed keyset cursors, validation, uniqueness and tenancy. Method: signed HTTP.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { eventsForResource } from '../../src/modules/events/index.ts'
import { assertCustomerExists, getCustomer } from '../../src/modules/customers/index.ts'
import { startTestApp } from '../helpers/app.ts'
import { createCustomer, type CustomerBody, type ErrorBody } from './_support.ts'

const IBAN = 'TR330006100519786457841326'

test('create returns 201 with the whole customer; GET returns the same', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const res = await m.client.request<CustomerBody>('POST', '/v1/customers', {
    body: {
      externalId: 'crm-1',
      email: 'Ayse.Yilmaz@Example.com',
      phone: '+90 532 123 45 67',
      name: 'Ayşe Yılmaz',
      extraData: { tier: 'gold', tags: ['a', 'b'], nested: { n: 1, ok: true, none: null } },
    },
  })
  assert.equal(res.status, 201, JSON.stringify(res.body))
  const c = res.body
  assert.match(c.id, /^cus_[0-9a-z]{24}$/)
  assert.equal(c.merchantId, m.merchantId)
  assert.equal(c.externalId, 'crm-1')
  assert.equal(c.email, 'Ayse.Yilmaz@Example.com', 'the email is kept as sent')
  assert.equal(c.phone, '+905321234567', 'the phone is normalised to E.164')
  assert.equal(c.name, 'Ayşe Yılmaz')
  assert.deepEqual(c.extraData, {
    tier: 'gold',
    tags: ['a', 'b'],
    nested: { n: 1, ok: true, none: null },
  })
  assert.match(c.createdAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
  assert.equal(c.updatedAt, c.createdAt)

  const got = await m.client.request<CustomerBody>('GET', `/v1/customers/${c.id}`)
  assert.equal(got.status, 200)
  assert.deepEqual(got.body, c)
  const events = await eventsForResource(h.deps.db, m.merchantId, c.id)
  assert.deepEqual(
    events.map((e) => e.type),
    ['customer.created'],
  )
})

test('only externalId is required; the optional fields default to null and {}', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const c = await createCustomer(m.client, { externalId: 'only-ext' })
  assert.equal(c.email, null)
  assert.equal(c.phone, null)
  assert.equal(c.name, null)
  assert.deepEqual(c.extraData, {})
})

test('validation: 400 SVC-VAL-3001 with the failing field in details', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const cases: [Record<string, unknown>, string][] = [
    [{}, 'externalId'],
    [{ externalId: '' }, 'externalId'],
    [{ externalId: 'x'.repeat(129) }, 'externalId'],
    [{ externalId: 'a\u0000b' }, 'externalId'],
    [{ externalId: 'e1', email: 'not-an-email' }, 'email'],
    [{ externalId: 'e1', email: `${'a'.repeat(250)}@x.com` }, 'email'],
    [{ externalId: 'e1', phone: '05321234567' }, 'phone'],
    [{ externalId: 'e1', phone: '+14155552671' }, 'phone'],
    [{ externalId: 'e1', phone: '+90532123456' }, 'phone'],
    [{ externalId: 'e1', phone: '+90 532 123 45 67 ext 5' }, 'phone'],
    [{ externalId: 'e1', name: '' }, 'name'],
    [{ externalId: 'e1', name: 'n'.repeat(201) }, 'name'],
    [{ externalId: 'e1', extraData: 'text' }, 'extraData'],
    [{ externalId: 'e1', extraData: [1, 2] }, 'extraData'],
    [
      {
        externalId: 'e1',
        extraData: Object.fromEntries([...Array(51).keys()].map((i) => [`k${i}`, i])),
      },
      'extraData',
    ],
    [{ externalId: 'e1', extraData: { big: 'x'.repeat(16 * 1024) } }, 'extraData'],
    [{ externalId: 'e1', extraData: { s: 'nul\u0000inside' } }, 'extraData'],
    [
      { externalId: 'e1', extraData: { a: { b: { c: { d: { e: { f: { g: { h: 1 } } } } } } } } },
      'extraData',
    ],
    [{ externalId: 'e1', unknown: 1 }, 'unknown'],
    [{ externalId: 42 }, 'externalId'],
  ]
  for (const [body, field] of cases) {
    const res = await m.client.request<ErrorBody>('POST', '/v1/customers', { body })
    assert.equal(res.status, 400, `${JSON.stringify(body).slice(0, 80)} → ${res.status}`)
    assert.equal(res.body.code, 'SVC-VAL-3001')
    assert.ok(
      res.body.details?.some((d) => d.field === field),
      `${field}: ${JSON.stringify(res.body.details)}`,
    )
  }
  // Seven levels under the root and 50 keys are still fine.
  const ok = await createCustomer(m.client, {
    extraData: {
      a: { b: { c: { d: { e: { f: { g: 1 } } } } } },
      ...Object.fromEntries([...Array(49).keys()].map((i) => [`k${i}`, i])),
    },
  })
  assert.equal(Object.keys(ok.extraData).length, 50)
  // Nothing was stored by the refused requests.
  const list = await m.client.request<{ items: unknown[] }>('GET', '/v1/customers')
  assert.equal(list.body.items.length, 1)
})

test('externalId and email are unique per merchant (email case-insensitively): 409 SVC-RES-3302', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const other = await h.newMerchant()
  await createCustomer(m.client, { externalId: 'dup', email: 'dup@example.com' })

  const sameExt = await m.client.request<ErrorBody>('POST', '/v1/customers', {
    body: { externalId: 'dup' },
  })
  assert.equal(sameExt.status, 409)
  assert.equal(sameExt.body.code, 'SVC-RES-3302')
  assert.deepEqual(sameExt.body.details?.[0]?.field, 'externalId')

  const sameEmail = await m.client.request<ErrorBody>('POST', '/v1/customers', {
    body: { externalId: 'dup-2', email: 'DUP@Example.COM' },
  })
  assert.equal(sameEmail.status, 409)
  assert.equal(sameEmail.body.code, 'SVC-RES-3302')
  assert.deepEqual(sameEmail.body.details?.[0]?.field, 'email')

  // Customers without an email do not collide; another merchant has its own namespace.
  await createCustomer(m.client, { externalId: 'no-mail-1' })
  await createCustomer(m.client, { externalId: 'no-mail-2' })
  await createCustomer(other.client, { externalId: 'dup', email: 'dup@example.com' })
})

test('PUT changes only the fields sent; null clears; extraData replaces; uniqueness holds', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const c = await createCustomer(m.client, {
    externalId: 'put-1',
    email: 'put@example.com',
    phone: '+905321234567',
    name: 'Put Person',
    extraData: { a: 1, b: 2 },
  })
  await createCustomer(m.client, { externalId: 'put-2', email: 'taken@example.com' })
  const put = (body: Record<string, unknown>) =>
    m.client.request<CustomerBody & ErrorBody>('PUT', `/v1/customers/${c.id}`, { body })

  h.clock.advance(1000)
  const named = await put({ name: 'New Name' })
  assert.equal(named.status, 200, JSON.stringify(named.body))
  assert.equal(named.body.name, 'New Name')
  assert.equal(named.body.email, 'put@example.com')
  assert.equal(named.body.phone, '+905321234567')
  assert.deepEqual(named.body.extraData, { a: 1, b: 2 })
  assert.equal(named.body.externalId, 'put-1')
  assert.equal(named.body.createdAt, c.createdAt)
  assert.ok(named.body.updatedAt > c.updatedAt)

  const replaced = await put({ extraData: { c: 3 }, phone: '+90 (212) 123-45-67' })
  assert.equal(replaced.status, 200)
  assert.deepEqual(replaced.body.extraData, { c: 3 })
  assert.equal(replaced.body.phone, '+902121234567')

  const cleared = await put({ email: null, phone: null, name: null })
  assert.equal(cleared.status, 200)
  assert.equal(cleared.body.email, null)
  assert.equal(cleared.body.phone, null)
  assert.equal(cleared.body.name, null)
  assert.deepEqual(cleared.body.extraData, { c: 3 })

  const nothing = await put({})
  assert.equal(nothing.status, 200)
  assert.equal(nothing.body.updatedAt, cleared.body.updatedAt, 'an empty PUT changes nothing')

  const taken = await put({ email: 'TAKEN@example.com' })
  assert.equal(taken.status, 409)
  assert.equal(taken.body.code, 'SVC-RES-3302')
  // Its own email in another case is no conflict.
  assert.equal((await put({ email: 'mine@example.com' })).status, 200)
  assert.equal((await put({ email: 'MINE@example.com' })).body.email, 'MINE@example.com')

  for (const [body, field] of [
    [{ externalId: 'changed' }, 'externalId'],
    [{ phone: '+1 415 555 2671' }, 'phone'],
    [{ email: 'nope' }, 'email'],
    [{ extraData: null }, 'extraData'],
  ] as const) {
    const res = await put(body)
    assert.equal(res.status, 400, JSON.stringify(body))
    assert.equal(res.body.code, 'SVC-VAL-3001')
    assert.ok(
      res.body.details?.some((d) => d.field === field),
      JSON.stringify(res.body),
    )
  }
  const final = await m.client.request<CustomerBody>('GET', `/v1/customers/${c.id}`)
  assert.equal(final.body.externalId, 'put-1')
  assert.deepEqual(final.body.extraData, { c: 3 })
  const events = await eventsForResource(h.deps.db, m.merchantId, c.id)
  assert.deepEqual(
    events.map((e) => e.type),
    ['customer.created', ...Array<string>(5).fill('customer.updated')],
  )
})

test('DELETE is a soft delete: 204, then 404 everywhere, and externalId and email are free again', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const c = await createCustomer(m.client, { externalId: 'gone', email: 'gone@example.com' })
  const del = await m.client.request('DELETE', `/v1/customers/${c.id}`)
  assert.equal(del.status, 204)
  assert.equal(del.headers.get('content-length') ?? '0', '0')

  for (const [method, path, body] of [
    ['GET', `/v1/customers/${c.id}`, undefined],
    ['PUT', `/v1/customers/${c.id}`, { name: 'x' }],
    ['DELETE', `/v1/customers/${c.id}`, undefined],
    ['GET', `/v1/customers/${c.id}/cards`, undefined],
    ['GET', `/v1/customers/${c.id}/cards/default`, undefined],
    ['POST', `/v1/customers/${c.id}/cards`, { cardToken: 'tok_0000' }],
    ['DELETE', `/v1/customers/${c.id}/cards/cuc_0000`, undefined],
  ] as const) {
    const res = await m.client.request<ErrorBody>(method, path, body ? { body } : {})
    assert.equal(res.status, 404, `${method} ${path}`)
    assert.equal(res.body.code, 'SVC-RES-3301')
  }
  const list = await m.client.request<{ items: { id: string }[] }>('GET', '/v1/customers')
  assert.equal(list.body.items.length, 0)
  await assert.rejects(getCustomer(h.deps, m.merchantId, c.id), { code: 'SVC-RES-3301' })
  await assert.rejects(assertCustomerExists(h.deps, m.merchantId, c.id), { status: 404 })

  const again = await createCustomer(m.client, { externalId: 'gone', email: 'GONE@example.com' })
  assert.notEqual(again.id, c.id)
  assert.equal(again.externalId, 'gone')
  const events = await eventsForResource(h.deps.db, m.merchantId, c.id)
  assert.deepEqual(
    events.map((e) => e.type),
    ['customer.created', 'customer.deleted'],
  )
})

test("another merchant's customer is 404 SVC-RES-3301 on every customer route", async (t) => {
  const h = await startTestApp(t)
  const owner = await h.newMerchant()
  const stranger = await h.newMerchant()
  const c = await createCustomer(owner.client, { externalId: 'mine' })
  for (const [method, path, body] of [
    ['GET', `/v1/customers/${c.id}`, undefined],
    ['PUT', `/v1/customers/${c.id}`, { name: 'taken over' }],
    ['DELETE', `/v1/customers/${c.id}`, undefined],
  ] as const) {
    const res = await stranger.client.request<ErrorBody>(method, path, body ? { body } : {})
    assert.equal(res.status, 404, `${method} ${path}`)
    assert.equal(res.body.code, 'SVC-RES-3301')
  }
  const list = await stranger.client.request<{ items: unknown[] }>('GET', '/v1/customers')
  assert.deepEqual(list.body.items, [])
  await assert.rejects(assertCustomerExists(h.deps, stranger.merchantId, c.id), { status: 404 })
  await assertCustomerExists(h.deps, owner.merchantId, c.id)
  const still = await owner.client.request<CustomerBody>('GET', `/v1/customers/${c.id}`)
  assert.equal(still.body.name, null)
})

test('a submerchant key may not use customer routes (403 SVC-AUTH-3201)', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const created = await h.operator<{ publicKey: string; secretKey: string }>(
    'POST',
    `/operator/v1/merchants/${m.merchantId}/submerchants`,
    { name: 'Sub', iban: IBAN, holderName: 'Sub Ltd' },
  )
  assert.equal(created.status, 201)
  const sub = h.clientFor(created.body)
  for (const [method, path, body] of [
    ['POST', '/v1/customers', { externalId: 'sub-1' }],
    ['GET', '/v1/customers', undefined],
  ] as const) {
    const res = await sub.request<ErrorBody>(method, path, body ? { body } : {})
    assert.equal(res.status, 403, `${method} ${path}`)
    assert.equal(res.body.code, 'SVC-AUTH-3201')
  }
})

test('the list pages newest first over 45 customers with limit 7: each exactly once', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const created: string[] = []
  for (let i = 0; i < 45; i++) {
    // Every third customer shares its creation millisecond with the previous one: the id
    // breaks the tie in the keyset.
    if (i % 3 !== 0) h.clock.advance(1)
    created.push((await createCustomer(m.client, { externalId: `page-${i}` })).id)
  }
  const seen: string[] = []
  let cursor: string | null = null
  let pages = 0
  do {
    const res: { status: number; body: { items: { id: string }[]; nextCursor: string | null } } =
      await m.client.request('GET', '/v1/customers', {
        query: { limit: 7, ...(cursor ? { cursor } : {}) },
      })
    assert.equal(res.status, 200)
    assert.ok(res.body.items.length <= 7)
    seen.push(...res.body.items.map((i) => i.id))
    cursor = res.body.nextCursor
    pages++
  } while (cursor)
  assert.equal(pages, 7)
  assert.equal(seen.length, 45)
  assert.equal(new Set(seen).size, 45)
  assert.deepEqual(new Set(seen), new Set(created))
  // Newest first: the last one created is the first one listed.
  assert.equal(seen[0], created.at(-1))
  assert.equal(seen.at(-1), created[0])
})

test('list items carry id, externalId, email, name, createdAt; default limit 20, max 100', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  for (let i = 0; i < 21; i++) await createCustomer(m.client, { externalId: `lim-${i}` })
  const c = await createCustomer(m.client, {
    externalId: 'shape',
    email: 'shape@example.com',
    name: 'Shape',
    phone: '+905321234567',
    extraData: { secret: 'not listed' },
  })
  const res = await m.client.request<{ items: Record<string, unknown>[]; nextCursor: string }>(
    'GET',
    '/v1/customers',
  )
  assert.equal(res.status, 200)
  assert.equal(res.body.items.length, 20)
  assert.equal(typeof res.body.nextCursor, 'string')
  assert.deepEqual(res.body.items[0], {
    id: c.id,
    externalId: 'shape',
    email: 'shape@example.com',
    name: 'Shape',
    createdAt: c.createdAt,
  })
  const all = await m.client.request<{ items: unknown[]; nextCursor: null }>(
    'GET',
    '/v1/customers',
    {
      query: { limit: 100 },
    },
  )
  assert.equal(all.body.items.length, 22)
  assert.equal(all.body.nextCursor, null)
  for (const limit of [0, 101, -1, 'x']) {
    const bad = await m.client.request<ErrorBody>('GET', '/v1/customers', { query: { limit } })
    assert.equal(bad.status, 400, `limit ${limit}`)
    assert.equal(bad.body.code, 'SVC-VAL-3001')
  }
})

test('filters: email (case-insensitive) and phone (any notation of the same number)', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const a = await createCustomer(m.client, { email: 'filter@example.com', phone: '+905321234567' })
  await createCustomer(m.client, { email: 'other@example.com', phone: '+905329876543' })
  await createCustomer(m.client, {})
  const q = async (query: Record<string, string>) => {
    const res = await m.client.request<{ items: { id: string }[] }>('GET', '/v1/customers', {
      query,
    })
    assert.equal(res.status, 200, JSON.stringify(res.body))
    return res.body.items.map((i) => i.id)
  }
  assert.deepEqual(await q({ email: 'FILTER@example.com' }), [a.id])
  assert.deepEqual(await q({ phone: '+90 532 123 45 67' }), [a.id])
  assert.deepEqual(await q({ email: 'filter@example.com', phone: '+905329876543' }), [])
  assert.deepEqual(await q({ email: 'nobody@example.com' }), [])
  const bad = await m.client.request<ErrorBody>('GET', '/v1/customers', {
    query: { phone: '12345' },
  })
  assert.equal(bad.status, 400)
  assert.equal(bad.body.code, 'SVC-VAL-3001')
})

test('a tampered, foreign or malformed cursor is 400 SVC-VAL-3001', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const other = await h.newMerchant()
  for (let i = 0; i < 3; i++) {
    await createCustomer(m.client, {})
    await createCustomer(other.client, {})
  }
  const first = await m.client.request<{ nextCursor: string }>('GET', '/v1/customers', {
    query: { limit: 1 },
  })
  const cursor = first.body.nextCursor
  assert.equal(typeof cursor, 'string')
  const [body = '', mac = ''] = cursor.split('.')
  const payload = JSON.parse(Buffer.from(body, 'base64url').toString()) as Record<string, unknown>
  const edited = Buffer.from(
    JSON.stringify({ ...payload, t: '2000-01-01T00:00:00.000Z' }),
  ).toString('base64url')
  const theirs = await other.client.request<{ nextCursor: string }>('GET', '/v1/customers', {
    query: { limit: 1 },
  })
  for (const bad of [
    `${edited}.${mac}`,
    `${body}.${mac.slice(0, -2)}AA`,
    'not-a-cursor',
    `${body}.`,
    theirs.body.nextCursor,
  ]) {
    const res = await m.client.request<ErrorBody>('GET', '/v1/customers', {
      query: { cursor: bad },
    })
    assert.equal(res.status, 400, bad)
    assert.equal(res.body.code, 'SVC-VAL-3001')
  }
  const good = await m.client.request<{ items: unknown[] }>('GET', '/v1/customers', {
    query: { cursor },
  })
  assert.equal(good.status, 200)
  assert.equal(good.body.items.length, 2)
})

test('the OpenAPI document lists the nine customer routes', async (t) => {
  const h = await startTestApp(t)
  const res = await fetch(`${h.url}/openapi.json`)
  assert.equal(res.status, 200)
  const doc = (await res.json()) as { paths: Record<string, Record<string, unknown>> }
  const routes = Object.entries(doc.paths)
    .filter(([path]) => path.startsWith('/v1/customers'))
    .flatMap(([path, ops]) => Object.keys(ops).map((op) => `${op.toUpperCase()} ${path}`))
    .sort()
  assert.deepEqual(routes, [
    'DELETE /v1/customers/{id}',
    'DELETE /v1/customers/{id}/cards/{cardId}',
    'GET /v1/customers',
    'GET /v1/customers/{id}',
    'GET /v1/customers/{id}/cards',
    'GET /v1/customers/{id}/cards/default',
    'POST /v1/customers',
    'POST /v1/customers/{id}/cards',
    'PUT /v1/customers/{id}',
  ])
})
