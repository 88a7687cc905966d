// Goal: a renewal payment's metadata is the merchant's alone (issue 36, finding 9): the
// subscription's metadata, exactly, with no `cycle` or `subscriptionId` keys of ours; which
// subscription and cycle it renews is told by fields of our own (`subscriptionId`,
// `subscriptionCycle`), in the API's payment, in the payment's events and in the OpenAPI
// document's Payment schema.
// Method: the real app; a subscription with metadata charged by the sandbox reconcile; the
// payment read through the signed API; its outbox events read back.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { startTestApp } from '../helpers/app.ts'
import { charges, reconcile, subscribed } from './_support.ts'

test('a renewal payment carries the merchant’s metadata only, and the subscription in fields of ours', async (t) => {
  const h = await startTestApp(t)
  const metadata = { plan: 'gold', orderRef: 'ABO-7' }
  const { m, sub } = await subscribed(h, { extra: { metadata } })
  await reconcile(m)
  const [first] = await charges(m, sub.id)
  assert.ok(first?.paymentId)
  const payment = await m.client.request<Record<string, unknown>>(
    'GET',
    `/v1/payments/${first.paymentId}`,
  )
  assert.equal(payment.status, 200)
  assert.deepEqual(payment.body['metadata'], metadata, 'the merchant’s keys, and nothing else')
  assert.equal(payment.body['subscriptionId'], sub.id)
  assert.equal(payment.body['subscriptionCycle'], 1)

  const events = await h.deps.db
    .selectFrom('events')
    .select(['type', 'data'])
    .where('merchant_id', '=', m.merchantId)
    .execute()
  const paid = events.filter((e) => e.type.startsWith('payment.'))
  assert.ok(paid.length > 0)
  for (const e of paid) {
    const data = (typeof e.data === 'string' ? JSON.parse(e.data) : e.data) as {
      metadata?: unknown
      subscriptionId?: unknown
    }
    assert.deepEqual(data.metadata, metadata, e.type)
    assert.equal(data.subscriptionId, sub.id, e.type)
  }

  // A payment that renews nothing says so with nulls.
  const openapi = (await (await fetch(`${h.url}/openapi.json`)).json()) as {
    components: { schemas: Record<string, { properties?: Record<string, unknown> }> }
  }
  const props = openapi.components.schemas['Payment']?.properties ?? {}
  assert.ok('subscriptionId' in props && 'subscriptionCycle' in props)
})
