// Goal: the payment-link pages do what the API does, through the same services: the create
// form makes a link the API then reports (amount typed in lira, max payments, what to ask the
// buyer); a bad field is refused with role="alert" and makes nothing; the list and the
// detail show it with its URL and QR code; deactivate closes it (the public page answers 410)
// and both actions are in the audit log; a viewer sees the pages but may not create or
// deactivate (403); another merchant's link is the 404 page.
// Method: the real app over HTTP, a cookie-jar client, the signed API to check results.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { listMailbox } from '../../src/modules/mail/index.ts'
import type { PaymentLink } from '../../sdk/index.ts'
import { startTestApp, type TestApp } from '../helpers/app.ts'
import {
  WebClient,
  alertOf,
  newDashboardMerchant,
  signedIn,
  tableText,
  type DashboardMerchant,
} from './_web.ts'

const PASSWORD = 'correct horse battery staple'

async function viewer(h: TestApp, m: DashboardMerchant): Promise<WebClient> {
  const owner = await signedIn(h, m)
  const email = `viewer-${crypto.randomUUID()}@example.com`
  const invited = await owner.submit(
    '/dashboard/settings/team/invite',
    { email, role: 'viewer' },
    '/dashboard/settings',
  )
  assert.equal(invited.status, 303)
  const [mail] = await listMailbox(h.deps, { to: email, limit: 1 })
  const path = /\/dashboard\/invite\/[\w-]+/.exec(mail?.text ?? '')?.[0]
  assert.ok(path)
  const guest = new WebClient(h.url)
  const accepted = await guest.submit(path, { password: PASSWORD, passwordConfirm: PASSWORD }, path)
  assert.equal(accepted.status, 303)
  return signedIn(h, { email, password: PASSWORD })
}

test('create through the form, see it listed and in the API; deactivate; audit entries', async (t) => {
  const h = await startTestApp(t)
  const m = await newDashboardMerchant(h, 'Kapadokya Seramik')
  const web = await signedIn(h, m)

  const empty = await web.get('/dashboard/payment-links')
  assert.equal(empty.status, 200)
  assert.match(empty.text, /Henüz ödeme linki yok/)

  const refused = await web.submit(
    '/dashboard/payment-links',
    { storeId: m.storeId, description: 'Kupa', amount: 'on beş' },
    '/dashboard/payment-links/new',
  )
  assert.equal(refused.status, 400)
  assert.ok(alertOf(refused.text))
  assert.match(refused.text, /aria-invalid="true"/)
  const none = await m.client.request<{ items: PaymentLink[] }>('GET', '/v1/payment-links')
  assert.equal(none.body.items.length, 0)

  const made = await web.submit(
    '/dashboard/payment-links',
    {
      storeId: m.storeId,
      description: 'El yapımı kupa',
      amount: '149,90',
      maxPayments: '3',
      installments: '1',
      collectName: '1',
    },
    '/dashboard/payment-links/new',
  )
  assert.equal(made.status, 303, made.text.slice(0, 500))
  const id = /\/dashboard\/payment-links\/(plink_[0-9a-z]+)$/.exec(made.location ?? '')?.[1]
  assert.ok(id, made.location)
  const api = await m.client.request<PaymentLink>('GET', `/v1/payment-links/${id}`)
  assert.equal(api.body.amount, 14_990)
  assert.equal(api.body.maxPayments, 3)
  assert.equal(api.body.installments, true)
  assert.deepEqual(api.body.collect, { name: true })

  const detail = await web.get(`/dashboard/payment-links/${id}`)
  assert.equal(detail.status, 200)
  assert.ok(detail.text.includes(api.body.url))
  assert.ok(detail.text.includes(`/l/${new URL(api.body.url).pathname.split('/').at(-1)}/qr.svg`))
  assert.match(detail.text, /Ödeme linki oluşturuldu/)
  const list = await web.get('/dashboard/payment-links')
  const rows = tableText(list.text, 'links-table')
  assert.ok(rows.includes('El yapımı kupa') && rows.includes('₺149,90') && rows.includes('0 / 3'))

  const off = await web.submit(`/dashboard/payment-links/${id}/deactivate`, {}, detail)
  assert.equal(off.status, 303)
  const after = await m.client.request<PaymentLink>('GET', `/v1/payment-links/${id}`)
  assert.equal(after.body.active, false)
  const publicPage = await fetch(api.body.url.replace(h.config.checkoutUrl, h.url))
  assert.equal(publicPage.status, 410)

  const audit = await web.get('/dashboard/settings/audit-log')
  assert.match(audit.text, /Ödeme linki oluşturuldu/)
  assert.match(audit.text, /Ödeme linki kapatıldı/)
})

test('a viewer reads but may not create or deactivate; another merchant’s link is a 404', async (t) => {
  const h = await startTestApp(t)
  const m = await newDashboardMerchant(h)
  const link = await m.client.request<PaymentLink>('POST', '/v1/payment-links', {
    body: { storeId: m.storeId, amount: 5_000, description: 'Kupa' },
  })
  const v = await viewer(h, m)
  assert.equal((await v.get('/dashboard/payment-links')).status, 200)
  const detail = await v.get(`/dashboard/payment-links/${link.body.id}`)
  assert.equal(detail.status, 200)
  assert.doesNotMatch(detail.text, /Linki kapat/)
  assert.equal((await v.get('/dashboard/payment-links/new')).status, 403)
  const tried = await v.submit(`/dashboard/payment-links/${link.body.id}/deactivate`, {}, detail)
  assert.equal(tried.status, 403)
  const still = await m.client.request<PaymentLink>('GET', `/v1/payment-links/${link.body.id}`)
  assert.equal(still.body.active, true)

  const other = await newDashboardMerchant(h, 'Başka Mağaza')
  const theirs = await signedIn(h, other)
  assert.equal((await theirs.get(`/dashboard/payment-links/${link.body.id}`)).status, 404)
})
