// Goal: GET /v1/payments lists the merchant's payments as GET /v1/payments/{id} answers each,
// with the filters of GET /v1/transactions, newest first, in keyset pages that never skip or
// repeat; cursors are bound to merchant and filters; bad filters are 400; another merchant's
// payments never show. The SDK's payments.list and `kurus payments list` read this route.
// Method: payments made through the signed API, then pages compared with the transactions
// list (the same search) and with each payment's own GET.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { startTestApp } from '../helpers/app.ts'
import { CARDS } from '../helpers/payments.ts'
import { customer, pay } from '../transactions/_support.ts'

interface PaymentItem {
  id: string
  status: string
  amount: number
  customerId: string | null
  captures: unknown[]
  metadata: Record<string, string>
}
interface Page {
  items: PaymentItem[]
  nextCursor: string | null
}

test('GET /v1/payments: payments as GET /v1/payments/{id} shows them, filtered and paged like transactions', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const other = await h.newMerchant()
  const ayse = await customer(m.client, 'Ayşe Yılmaz')
  const made = [
    await pay(m.client, 10_000, { customerId: ayse }),
    await pay(m.client, 25_000, { capture: false }),
    await pay(m.client, 7_500, { card: CARDS.declined }),
    await pay(m.client, 12_000),
    await pay(m.client, 3_000, { customerId: ayse }),
  ]
  const theirs = await pay(other.client, 9_900)

  // Every page of two, walked by cursor: each payment once, in the transactions list's order.
  const seen: PaymentItem[] = []
  let cursor: string | undefined
  for (;;) {
    const res = await m.client.request<Page>('GET', '/v1/payments', {
      query: { limit: 2, ...(cursor ? { cursor } : {}) },
    })
    assert.equal(res.status, 200, JSON.stringify(res.body))
    assert.ok(res.body.items.length <= 2)
    seen.push(...res.body.items)
    if (res.body.nextCursor === null) break
    cursor = res.body.nextCursor
  }
  const transactions = await m.client.request<{ items: { id: string }[] }>(
    'GET',
    '/v1/transactions',
    { query: { limit: 100 } },
  )
  assert.deepEqual(
    seen.map((p) => p.id),
    transactions.body.items.map((p) => p.id),
  )
  assert.deepEqual(new Set(seen.map((p) => p.id)), new Set(made))
  assert.ok(!seen.some((p) => p.id === theirs))

  // Each item is the payment as its own GET answers it.
  for (const item of seen) {
    const one = await m.client.request<PaymentItem>('GET', `/v1/payments/${item.id}`)
    assert.deepEqual(item, one.body)
  }

  // The transactions list's filters.
  const ids = async (query: Record<string, string | number>) => {
    const res = await m.client.request<Page>('GET', '/v1/payments', { query })
    assert.equal(res.status, 200, JSON.stringify(res.body))
    return res.body.items.map((p) => p.id).sort()
  }
  assert.deepEqual(await ids({ status: 'failed' }), [made[2]])
  assert.deepEqual(await ids({ status: 'authorized' }), [made[1]])
  assert.deepEqual(await ids({ customerId: ayse }), [made[0], made[4]].sort())
  assert.deepEqual(await ids({ amountMin: 10_000, amountMax: 12_000 }), [made[0], made[3]].sort())

  // A cursor is bound to its filters and its merchant; bad filters are 400, nothing listed.
  const first = await m.client.request<Page>('GET', '/v1/payments', { query: { limit: 1 } })
  const next = first.body.nextCursor
  assert.ok(next)
  const otherFilters = await m.client.request<{ code: string }>('GET', '/v1/payments', {
    query: { limit: 1, status: 'captured', cursor: next },
  })
  assert.equal(otherFilters.status, 400)
  assert.equal(otherFilters.body.code, 'SVC-VAL-3001')
  const otherMerchant = await other.client.request<{ code: string }>('GET', '/v1/payments', {
    query: { limit: 1, cursor: next },
  })
  assert.equal(otherMerchant.status, 400)
  const forged = await m.client.request<{ code: string }>('GET', '/v1/payments', {
    query: { cursor: `${next.slice(0, -2)}xx` },
  })
  assert.equal(forged.status, 400)
  for (const query of [
    { status: 'exploded' },
    { limit: 101 },
    { amountMin: 5, amountMax: 4 },
    { from: '2027-01-02T00:00:00Z', to: '2027-01-01T00:00:00Z' },
    { unknown: 'x' },
  ]) {
    const res = await m.client.request<{ code: string }>('GET', '/v1/payments', { query })
    assert.equal(res.status, 400, JSON.stringify(query))
    assert.equal(res.body.code, 'SVC-VAL-3001')
  }
})

test('GET /v1/payments?metadata.<key>=<value> matches one exact pair', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const tagged = await pay(m.client, 4_000)
  await pay(m.client, 4_000)
  const patched = await m.client.request('PATCH', `/v1/payments/${tagged}`, {
    body: { metadata: { orderId: 'SIP-7' } },
  })
  assert.equal(patched.status, 200)
  const res = await m.client.request<Page>('GET', '/v1/payments', {
    query: { 'metadata.orderId': 'SIP-7' },
  })
  assert.equal(res.status, 200, JSON.stringify(res.body))
  assert.deepEqual(
    res.body.items.map((p) => [p.id, p.metadata['orderId']]),
    [[tagged, 'SIP-7']],
  )
})
