// Goal: the customers pages show what the customers API holds, through the same services:
// the list finds a customer by id, email and phone, in keyset pages; the detail shows saved
// cards, payments and subscriptions; removing a card (support may, a viewer or finance may
// not) revokes it as the API's DELETE does, and is audited; a forged POST without CSRF token
// changes nothing; another merchant's customer is the 404 page.
// Method: the real app over HTTP, a cookie-jar client, the signed API to check results.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { startTestApp } from '../helpers/app.ts'
import { createSubscription, customerWithCard } from '../subscriptions/_support.ts'
import { actionWords, auditText, forged, memberWeb } from './_sections.ts'
import { newDashboardMerchant, paidPayment, signedIn, tableText, textOf } from './_web.ts'

async function newCustomer(
  m: Awaited<ReturnType<typeof newDashboardMerchant>>,
  extra: Record<string, unknown> = {},
) {
  const email = `buyer-${crypto.randomUUID()}@example.com`
  const res = await m.client.request<{ id: string }>('POST', '/v1/customers', {
    body: { email, name: 'Ayşe Yılmaz', externalId: crypto.randomUUID(), ...extra },
  })
  assert.equal(res.status, 201, JSON.stringify(res.body))
  return { id: res.body.id, email }
}

async function cardsOf(m: Awaited<ReturnType<typeof newDashboardMerchant>>, id: string) {
  const res = await m.client.request<{ items: { id: string }[] }>(
    'GET',
    `/v1/customers/${id}/cards`,
  )
  assert.equal(res.status, 200)
  return res.body.items
}

test('the list finds a customer by id, email and phone, in keyset pages', async (t) => {
  const h = await startTestApp(t)
  const m = await newDashboardMerchant(h)
  const phoned = await newCustomer(m, { phone: '+905321234567' })
  for (let i = 0; i < 25; i++) await newCustomer(m)
  const web = await signedIn(h, m)

  const first = await web.get('/dashboard/customers')
  assert.equal(first.status, 200)
  const next = /href="(\/dashboard\/customers\?after=[^"]+)"/.exec(first.text)?.[1]
  assert.ok(next, 'a next-page link')
  const second = await web.get(next.replaceAll('&amp;', '&'))
  const both = tableText(first.text, 'customers-table') + tableText(second.text, 'customers-table')
  assert.equal(both.split(phoned.email).length - 1, 1, 'the oldest customer once, on page two')
  assert.ok(tableText(second.text, 'customers-table').includes(phoned.email))

  for (const q of [phoned.id, phoned.email.toUpperCase(), '+90 532 123 45 67']) {
    const found = await web.get(`/dashboard/customers?q=${encodeURIComponent(q)}`)
    assert.equal(found.status, 200, q)
    const rows = tableText(found.text, 'customers-table')
    assert.ok(rows.includes(phoned.email), `found by ${q}`)
    assert.equal((rows.match(/@example\.com/g) ?? []).length, 1, `only the match for ${q}`)
  }
  const none = await web.get('/dashboard/customers?q=nobody%40example.com')
  assert.match(none.text, /Bu aramayla eşleşen müşteri yok/)
  // A phone number that is none: the service's 400, shown in role="alert", not a 5xx.
  const bad = await web.get('/dashboard/customers?q=abc')
  assert.equal(bad.status, 400)
  assert.match(bad.text, /role="alert"/)
})

test('the detail shows saved cards, payments and subscriptions; another merchant’s is the 404 page', async (t) => {
  const h = await startTestApp(t)
  const m = await newDashboardMerchant(h)
  const other = await newDashboardMerchant(h, 'Başka Mağaza')
  const { customerId } = await customerWithCard(m.client)
  const sub = await createSubscription(m, customerId)
  const paid = await paidPayment(m, 12_345, { customerId })
  const theirs = await customerWithCard(other.client)
  const web = await signedIn(h, m)

  const page = await web.get(`/dashboard/customers/${customerId}`)
  assert.equal(page.status, 200)
  assert.match(tableText(page.text, 'cards-table'), /•••• 6111/)
  assert.match(tableText(page.text, 'customer-payments-table'), /₺123,45/)
  assert.ok(tableText(page.text, 'customer-payments-table').includes(paid.transactionId))
  assert.match(page.text, new RegExp(`href="/dashboard/subscriptions/${sub.id}"`))
  assert.match(tableText(page.text, 'customer-subscriptions-table'), /₺149,00/)

  const foreign = await web.get(`/dashboard/customers/${theirs.customerId}`)
  assert.equal(foreign.status, 404)
  assert.match(foreign.text, /Sayfa bulunamadı/)
  assert.equal((await web.get('/dashboard/customers/cus_nosuch')).status, 404)
})

test('removing a saved card: support may, viewer and finance may not, CSRF is required, it is audited', async (t) => {
  const h = await startTestApp(t)
  const m = await newDashboardMerchant(h)
  const other = await newDashboardMerchant(h, 'Başka Mağaza')
  const { customerId } = await customerWithCard(m.client)
  const theirs = await customerWithCard(other.client)
  const [card] = await cardsOf(m, customerId)
  assert.ok(card)
  const path = `/dashboard/customers/${customerId}/cards/${card.id}/remove`

  const viewer = await memberWeb(h, m, 'viewer')
  const viewerPage = await viewer.get(`/dashboard/customers/${customerId}`)
  assert.equal(viewerPage.status, 200)
  assert.doesNotMatch(viewerPage.text, /Kartı sil/)
  assert.equal((await viewer.submit(path, {}, viewerPage)).status, 403)
  const finance = await memberWeb(h, m, 'finance')
  assert.equal((await finance.submit(path, {}, `/dashboard/customers/${customerId}`)).status, 403)

  const support = await memberWeb(h, m, 'support')
  assert.equal((await forged(support, path)).status, 403)
  assert.equal((await cardsOf(m, customerId)).length, 1, 'the refusals changed nothing')

  // Another merchant's customer and card, with a valid token: the 404 page, nothing removed.
  const [theirCard] = await cardsOf(other, theirs.customerId)
  const foreign = await support.submit(
    `/dashboard/customers/${theirs.customerId}/cards/${theirCard?.id ?? ''}/remove`,
    {},
    '/dashboard/customers',
  )
  assert.equal(foreign.status, 404)
  assert.equal((await cardsOf(other, theirs.customerId)).length, 1)

  const page = await support.get(`/dashboard/customers/${customerId}`)
  assert.match(page.text, /Kartı sil/)
  const done = await support.submit(path, {}, page)
  assert.equal(done.status, 303)
  const after = await support.get(done.location ?? '')
  assert.match(textOf(after.text, 'cards-table') ?? '', /Kayıt yok/)
  assert.match(after.text, /role="status"[\s\S]*Kart silindi/)
  assert.deepEqual(await cardsOf(m, customerId), [])
  // The same form sent again (a second click): the reason on the customer's page, not a 5xx.
  const twice = await support.submit(path, {}, after)
  assert.equal(twice.status, 404)
  assert.match(twice.text, /role="alert"/)
  assert.match(twice.text, /Kayıtlı kartlar/)
  const log = await auditText(await signedIn(h, m))
  assert.ok(log.includes(actionWords('customer.card_remove')) && log.includes(customerId))
})
