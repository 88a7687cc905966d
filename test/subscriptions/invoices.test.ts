// Goal: with generateInvoices, each renewal creates its invoice directly as `paid`, once per
// cycle; without it, none. Method: signed HTTP; renewals run through the sandbox reconcile.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { startTestApp } from '../helpers/app.ts'
import { DAY_MS, charges, reconcile, subscribed } from './_support.ts'

interface InvoiceItem {
  id: string
  status: string
  amountMinor: number
}

test('generateInvoices: every renewal has one paid invoice', async (t) => {
  const h = await startTestApp(t)
  const { m, sub } = await subscribed(h, {
    extra: { generateInvoices: true, description: 'Pro plan' },
  })
  await reconcile(m)
  h.clock.advance(32 * DAY_MS)
  await reconcile(m)
  await reconcile(m)
  const history = await charges(m, sub.id)
  assert.equal(history.filter((c) => c.status === 'captured').length, 2)
  const list = await m.client.request<{ items: InvoiceItem[] }>('GET', '/v1/invoices', {
    query: { status: 'paid' },
  })
  assert.equal(list.status, 200)
  const mine = list.body.items.filter((i) => i.amountMinor === sub.amountMinor)
  assert.equal(mine.length, 2)
  assert.ok(mine.every((i) => i.status === 'paid'))
})

test('without generateInvoices renewals make no invoice', async (t) => {
  const h = await startTestApp(t)
  const { m } = await subscribed(h)
  await reconcile(m)
  const list = await m.client.request<{ items: InvoiceItem[] }>('GET', '/v1/invoices')
  assert.equal(list.body.items.length, 0)
})
