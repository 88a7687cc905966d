// Goal: payment links (CONTRACT.md "Payment links"): the API (create, get, keyset list,
// deactivate, validation and metadata limits), the public page /l/{hash} (TR/EN, strict CSP,
// creates nothing on GET, the Pay form makes session `<linkId>:<n>` and 303s to /s/{id}),
// the 410 page of a deactivated, expired or used-up link, the QR code, `paymentLinkId` on
// the payments made through it and `paymentsCount` counting the captured ones. Method:
// signed HTTP for the API, plain HTTP as a browser without JavaScript makes it for the page,
// the checkout's public API for the card; the rows are read back from the real database.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { sql } from 'kysely'
import type { PaymentLink } from '../../sdk/index.ts'
import { startTestApp, type TestApp } from '../helpers/app.ts'
import { CARDS } from '../helpers/payments.ts'
import { createLink, hashOf, page, payByCard, pressPay, sessionFromPay } from './_support.ts'

interface ErrorBody {
  code: string
  details?: { field: string; reason: string }[]
}

async function sessionCount(h: TestApp, linkId: string): Promise<number> {
  const r = await sql<{ n: string }>`select count(*) as n from payment_sessions
    where payment_link_id = ${linkId}`.execute(h.deps.db)
  return Number(r.rows[0]?.n)
}

test('create, get, list and deactivate; validation and metadata limits', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const link = await createLink(m, {
    maxPayments: 2,
    metadata: { sku: 'KUPA-01' },
    collect: { name: true },
    installments: true,
  })
  assert.match(link.id, /^plink_[0-9a-z]{24}$/)
  assert.equal(link.url, `${h.config.checkoutUrl}/l/${hashOf(link)}`)
  assert.match(hashOf(link), /^[A-Za-z0-9_-]{22}$/)
  assert.equal(link.qrUrl, `${link.url}/qr.svg`)
  assert.equal(link.active, true)
  assert.equal(link.status, 'active')
  assert.equal(link.paymentsCount, 0)
  assert.equal(link.amount, 14_990)
  assert.equal(link.description, 'El yapımı kupa')
  assert.deepEqual(link.metadata, { sku: 'KUPA-01' })
  assert.deepEqual(link.collect, { name: true })
  assert.equal(typeof link.createdAt, 'string')

  const got = await m.client.request<PaymentLink>('GET', `/v1/payment-links/${link.id}`)
  assert.deepEqual(got.body, link)
  const second = await createLink(m, { amount: 5_000 })
  const third = await createLink(m, { amount: 6_000 })
  const first = await m.client.request<{ items: PaymentLink[]; nextCursor: string | null }>(
    'GET',
    '/v1/payment-links',
    { query: { limit: 2 } },
  )
  assert.deepEqual(
    first.body.items.map((l) => l.id),
    [third.id, second.id],
  )
  assert.ok(first.body.nextCursor)
  const rest = await m.client.request<{ items: PaymentLink[]; nextCursor: string | null }>(
    'GET',
    '/v1/payment-links',
    { query: { limit: 2, cursor: first.body.nextCursor } },
  )
  assert.deepEqual(
    rest.body.items.map((l) => l.id),
    [link.id],
  )
  assert.equal(rest.body.nextCursor, null)

  const off = await m.client.request<PaymentLink>(
    'POST',
    `/v1/payment-links/${link.id}/deactivate`,
    { body: {} },
  )
  assert.equal(off.status, 200)
  assert.equal(off.body.active, false)
  assert.equal(off.body.status, 'deactivated')
  assert.ok(off.body.deactivatedAt)
  const again = await m.client.request<PaymentLink>(
    'POST',
    `/v1/payment-links/${link.id}/deactivate`,
    { body: {} },
  )
  assert.equal(again.status, 200)
  assert.equal(again.body.deactivatedAt, off.body.deactivatedAt)

  // Another merchant's link is a 404, as an unknown one.
  const other = await h.newMerchant()
  const foreign = await other.client.request<ErrorBody>('GET', `/v1/payment-links/${link.id}`)
  assert.equal(foreign.status, 404)
  assert.equal(foreign.body.code, 'SVC-RES-3301')

  const bad = async (body: Record<string, unknown>, field: string) => {
    const res = await m.client.request<ErrorBody>('POST', '/v1/payment-links', {
      body: { storeId: m.storeId, amount: 14_990, description: 'x', ...body },
    })
    assert.equal(res.status, 400, `${field}: ${JSON.stringify(res.body)}`)
    assert.equal(res.body.code, 'SVC-VAL-3001')
    assert.ok(
      res.body.details?.some((d) => d.field.includes(field)),
      `${field}: ${JSON.stringify(res.body.details)}`,
    )
  }
  await bad({ amount: 99 }, 'amount')
  await bad({ amount: 10.5 }, 'amount')
  await bad({ maxPayments: 0 }, 'maxPayments')
  await bad({ expiresAt: new Date(Date.now() - 60_000).toISOString() }, 'expiresAt')
  await bad({ storeId: other.storeId }, 'storeId')
  await bad({ description: '' }, 'description')
  await bad({ returnUrl: 'javascript:alert(1)' }, 'returnUrl')
  await bad({ metadata: { ['k'.repeat(41)]: 'v' } }, 'metadata.')
  await bad({ metadata: { note: 'v'.repeat(501) } }, 'metadata.note')
  const fifty = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`k${i}`, 'v']))
  await bad({ metadata: fifty, collect: { email: true } }, 'metadata')
  await bad({ unknownField: 1 }, '')
})

test('the page: shows the link, creates nothing on GET; Pay makes session <linkId>:<n> and 303s', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant({ name: 'Kapadokya Seramik' })
  const link = await createLink(m, { metadata: { sku: 'KUPA-01' }, installments: true })
  const hash = hashOf(link)

  const tr = await page(h, `/l/${hash}`)
  assert.equal(tr.status, 200)
  assert.match(tr.headers.get('content-type') ?? '', /^text\/html/)
  const csp = tr.headers.get('content-security-policy') ?? ''
  assert.match(csp, /default-src 'self'/)
  assert.match(csp, /form-action 'self'/)
  assert.equal(tr.headers.get('x-frame-options'), 'DENY')
  assert.equal(tr.headers.get('cache-control'), 'no-store')
  assert.match(tr.text, /<html lang="tr">/)
  for (const expected of [
    'Kapadokya Seramik',
    '₺149,90',
    'El yapımı kupa',
    `action="/l/${hash}"`,
  ]) {
    assert.ok(tr.text.includes(expected), expected)
  }
  assert.match(tr.text, /id="pay-button"[\s\S]*?₺149,90 Öde/)
  assert.doesNotMatch(tr.text, /<script(?![^>]*(src="\/|type="application\/json"))/)
  assert.doesNotMatch(tr.text, /<style|style="/)
  assert.doesNotMatch(tr.text, /https?:\/\/(?!www\.w3\.org)/, 'nothing from another origin')
  const en = await page(h, `/l/${hash}?lang=en`)
  assert.match(en.text, /<html lang="en">/)
  assert.match(en.text, /Pay ₺149\.90/)
  // Link previews fetch the page: nothing is made by reading it.
  await page(h, `/l/${hash}`)
  assert.equal(await sessionCount(h, link.id), 0)

  const s1 = await sessionFromPay(h, hash)
  const s2 = await sessionFromPay(h, hash)
  assert.notEqual(s1, s2)
  const sessions = await sql<{ id: string; transaction_id: string; metadata: unknown }>`
    select id, transaction_id, metadata from payment_sessions
     where payment_link_id = ${link.id} order by created_at, transaction_id`.execute(h.deps.db)
  assert.deepEqual(sessions.rows.map((r) => r.transaction_id).sort(), [
    `${link.id}:1`,
    `${link.id}:2`,
  ])
  const checkout = await page(h, `/s/${s1}`)
  assert.equal(checkout.status, 200)
  assert.ok(checkout.text.includes('₺149,90'))

  // The buyer pays: the payment carries paymentLinkId and the link's metadata; the count moves.
  const paid = await payByCard(h, s1)
  assert.equal(paid.status, 201, JSON.stringify(paid.body))
  assert.equal(paid.body.status, 'captured')
  const payment = await m.client.request<{
    paymentLinkId: string | null
    metadata: Record<string, string>
    transactionId: string
  }>('GET', `/v1/payments/${paid.body.paymentId}`)
  assert.equal(payment.body.paymentLinkId, link.id)
  assert.equal(payment.body.metadata['sku'], 'KUPA-01')
  assert.match(payment.body.transactionId, new RegExp(`^${link.id}:[12]$`))
  const after = await m.client.request<PaymentLink>('GET', `/v1/payment-links/${link.id}`)
  assert.equal(after.body.paymentsCount, 1)
  assert.equal(after.body.status, 'active')

  // Back from the checkout with a captured payment: thanks, not a form.
  const back = await page(h, `/l/${hash}?status=captured&paymentId=${paid.body.paymentId}`)
  assert.equal(back.status, 200)
  assert.match(back.text, /Ödemeniz alındı/)

  const qr = await page(h, `/l/${hash}/qr.svg`)
  assert.equal(qr.status, 200)
  assert.match(qr.headers.get('content-type') ?? '', /^image\/svg\+xml/)
  assert.match(qr.text, /^<svg[^>]*xmlns="http:\/\/www\.w3\.org\/2000\/svg"/)

  const unknown = await page(h, '/l/AAAAAAAAAAAAAAAAAAAAAA')
  assert.equal(unknown.status, 404)
  assert.match(unknown.text, /Ödeme linki bulunamadı/)
})

test('collect: the page asks for the fields, refuses bad ones (400) and puts them in metadata', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const link = await createLink(m, { collect: { name: true, email: true, phone: true } })
  const hash = hashOf(link)
  const shown = await page(h, `/l/${hash}`)
  for (const name of ['name', 'email', 'phone']) {
    assert.match(shown.text, new RegExp(`name="${name}"`), name)
  }
  const refused = await pressPay(h, hash, { name: 'Ayşe Yılmaz', email: 'not-an-email' })
  assert.equal(refused.status, 400)
  assert.match(refused.text, /aria-invalid="true"/)
  assert.ok(refused.text.includes('value="Ayşe Yılmaz"'))
  assert.equal(await sessionCount(h, link.id), 0)
  const sessionId = await sessionFromPay(h, hash, {
    name: 'Ayşe Yılmaz',
    email: 'ayse@example.com',
    phone: '+90 532 000 00 00',
  })
  const paid = await payByCard(h, sessionId)
  const payment = await m.client.request<{ metadata: Record<string, string> }>(
    'GET',
    `/v1/payments/${paid.body.paymentId}`,
  )
  assert.deepEqual(payment.body.metadata, {
    customerName: 'Ayşe Yılmaz',
    customerEmail: 'ayse@example.com',
    customerPhone: '+90 532 000 00 00',
  })
})

test('410 pages: deactivated, expired, used up; declined payments do not count', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()

  const off = await createLink(m)
  await m.client.request('POST', `/v1/payment-links/${off.id}/deactivate`, { body: {} })
  const offPage = await page(h, `/l/${hashOf(off)}`)
  assert.equal(offPage.status, 410)
  assert.match(offPage.text, /Bu link artık kullanılmıyor/)
  assert.doesNotMatch(offPage.text, /id="pay-button"/)
  assert.equal((await pressPay(h, hashOf(off))).status, 410)
  assert.equal(await sessionCount(h, off.id), 0)

  const soon = await createLink(m, {
    expiresAt: new Date(h.clock.now().getTime() + 60_000).toISOString(),
  })
  h.clock.advance(61_000)
  const expired = await page(h, `/l/${hashOf(soon)}?lang=en`)
  assert.equal(expired.status, 410)
  assert.match(expired.text, /This link has expired/)
  const got = await m.client.request<PaymentLink>('GET', `/v1/payment-links/${soon.id}`)
  assert.equal(got.body.status, 'expired')
  assert.equal(got.body.active, false)

  // One payment: a declined attempt leaves it open; the captured one uses it up.
  const once = await createLink(m, { maxPayments: 1 })
  const hash = hashOf(once)
  const s1 = await sessionFromPay(h, hash)
  // The session is open: nobody else may start the last payment meanwhile (409 page).
  const busy = await pressPay(h, hash)
  assert.equal(busy.status, 409)
  assert.match(busy.text, /id="link-busy"/)
  const declined = await payByCard(h, s1, CARDS.declined)
  assert.equal(declined.status, 402)
  const paid = await payByCard(h, s1)
  assert.equal(paid.body.status, 'captured')
  const used = await m.client.request<PaymentLink>('GET', `/v1/payment-links/${once.id}`)
  assert.equal(used.body.paymentsCount, 1)
  assert.equal(used.body.status, 'completed')
  assert.equal(used.body.active, false)
  const usedPage = await page(h, `/l/${hash}`)
  assert.equal(usedPage.status, 410)
  assert.match(usedPage.text, /Bu link tükendi/)
  assert.equal((await pressPay(h, hash)).status, 410)
})

test('an abandoned session frees its place when it expires', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const link = await createLink(m, { maxPayments: 1 })
  const hash = hashOf(link)
  await sessionFromPay(h, hash)
  assert.equal((await pressPay(h, hash)).status, 409)
  // 30 minutes of session life plus the 2-minute grace.
  h.clock.advance(33 * 60_000)
  const next = await sessionFromPay(h, hash)
  const paid = await payByCard(h, next)
  assert.equal(paid.body.status, 'captured')
  const got = await m.client.request<PaymentLink>('GET', `/v1/payment-links/${link.id}`)
  assert.equal(got.body.paymentsCount, 1)
})
