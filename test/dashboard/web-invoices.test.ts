// Goal: the invoices pages act through the invoices service as the API does: the create form
// with line items makes the invoice the API then returns (amount = the lines' sum); a bad line
// is refused on the page and makes nothing; Send and Cancel change what the API reports and are
// audited; the PDF downloads; the public link opens the buyer's page; support may act, viewer
// and finance may not; a forged POST without CSRF token makes nothing; another merchant's
// invoice is the 404 page. Method: the real app over HTTP, a cookie-jar client, the signed API.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { startTestApp } from '../helpers/app.ts'
import { actionWords, auditText, forged, memberWeb } from './_sections.ts'
import { alertOf, newDashboardMerchant, signedIn, tableText, textOf } from './_web.ts'

interface InvoiceBody {
  id: string
  status: string
  amountMinor: number
  lineItems: { name: string; qty: number; unitPriceMinor: number; lineTotalMinor: number }[]
  buyerEmail: string | null
  url: string
}

async function apiInvoice(m: Awaited<ReturnType<typeof newDashboardMerchant>>, id: string) {
  const res = await m.client.request<InvoiceBody>('GET', `/v1/invoices/${id}`)
  assert.equal(res.status, 200, JSON.stringify(res.body))
  return res.body
}

async function apiCount(m: Awaited<ReturnType<typeof newDashboardMerchant>>) {
  const res = await m.client.request<{ items: unknown[] }>('GET', '/v1/invoices?limit=100')
  return res.body.items.length
}

const LINES = {
  line0Name: 'Roman',
  line0Qty: '2',
  line0Price: '125,50',
  line1Name: 'Kargo',
  line1Qty: '1',
  line1Price: '30',
}

test('create with line items, send, PDF, public link, cancel: what the API then reports', async (t) => {
  const h = await startTestApp(t)
  const m = await newDashboardMerchant(h)
  const web = await signedIn(h, m)
  const form = await web.get('/dashboard/invoices/new')
  assert.equal(form.status, 200)
  assert.match(form.text, /Kalem 5/)

  // A line with a name but no price: refused on the page, nothing made.
  const bad = await web.submit(
    '/dashboard/invoices',
    { storeId: m.storeId, line0Name: 'Roman', line0Qty: '1', line0Price: '' },
    form,
  )
  assert.equal(bad.status, 400)
  assert.match(alertOf(bad.text) ?? '', /1\. kalem/)
  assert.equal(await apiCount(m), 0)

  const made = await web.submit(
    '/dashboard/invoices',
    { storeId: m.storeId, buyerName: 'Ayşe Yılmaz', buyerEmail: 'ayse@example.com', ...LINES },
    form,
  )
  assert.equal(made.status, 303, made.text.slice(0, 400))
  const id = /\/dashboard\/invoices\/(inv_\w+)/.exec(made.location ?? '')?.[1] ?? ''
  const created = await apiInvoice(m, id)
  assert.equal(created.status, 'draft')
  assert.equal(created.amountMinor, 2 * 12_550 + 3_000)
  assert.deepEqual(
    created.lineItems.map((l) => [l.name, l.qty, l.unitPriceMinor, l.lineTotalMinor]),
    [
      ['Roman', 2, 12_550, 25_100],
      ['Kargo', 1, 3_000, 3_000],
    ],
  )

  const detail = await web.get(made.location ?? '')
  assert.equal(textOf(detail.text, 'invoice-amount'), '₺281,00')
  assert.match(tableText(detail.text, 'lines-table'), /Roman 2 ₺125,50 ₺251,00/)
  assert.equal(textOf(detail.text, 'invoice-link'), created.url)

  const pdf = await web.get(`/dashboard/invoices/${id}/pdf`)
  assert.equal(pdf.status, 200)
  assert.ok(pdf.text.startsWith('%PDF-'))

  const sent = await web.submit(`/dashboard/invoices/${id}/send`, {}, detail)
  assert.equal(sent.status, 303)
  assert.equal((await apiInvoice(m, id)).status, 'sent')
  // The link works once the invoice is sent: its page, on this test server (checkoutUrl
  // names the public origin).
  const buyerPage = await fetch(h.url + new URL(created.url).pathname)
  assert.equal(buyerPage.status, 200)
  assert.match(await buyerPage.text(), /281,00/)
  // Sending again is refused (it is no draft now): the reason, and nothing changes.
  const again = await web.submit(`/dashboard/invoices/${id}/send`, {}, `/dashboard/invoices/${id}`)
  assert.equal(again.status, 409)
  assert.ok(alertOf(again.text))

  const cancelled = await web.submit(
    `/dashboard/invoices/${id}/cancel`,
    {},
    `/dashboard/invoices/${id}`,
  )
  assert.equal(cancelled.status, 303)
  assert.equal((await apiInvoice(m, id)).status, 'cancelled')
  const list = await web.get('/dashboard/invoices?status=cancelled')
  assert.match(list.text, new RegExp(`href="/dashboard/invoices/${id}"`))

  const log = await auditText(web)
  for (const action of ['invoice.create', 'invoice.send', 'invoice.cancel']) {
    assert.ok(log.includes(actionWords(action)), action)
  }
})

test('roles, CSRF and tenancy: support creates, viewer and finance get 403, another merchant’s is 404', async (t) => {
  const h = await startTestApp(t)
  const m = await newDashboardMerchant(h)
  const other = await newDashboardMerchant(h, 'Başka Mağaza')
  const theirs = await other.client.request<{ id: string }>('POST', '/v1/invoices', {
    body: {
      storeId: other.storeId,
      amountMinor: 1_000,
      currency: 'TRY',
      lineItems: [{ name: 'x', qty: 1, unitPriceMinor: 1_000, lineTotalMinor: 1_000 }],
    },
  })
  assert.equal(theirs.status, 201, JSON.stringify(theirs.body))
  const fields = { storeId: m.storeId, ...LINES }

  const viewer = await memberWeb(h, m, 'viewer')
  const list = await viewer.get('/dashboard/invoices')
  assert.equal(list.status, 200)
  assert.doesNotMatch(list.text, /Yeni fatura/)
  assert.equal((await viewer.get('/dashboard/invoices/new')).status, 403)
  assert.equal((await viewer.submit('/dashboard/invoices', fields, list)).status, 403)
  const finance = await memberWeb(h, m, 'finance')
  assert.equal(
    (await finance.submit('/dashboard/invoices', fields, '/dashboard/invoices')).status,
    403,
  )
  const support = await memberWeb(h, m, 'support')
  assert.equal((await forged(support, '/dashboard/invoices', fields)).status, 403)
  assert.equal(await apiCount(m), 0, 'the refusals made nothing')

  // Another merchant's invoice (page, PDF, cancel) and store: the 404 page.
  assert.equal((await support.get(`/dashboard/invoices/${theirs.body.id}`)).status, 404)
  assert.equal((await support.get(`/dashboard/invoices/${theirs.body.id}/pdf`)).status, 404)
  const cancel = await support.submit(
    `/dashboard/invoices/${theirs.body.id}/cancel`,
    {},
    '/dashboard/invoices',
  )
  assert.equal(cancel.status, 404)
  assert.equal((await apiInvoice(other, theirs.body.id)).status, 'draft')
  const foreignStore = await support.submit(
    '/dashboard/invoices',
    { ...fields, storeId: other.storeId },
    '/dashboard/invoices/new',
  )
  assert.equal(foreignStore.status, 404)
  assert.equal(await apiCount(other), 1)

  const made = await support.submit('/dashboard/invoices', fields, '/dashboard/invoices/new')
  assert.equal(made.status, 303)
  assert.equal(await apiCount(m), 1)
})
