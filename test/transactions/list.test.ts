// Goal: GET /v1/transactions filters, orders and pages exactly (every filter alone and combined,
// keyset pages that never skip or repeat, signed cursors), and detail/ledger stay per merchant.
// Method: payments made through the signed API (the same-instant rows are test-only inserts,
// commented there), then lists compared against a model of what was made.
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { test } from 'node:test'
import { sql } from 'kysely'
import { startTestApp, type TestApp, type TestMerchant } from '../helpers/app.ts'
import { CARDS } from '../helpers/payments.ts'
import {
  customer,
  insertQrPayment,
  keysetOrder,
  listAll,
  pay,
  payQr,
  type ListBody,
  type ListItem,
} from './_support.ts'

const HOUR = 3_600_000

interface Made {
  id: string
  storeId: string
  amount: number
  status: string
  customerId: string | null
  method: 'card' | 'qr'
  late: boolean
}

async function secondStore(h: TestApp, m: TestMerchant) {
  const res = await h.operator<{ storeId: string; publicKey: string; secretKey: string }>(
    'POST',
    `/operator/v1/merchants/${m.merchantId}/stores`,
    {},
  )
  assert.equal(res.status, 201, JSON.stringify(res.body))
  return { storeId: res.body.storeId, client: h.clientFor(res.body) }
}

async function post(m: { client: TestMerchant['client'] }, path: string, body: object = {}) {
  return m.client.request<{ status: string; lastRefund?: { status: string } }>('POST', path, {
    body,
  })
}

test('every filter alone and combined returns exactly the matching payments, newest first', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const other = await h.newMerchant()
  const store2 = await secondStore(h, m)
  const made: Made[] = []
  const add = (id: string, x: Omit<Made, 'id' | 'method'> & { method?: 'card' | 'qr' }) =>
    made.push({ id, method: 'card', ...x })
  const base = { storeId: m.storeId, customerId: null, late: false }
  const ayse = await customer(m.client, 'Ayşe Yılmaz')
  const mehmet = await customer(m.client, 'Mehmet Öztürk')

  add(await pay(m.client, 10_000, { customerId: ayse }), {
    ...base,
    amount: 10_000,
    status: 'captured',
    customerId: ayse,
  })
  add(await pay(m.client, 25_000, { customerId: ayse, capture: false }), {
    ...base,
    amount: 25_000,
    status: 'authorized',
    customerId: ayse,
  })
  const voided = await pay(m.client, 5_000, { capture: false })
  assert.equal((await post(m, `/v1/payments/${voided}/void`, { reason: 'stok yok' })).status, 200)
  add(voided, { ...base, amount: 5_000, status: 'voided' })
  add(await pay(m.client, 7_500, { card: CARDS.declined }), {
    ...base,
    amount: 7_500,
    status: 'failed',
  })
  const boundary = new Date(h.clock.now().getTime() + HOUR)
  h.clock.advance(2 * HOUR)
  const late = { ...base, late: true }
  add(await pay(store2.client, 50_000, { customerId: mehmet }), {
    ...late,
    storeId: store2.storeId,
    amount: 50_000,
    status: 'captured',
    customerId: mehmet,
  })
  const refunded = await pay(m.client, 12_000)
  assert.equal((await post(m, `/v1/payments/${refunded}/refund`)).status, 200)
  add(refunded, { ...late, amount: 12_000, status: 'refunded' })
  const partly = await pay(m.client, 30_000, { card: CARDS.asyncRefund })
  assert.equal((await post(m, `/v1/payments/${partly}/refund`, { amount: 1_000 })).status, 202)
  assert.equal((await post(m, `/v1/payments/${partly}/refund`, { amount: 2_000 })).status, 202)
  add(partly, { ...late, amount: 30_000, status: 'captured' })
  const qrId = await payQr(m.client, 8_000)
  add(qrId, { ...late, amount: 8_000, status: 'captured', method: 'qr' })
  await pay(other.client, 10_000, { customerId: await customer(other.client, 'Ayşe Yılmaz') })

  const all = await listAll(m.client, {})
  assert.deepEqual(new Set(all.map((i) => i.id)), new Set(made.map((x) => x.id)))
  assert.deepEqual(all, [...all].sort(keysetOrder), 'newest first, ties by id')
  const byId = new Map(made.map((x) => [x.id, x]))
  const item = (id: string) => all.find((i) => i.id === id)!
  // Completed and pending refund records count; the list carries no failed ones here.
  assert.equal(item(partly).refundsCount, 2)
  assert.equal(item(refunded).refundsCount, 1)
  assert.equal(item(refunded).status, 'refunded')
  assert.ok(all.every((i) => i.chargebacksCount === 0 && i.currency === 'TRY'))
  assert.equal(item(qrId).method, 'qr')

  const cases: [Record<string, string | number>, (x: Made) => boolean][] = [
    [{ status: 'captured' }, (x) => x.status === 'captured'],
    [{ status: 'authorized' }, (x) => x.status === 'authorized'],
    [{ status: 'voided' }, (x) => x.status === 'voided'],
    [{ status: 'failed' }, (x) => x.status === 'failed'],
    [{ status: 'refunded' }, (x) => x.status === 'refunded'],
    [{ status: 'pending_3ds' }, () => false],
    [{ storeId: store2.storeId }, (x) => x.storeId === store2.storeId],
    [{ storeId: m.storeId }, (x) => x.storeId === m.storeId],
    [{ customerId: ayse }, (x) => x.customerId === ayse],
    [{ from: boundary.toISOString() }, (x) => x.late],
    [{ to: boundary.toISOString() }, (x) => !x.late],
    [{ amountMin: 10_000 }, (x) => x.amount >= 10_000],
    [{ amountMax: 8_000 }, (x) => x.amount <= 8_000],
    [{ amountMin: 7_500, amountMax: 7_500 }, (x) => x.amount === 7_500],
    [{ method: 'qr' }, (x) => x.method === 'qr'],
    [{ method: 'card' }, (x) => x.method === 'card'],
    [
      { status: 'captured', storeId: m.storeId, amountMin: 9_000 },
      (x) => x.status === 'captured' && x.storeId === m.storeId && x.amount >= 9_000,
    ],
    [
      { customerId: ayse, status: 'authorized', to: boundary.toISOString() },
      (x) => x.customerId === ayse && x.status === 'authorized' && !x.late,
    ],
    [
      { from: boundary.toISOString(), method: 'card', amountMax: 30_000, status: 'captured' },
      (x) => x.late && x.method === 'card' && x.amount <= 30_000 && x.status === 'captured',
    ],
    [
      { storeId: store2.storeId, customerId: ayse },
      (x) => x.storeId === store2.storeId && x.customerId === ayse,
    ],
  ]
  for (const [query, match] of cases) {
    const expected = all.filter((i) => match(byId.get(i.id)!)).map((i) => i.id)
    // Small pages too, so every filter also crosses page boundaries.
    for (const limit of [100, 2]) {
      const got = await listAll(m.client, query, limit)
      assert.deepEqual(
        got.map((i) => i.id),
        expected,
        `${JSON.stringify(query)} limit ${limit}`,
      )
    }
  }
  const foreign = await listAll(other.client, {})
  assert.equal(foreign.length, 1, 'another merchant sees only its own')
})

test('250 payments in pages of 7: each exactly once, in order, while new payments arrive', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const created: string[] = []
  // Through the real API, five at a time (a few seconds on either backend).
  for (let i = 0; i < 250; i += 5) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(5, 250 - i) }, (_, k) => pay(m.client, 100 + i + k)),
    )
    created.push(...batch)
  }
  const seen: ListItem[] = []
  let cursor: string | undefined
  const arrived: string[] = []
  for (let page = 0; page < 100; page++) {
    const res = await m.client.request<ListBody>('GET', '/v1/transactions', {
      query: { limit: 7, cursor },
    })
    assert.equal(res.status, 200, JSON.stringify(res.body))
    assert.ok(res.body.items.length <= 7)
    seen.push(...res.body.items)
    // New payments between fetches are newer than the first page: later pages never show them.
    if (page % 3 === 0 && arrived.length < 12) arrived.push(await pay(m.client, 9_999))
    if (res.body.nextCursor === null) break
    assert.equal(res.body.items.length, 7, 'only the last page is short')
    cursor = res.body.nextCursor
  }
  assert.equal(seen.length, 250)
  assert.equal(new Set(seen.map((i) => i.id)).size, 250, 'no payment twice')
  assert.deepEqual(new Set(seen.map((i) => i.id)), new Set(created))
  assert.deepEqual(seen, [...seen].sort(keysetOrder), 'newest first, ties by id')
  // A fresh first page shows the newcomers on top.
  const fresh = await m.client.request<ListBody>('GET', '/v1/transactions', {
    query: { limit: arrived.length },
  })
  assert.deepEqual(new Set(fresh.body.items.map((i) => i.id)), new Set(arrived))
  // The default page size is 20.
  const first = await m.client.request<ListBody>('GET', '/v1/transactions')
  assert.equal(first.body.items.length, 20)
})

test('rows sharing one instant, down to the microsecond, page without loss or repeats', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const ids: string[] = []
  for (let i = 0; i < 13; i++) {
    const id = `pay_tie${String(i).padStart(2, '0')}${randomUUID().replaceAll('-', '').slice(0, 15)}`
    await insertQrPayment(h, m, 1_000 + i, id)
    ids.push(id)
  }
  // Test-only SQL: the API writes millisecond timestamps, so ties and sub-millisecond
  // differences are made here, on this merchant's rows only. Five rows share one instant;
  // the rest sit microseconds apart inside the same millisecond.
  await sql`update payments set created_at = timestamptz '2026-03-01 10:00:00.123000+00'
      + (case when amount < 1005 then 0 else amount - 1004 end) * interval '1 microsecond'
    where merchant_id = ${m.merchantId}`.execute(h.deps.db)
  for (const limit of [1, 2, 4, 5]) {
    const got = await listAll(m.client, {}, limit)
    assert.equal(got.length, 13, `limit ${limit}`)
    assert.equal(new Set(got.map((i) => i.id)).size, 13, `limit ${limit}: no repeats`)
    // Newest first: amounts 1012 … 1005 (later microseconds), then the five tied rows by id.
    assert.deepEqual(
      got.slice(0, 8).map((i) => i.amount),
      [1012, 1011, 1010, 1009, 1008, 1007, 1006, 1005],
    )
    const tied = got.slice(8).map((i) => i.id)
    assert.deepEqual(tied, [...tied].sort().reverse())
  }
})

test('cursors are tamper-evident and bound to merchant and filters; limits are enforced', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const other = await h.newMerchant()
  for (let i = 0; i < 3; i++) await pay(m.client, 1_000 + i)
  const page = await m.client.request<ListBody>('GET', '/v1/transactions', { query: { limit: 1 } })
  const cursor = page.body.nextCursor
  assert.ok(cursor)
  const [body = '', mac = ''] = cursor.split('.')
  const flip = (s: string, i: number) => s.slice(0, i) + (s[i] === 'A' ? 'B' : 'A') + s.slice(i + 1)
  const bad: [string, Record<string, string | number>, typeof m.client][] = [
    ['edited payload', { limit: 1, cursor: `${flip(body, 5)}.${mac}` }, m.client],
    ['edited signature', { limit: 1, cursor: `${body}.${flip(mac, 3)}` }, m.client],
    ['garbage', { limit: 1, cursor: 'not-a-cursor' }, m.client],
    ['another merchant', { limit: 1, cursor }, other.client],
    ['other filters', { limit: 1, cursor, status: 'captured' }, m.client],
    ['limit 0', { limit: 0 }, m.client],
    ['limit 101', { limit: 101 }, m.client],
    ['unknown status', { status: 'paid' }, m.client],
    ['unknown method', { method: 'cash' }, m.client],
    ['from after to', { from: '2026-02-01T00:00:00Z', to: '2026-01-01T00:00:00Z' }, m.client],
    ['amountMin over amountMax', { amountMin: 10, amountMax: 5 }, m.client],
    ['negative amount', { amountMin: -1 }, m.client],
    ['bad timestamp', { from: 'yesterday' }, m.client],
    ['unknown parameter', { sort: 'asc' }, m.client],
  ]
  for (const [what, query, client] of bad) {
    const res = await client.request<{ code: string }>('GET', '/v1/transactions', { query })
    assert.equal(res.status, 400, what)
    assert.equal(res.body.code, 'SVC-VAL-3001', what)
  }
  const next = await m.client.request<ListBody>('GET', '/v1/transactions', {
    query: { limit: 1, cursor },
  })
  assert.equal(next.status, 200)
  assert.equal(next.body.items.length, 1)
  assert.notEqual(next.body.items[0]?.id, page.body.items[0]?.id)
  const max = await m.client.request<ListBody>('GET', '/v1/transactions', { query: { limit: 100 } })
  assert.equal(max.status, 200)
})

interface Detail {
  id: string
  storeId: string
  transactionId: string
  status: string
  amount: number
  currency: string
  commission: number
  netAmount: number
  refundAmount: number
  refunds: {
    refundId: string
    amount: number
    status: string
    reason: string | null
    createdAt: string
    completedAt: string | null
  }[]
  refundsCount: number
  chargebacks: unknown[]
  chargebacksCount: number
  chargebackOpenAmount: number
  createdAt: string
  method: string
}

interface Leg {
  accountType: string
  direction: 'DEBIT' | 'CREDIT'
  amount: number
  currency: string
  ownerType: string
  ownerId: string
}

test('detail and ledger legs of a transaction; another merchant gets 404', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const other = await h.newMerchant()
  const id = await pay(m.client, 20_000, { transactionId: `sipariş-${randomUUID()}` })
  assert.equal(
    (await post(m, `/v1/payments/${id}/refund`, { amount: 5_000, reason: 'eksik ürün' })).status,
    200,
  )
  const detail = await m.client.request<Detail>('GET', `/v1/transactions/${id}`)
  assert.equal(detail.status, 200, JSON.stringify(detail.body))
  const d = detail.body
  assert.equal(d.id, id)
  assert.equal(d.storeId, m.storeId)
  assert.match(d.transactionId, /^sipariş-/)
  assert.equal(d.status, 'captured')
  assert.equal(d.method, 'card')
  assert.equal(d.amount, 20_000)
  assert.equal(d.currency, 'TRY')
  assert.equal(d.netAmount, d.amount - d.commission)
  assert.ok(d.commission > 0)
  assert.equal(d.refundAmount, 5_000)
  assert.equal(d.refunds.length, 1)
  assert.equal(d.refundsCount, 1)
  const [r] = d.refunds
  assert.match(r!.refundId, /^rfn_/)
  assert.equal(r!.amount, 5_000)
  assert.equal(r!.status, 'completed')
  assert.equal(r!.reason, 'eksik ürün')
  assert.ok(r!.completedAt)
  assert.deepEqual(d.chargebacks, [])
  assert.equal(d.chargebacksCount, 0)
  assert.equal(d.chargebackOpenAmount, 0)
  assert.match(d.createdAt, /Z$/)

  const ledger = await m.client.request<{ items: Leg[] }>('GET', `/v1/transactions/${id}/ledger`)
  assert.equal(ledger.status, 200)
  const legs = ledger.body.items
  const total = (dir: Leg['direction']) =>
    legs.filter((l) => l.direction === dir).reduce((s, l) => s + l.amount, 0)
  assert.equal(total('DEBIT'), total('CREDIT'), 'legs balance')
  assert.ok(
    legs.some(
      (l) => l.accountType === 'buyer_pending' && l.direction === 'DEBIT' && l.amount === 20_000,
    ),
  )
  assert.ok(legs.some((l) => l.ownerType === 'merchant' && l.ownerId === m.merchantId))
  assert.ok(legs.every((l) => l.currency === 'TRY'))

  // An authorization posts no legs.
  const held = await pay(m.client, 3_000, { capture: false })
  const none = await m.client.request<{ items: Leg[] }>('GET', `/v1/transactions/${held}/ledger`)
  assert.deepEqual(none.body.items, [])

  for (const path of [`/v1/transactions/${id}`, `/v1/transactions/${id}/ledger`]) {
    const foreign = await other.client.request<{ code: string }>('GET', path)
    assert.equal(foreign.status, 404, path)
    assert.equal(foreign.body.code, 'SVC-RES-3301')
  }
  const unknown = await m.client.request<{ code: string }>('GET', '/v1/transactions/pay_nope')
  assert.equal(unknown.status, 404)
})
