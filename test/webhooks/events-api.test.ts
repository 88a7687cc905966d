// Goal: GET /v1/events and /v1/events/{id}: the merchant's outbox as a feed, filtered by type
// and resource, paged with tamper-evident keyset cursors, never another merchant's events.
// Method: payments through the signed API, then the events endpoints with the same keys.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { startTestApp } from '../helpers/app.ts'
import { authorizedPayment, dashboardFetch, newDashboardMerchant } from './_support.ts'

interface EventJson {
  id: string
  type: string
  resourceType: string
  resourceId: string
  sequence: number
  createdAt: string
  data: Record<string, unknown>
}
interface EventPage {
  items: EventJson[]
  nextCursor: string | null
}

test('events list, filters, cursors and a single event, merchant-scoped', async (t) => {
  const h = await startTestApp(t)
  const m = await newDashboardMerchant(h)
  const other = await newDashboardMerchant(h)
  const p1 = await authorizedPayment(m.client, 3000)
  const p2 = await authorizedPayment(m.client, 3100)
  const voided = await m.client.request('POST', `/v1/payments/${p2}/void`, {
    body: { reason: 'stok yok' },
  })
  assert.equal(voided.status, 200)
  const otherPayment = await authorizedPayment(other.client, 3200)

  const all = await m.client.request<EventPage>('GET', '/v1/events', { query: { limit: 100 } })
  assert.equal(all.status, 200)
  assert.deepEqual(
    all.body.items.map((e) => `${e.resourceId}:${e.type}`),
    [`${p2}:payment.voided`, `${p2}:payment.authorized`, `${p1}:payment.authorized`],
  )
  assert.ok(all.body.items.every((e) => e.resourceType === 'payment' && /Z$/.test(e.createdAt)))
  assert.equal(all.body.nextCursor, null)

  const byType = await m.client.request<EventPage>('GET', '/v1/events', {
    query: { type: 'payment.voided' },
  })
  assert.equal(byType.body.items.length, 1)
  assert.equal(byType.body.items[0]!.data['reason'], 'stok yok')
  assert.equal(byType.body.items[0]!.sequence, 2)
  const byResource = await m.client.request<EventPage>('GET', '/v1/events', {
    query: { resourceId: p1 },
  })
  assert.deepEqual(
    byResource.body.items.map((e) => e.type),
    ['payment.authorized'],
  )
  // Another merchant's resource id finds nothing here.
  const foreign = await m.client.request<EventPage>('GET', '/v1/events', {
    query: { resourceId: otherPayment },
  })
  assert.equal(foreign.body.items.length, 0)

  // Pages of one, newest first, covering everything exactly once.
  const seen: string[] = []
  let cursor: string | undefined
  for (let i = 0; i < 5; i++) {
    const page: { status: number; body: EventPage } = await m.client.request<EventPage>(
      'GET',
      '/v1/events',
      { query: { limit: 1, cursor } },
    )
    assert.equal(page.status, 200)
    seen.push(...page.body.items.map((e) => e.id))
    if (!page.body.nextCursor) break
    cursor = page.body.nextCursor
  }
  assert.deepEqual(
    seen,
    all.body.items.map((e) => e.id),
  )

  // A cursor is bound to its merchant and cannot be edited.
  const first = await m.client.request<EventPage>('GET', '/v1/events', { query: { limit: 1 } })
  const mine = first.body.nextCursor!
  const stolen = await other.client.request<{ code: string }>('GET', '/v1/events', {
    query: { cursor: mine },
  })
  assert.equal(stolen.status, 400)
  assert.equal(stolen.body.code, 'SVC-VAL-3001')
  const edited = await m.client.request<{ code: string }>('GET', '/v1/events', {
    query: { cursor: `x${mine}` },
  })
  assert.equal(edited.status, 400)
  const tooMany = await m.client.request('GET', '/v1/events', { query: { limit: 101 } })
  assert.equal(tooMany.status, 400)

  const one = await m.client.request<EventJson>('GET', `/v1/events/${all.body.items[0]!.id}`)
  assert.equal(one.status, 200)
  assert.deepEqual(one.body, all.body.items[0])
  const notMine = await other.client.request<{ code: string }>(
    'GET',
    `/v1/events/${all.body.items[0]!.id}`,
  )
  assert.equal(notMine.status, 404)
  assert.equal(notMine.body.code, 'SVC-RES-3301')
  assert.equal((await m.client.request('GET', '/v1/events/evt_nosuchevent')).status, 404)

  // Signed API only: a dashboard token is not a credential here.
  const withToken = await dashboardFetch(h, 'GET', '/v1/events', { token: await m.token() })
  assert.equal(withToken.status, 401)
})
