// Goal: a list call is awaited for its first page or walked with `for await` across every
// page, passing each nextCursor back as cursor and the caller's filters on every page.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { Kurus } from '../src/index.ts'

function pagedKurus(pages: { items: { id: string }[]; nextCursor: string | null }[]) {
  const urls: URL[] = []
  const kurus = new Kurus({
    publicKey: 'pk_demo_test',
    secretKey: 'sk_demo_test',
    baseUrl: 'http://kurus.test',
    fetch: async (input) => {
      const url = new URL(input instanceof Request ? input.url : input)
      urls.push(url)
      const index = Number(url.searchParams.get('cursor') ?? '0')
      return new Response(JSON.stringify(pages[index]), {
        headers: { 'content-type': 'application/json' },
      })
    },
  })
  return { kurus, urls }
}

const pages = [
  { items: [{ id: 'pay_1' }, { id: 'pay_2' }], nextCursor: '1' },
  { items: [{ id: 'pay_3' }], nextCursor: '2' },
  { items: [{ id: 'pay_4' }], nextCursor: null },
]

test('for await walks every page in order, with the filters on each request', async () => {
  const { kurus, urls } = pagedKurus(pages)
  const seen: string[] = []
  for await (const payment of kurus.payments.list({ status: 'captured', limit: 2 })) {
    seen.push(payment.id)
  }
  assert.deepEqual(seen, ['pay_1', 'pay_2', 'pay_3', 'pay_4'])
  assert.deepEqual(
    urls.map((u) => [u.pathname, u.searchParams.get('status'), u.searchParams.get('cursor')]),
    [
      ['/v1/payments', 'captured', null],
      ['/v1/payments', 'captured', '1'],
      ['/v1/payments', 'captured', '2'],
    ],
  )
  assert.ok(urls.every((u) => u.searchParams.get('limit') === '2'))
})

test('awaiting a list gives its first page only; limit defaults to 20', async () => {
  const { kurus, urls } = pagedKurus(pages)
  const page = await kurus.customers.list()
  assert.deepEqual(page, pages[0])
  assert.equal(urls.length, 1)
  assert.equal(urls[0]?.searchParams.get('limit'), '20')
})

test('breaking out of the loop fetches no further page; toArray stops at its maximum', async () => {
  const { kurus, urls } = pagedKurus(pages)
  for await (const event of kurus.events.list()) {
    assert.equal(event.id, 'pay_1')
    break
  }
  assert.equal(urls.length, 1)
  const first3 = await pagedKurus(pages).kurus.events.list().toArray(3)
  assert.deepEqual(
    first3.map((p) => p.id),
    ['pay_1', 'pay_2', 'pay_3'],
  )
})
