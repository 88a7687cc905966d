// Goal: the hosted invoice page /invoice/{hash}: TR/EN, the lines and total, a Pay form that
// sends the buyer to the invoice's checkout session (reused on repeat), paid/expired/cancelled
// states without a Pay button, HTML error pages, strict CSP and no inline code. Method: plain
// HTTP as a browser without JavaScript makes it (form posts, manual redirects).
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { startTestApp, type TestApp } from '../helpers/app.ts'
import { CARDS } from '../helpers/payments.ts'
import { action, activatedInvoice, createInvoice, payByCard, storedStatus } from './_support.ts'

async function page(h: TestApp, path: string, init: RequestInit = {}) {
  const response = await fetch(h.url + path, { redirect: 'manual', ...init })
  return { status: response.status, headers: response.headers, text: await response.text() }
}

/** The Pay button as a plain HTML form submits it. */
function pressPay(h: TestApp, hash: string) {
  return page(h, `/invoice/${hash}/pay`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: '',
  })
}

test('the page shows the invoice in Turkish with a Pay button, and marks it viewed', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant({ name: 'Anadolu Kitap' })
  const invoice = await activatedInvoice(m, {
    dueDate: '2027-02-28T09:00:00Z',
    notes: 'İyi okumalar',
  })
  const res = await page(h, `/invoice/${invoice.publicHash}`)
  assert.equal(res.status, 200)
  assert.match(res.headers.get('content-type') ?? '', /^text\/html/)
  const csp = res.headers.get('content-security-policy') ?? ''
  assert.match(csp, /default-src 'self'/)
  assert.match(csp, /form-action 'self'/)
  assert.equal(res.headers.get('referrer-policy'), 'no-referrer')
  assert.equal(res.headers.get('x-frame-options'), 'DENY')
  assert.equal(res.headers.get('cache-control'), 'no-store')
  assert.match(res.text, /<html lang="tr">/)
  for (const expected of [
    'Anadolu Kitap',
    '₺1.234,56',
    '₺900,00',
    'Kitap: İstanbul Hatırası',
    'Kargo ücreti',
    '28 Şubat 2027',
    'İyi okumalar',
    invoice.id,
    `action="/invoice/${invoice.publicHash}/pay"`,
    `href="/v1/public/invoices/${invoice.publicHash}/pdf"`,
  ]) {
    assert.ok(res.text.includes(expected), expected)
  }
  assert.match(res.text, /<button type="submit"[^>]*id="pay-button"[\s\S]*?>Öde<\/span>/)
  // No inline script or style (the CSP forbids them); scripts only from our origin.
  assert.doesNotMatch(res.text, /<script(?![^>]*(src="\/|type="application\/json"))/)
  assert.doesNotMatch(res.text, /<style|style="/)
  assert.equal(await storedStatus(h, invoice.id), 'viewed')

  const en = await page(h, `/invoice/${invoice.publicHash}?lang=en`)
  assert.match(en.text, /<html lang="en">/)
  assert.match(en.text, />Pay<\/span>/)
  assert.ok(en.text.includes('₺1,234.56'))
  assert.match(en.headers.get('set-cookie') ?? '', /kurus_lang=en/)
  const css = await page(h, '/invoice-assets/invoice.css')
  assert.equal(css.status, 200)
  assert.match(css.headers.get('content-type') ?? '', /^text\/css/)
})

test('Pay sends the buyer to the checkout page of the invoice session, the same one again', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const invoice = await activatedInvoice(m)
  const first = await pressPay(h, invoice.publicHash)
  assert.equal(first.status, 303)
  const location = first.headers.get('location') ?? ''
  assert.match(location, /^\/s\/[0-9a-f-]{36}$/)
  const again = await pressPay(h, invoice.publicHash)
  assert.equal(again.headers.get('location'), location)
  const checkout = await page(h, location)
  assert.equal(checkout.status, 200)
  assert.ok(checkout.text.includes('₺1.234,56'))
})

test('a paid invoice shows paid, without a Pay button; pressing Pay again comes back here', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const invoice = await activatedInvoice(m)
  const pressed = await pressPay(h, invoice.publicHash)
  const sessionId = (pressed.headers.get('location') ?? '').slice('/s/'.length)
  const charged = await payByCard(h, sessionId, CARDS.frictionless)
  assert.equal(charged.status, 201)
  // The checkout returns to the invoice page with its query.
  const back = await page(
    h,
    `/invoice/${invoice.publicHash}?sessionId=${sessionId}&paymentId=${charged.body.paymentId}&status=captured`,
  )
  assert.equal(back.status, 200)
  assert.ok(back.text.includes('Ödendi'))
  assert.ok(back.text.includes('tarihinde ödendi'))
  assert.ok(!back.text.includes('id="pay-button"'))
  assert.equal(await storedStatus(h, invoice.id), 'paid')
  const late = await pressPay(h, invoice.publicHash)
  assert.equal(late.status, 303)
  assert.equal(late.headers.get('location'), `/invoice/${invoice.publicHash}`)
})

test('a failed payment return shows an alert and keeps the Pay button', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const invoice = await activatedInvoice(m)
  const res = await page(h, `/invoice/${invoice.publicHash}?status=failed&lang=en`)
  assert.match(res.text, /role="alert"[\s\S]*could not be completed/)
  assert.ok(res.text.includes('id="pay-button"'))
})

test('cancelled and expired invoices have no Pay button; drafts and unknown links are 404 pages', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const cancelled = await activatedInvoice(m)
  assert.equal((await action(m, cancelled.id, 'cancel')).status, 200)
  const c = await page(h, `/invoice/${cancelled.publicHash}`)
  assert.equal(c.status, 200)
  assert.ok(c.text.includes('İptal edildi'))
  assert.ok(!c.text.includes('id="pay-button"'))

  const expiring = await activatedInvoice(m, {
    expiresAt: new Date(h.clock.now().getTime() + 60_000).toISOString(),
  })
  h.clock.advance(61_000)
  const e = await page(h, `/invoice/${expiring.publicHash}?lang=en`)
  assert.ok(e.text.includes('has expired'))
  assert.ok(!e.text.includes('id="pay-button"'))

  const draft = await createInvoice(m)
  const d = await page(h, `/invoice/${draft.publicHash}`)
  assert.equal(d.status, 404)
  assert.match(d.headers.get('content-type') ?? '', /^text\/html/)
  assert.ok(d.text.includes('Fatura bulunamadı'))
  const unknown = await page(h, '/invoice/AAAAAAAAAAAAAAAAAAAAAA')
  assert.equal(unknown.status, 404)
  const malformed = await page(h, '/invoice/x')
  assert.equal(malformed.status, 400)
  assert.match(malformed.headers.get('content-type') ?? '', /^text\/html/)
})

test('Pay while the merchant may not take payments shows an HTML page (403)', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const invoice = await activatedInvoice(m)
  await h.operator('PUT', `/operator/v1/merchants/${m.merchantId}/kyc`, { status: 'suspended' })
  const res = await pressPay(h, invoice.publicHash)
  assert.equal(res.status, 403)
  assert.match(res.headers.get('content-type') ?? '', /^text\/html/)
  assert.ok(res.text.includes('Şu anda ödeme alınamıyor'))
})
