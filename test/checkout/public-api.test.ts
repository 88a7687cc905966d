// Goal: the hosted checkout's browser API, its pages' HTTP behaviour (headers, HTML errors,
// language), 3DS via the sandbox ACS page for checkout and direct charges, QR and card update.
// Method: unsigned HTTP calls as a browser makes them, state verified through the signed API.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { eventsForResource } from '../../src/modules/events/index.ts'
import { legsForPayment } from '../../src/modules/ledger/index.ts'
import { emvCrcValid, parseTlv } from '../../src/modules/payments/index.ts'
import { startTestApp } from '../helpers/app.ts'
import { CARDS, tokenize } from '../helpers/payments.ts'
import { browser, buyerCard, createCustomer, createSession, returnQuery } from './_support.ts'

const CSP =
  "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; " +
  "frame-ancestors 'none'; form-action 'self'"

interface PayBody {
  sessionId: string
  paymentId: string
  status: string
  redirectUrl: string | null
  challengeUrl: string | null
}

test('the public session view shows what the buyer needs and nothing of the merchant', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant({ name: 'Anadolu Kitap' })
  const { sessionId } = await createSession(m.client, {
    amount: 12_345,
    description: 'Sipariş #42',
    installmentEnabled: true,
  })
  const res = await browser(h, 'GET', `/v1/public/sessions/${sessionId}`)
  assert.equal(res.status, 200)
  assert.equal(res.headers.get('cache-control'), 'no-store')
  assert.deepEqual(
    { ...res.body, expiresAt: undefined },
    {
      sessionId,
      mode: 'payment',
      status: 'active',
      merchantName: 'Anadolu Kitap',
      amount: 12_345,
      currency: 'TRY',
      description: 'Sipariş #42',
      expiresAt: undefined,
      installmentEnabled: true,
      saveCardAvailable: false,
      qrPayload: null,
      paymentId: null,
      paymentStatus: null,
      redirectUrl: null,
    },
  )
  assert.equal((await browser(h, 'GET', '/v1/public/sessions/not-a-uuid')).status, 404)
  const unknown = await browser(h, 'GET', `/v1/public/sessions/${crypto.randomUUID()}`)
  assert.equal(unknown.status, 404)
  assert.equal(unknown.body['code'], 'SVC-RES-3301')
})

test('installments follow the BIN and the session flag, in buyer terms only', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const on = await createSession(m.client, { amount: 10_000, installmentEnabled: true })
  const quote = await browser<{ options: Record<string, number>[]; brand: string }>(
    h,
    'GET',
    `/v1/public/sessions/${on.sessionId}/installments?bin=415565`,
  )
  assert.equal(quote.status, 200)
  assert.equal(quote.body.brand, 'visa')
  assert.deepEqual(
    quote.body.options.map((o) => o['installmentCount']),
    [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12],
  )
  const three = quote.body.options[2]!
  assert.deepEqual(three, {
    installmentCount: 3,
    installmentAmount: 3333,
    firstInstallmentAmount: 3334,
    totalAmount: 10_000,
  })
  assert.equal(JSON.stringify(quote.body).includes('commission'), false)

  const off = await createSession(m.client, { amount: 10_000 })
  const single = await browser<{ options: unknown[] }>(
    h,
    'GET',
    `/v1/public/sessions/${off.sessionId}/installments?bin=415565`,
  )
  assert.equal(single.body.options.length, 1)
  const bad = await browser(h, 'GET', `/v1/public/sessions/${on.sessionId}/installments?bin=41`)
  assert.equal(bad.status, 400)
  // Installments a session does not offer are refused before any card is stored.
  const refused = await browser(h, 'POST', `/v1/public/sessions/${off.sessionId}/pay`, {
    json: { card: buyerCard(CARDS.frictionless), installmentCount: 3 },
  })
  assert.equal(refused.status, 400)
})

test('paying in 3 installments captures and returns to the merchant; no card data leaks', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const { sessionId } = await createSession(m.client, { amount: 30_000, installmentEnabled: true })
  const res = await browser<PayBody>(h, 'POST', `/v1/public/sessions/${sessionId}/pay`, {
    json: { card: buyerCard(CARDS.frictionless), installmentCount: 3 },
  })
  assert.equal(res.status, 201, res.text)
  assert.equal(res.body.status, 'captured')
  assert.equal(res.body.challengeUrl, null)
  assert.deepEqual(returnQuery(res.body.redirectUrl ?? ''), {
    order: '42',
    sessionId,
    paymentId: res.body.paymentId,
    status: 'captured',
  })
  assert.equal(res.text.includes(CARDS.frictionless), false)
  const payment = await m.client.request<Record<string, unknown>>(
    'GET',
    `/v1/payments/${res.body.paymentId}`,
  )
  assert.equal(payment.body['status'], 'captured')
  assert.equal(payment.body['installmentCount'], 3)
  assert.equal(payment.body['amount'], 30_000)
  const view = await browser(h, 'GET', `/v1/public/sessions/${sessionId}`)
  assert.equal(view.body['status'], 'completed')
  assert.equal(view.body['paymentStatus'], 'captured')
  const again = await browser(h, 'POST', `/v1/public/sessions/${sessionId}/pay`, {
    json: { card: buyerCard(CARDS.frictionless) },
  })
  assert.equal(again.status, 409)
  const quote = await browser(h, 'GET', `/v1/public/sessions/${sessionId}/installments?bin=415565`)
  assert.equal(quote.status, 409)
  for (const line of h.logs) {
    assert.equal(line.includes(CARDS.frictionless), false, 'a card number reached the logs')
    assert.equal(line.includes('bin=415565'), false, 'card digits reached the logs')
  }
})

test('a decline is 402 with its code, the session stays open, and another card pays', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const { sessionId } = await createSession(m.client, { amount: 5_000 })
  const declined = await browser(h, 'POST', `/v1/public/sessions/${sessionId}/pay`, {
    json: { card: buyerCard(CARDS.insufficientFunds) },
  })
  assert.equal(declined.status, 402)
  assert.equal(declined.body['code'], 'SVC-PAY-3501')
  assert.equal(declined.body['declineCode'], 'insufficient_funds')
  assert.match(String(declined.body['paymentId']), /^pay_/)
  const badCard = await browser<{ details: { field: string }[] }>(
    h,
    'POST',
    `/v1/public/sessions/${sessionId}/pay`,
    { json: { card: { ...buyerCard('4155650100416112'), cvc: '12' } } },
  )
  assert.equal(badCard.status, 400)
  assert.deepEqual(
    badCard.body.details.map((d) => d.field),
    ['card.number', 'card.cvc'],
  )
  assert.equal(badCard.text.includes('4155650100416112'), false)
  const paid = await browser<PayBody>(h, 'POST', `/v1/public/sessions/${sessionId}/pay`, {
    json: { card: buyerCard(CARDS.debit) },
  })
  assert.equal(paid.status, 201, paid.text)
  assert.equal(paid.body.status, 'captured')
})

test('after 5 failed attempts the session refuses more with 429', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const { sessionId } = await createSession(m.client, { amount: 5_000 })
  for (let i = 0; i < 5; i++) {
    const res = await browser(h, 'POST', `/v1/public/sessions/${sessionId}/pay`, {
      json: { card: buyerCard(CARDS.declined) },
    })
    assert.equal(res.status, 402)
  }
  const sixth = await browser(h, 'POST', `/v1/public/sessions/${sessionId}/pay`, {
    json: { card: buyerCard(CARDS.frictionless) },
  })
  assert.equal(sixth.status, 429)
  assert.equal(sixth.body['code'], 'SVC-GW-1004')
})

test('a checkout challenge: ACS page, OTP, the checkout completes 3DS and returns', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant({ name: 'Boğaziçi Çiçek' })
  const { sessionId } = await createSession(m.client, { amount: 7_500 })
  const pay = await browser<PayBody>(h, 'POST', `/v1/public/sessions/${sessionId}/pay`, {
    json: { card: buyerCard(CARDS.challenge) },
  })
  assert.equal(pay.status, 201, pay.text)
  assert.equal(pay.body.status, 'pending_3ds')
  assert.match(pay.body.challengeUrl ?? '', /^\/3ds\/pay_[0-9a-z]+\?correlationId=/)
  assert.equal(pay.body.redirectUrl, null)

  const acs = await browser(h, 'GET', pay.body.challengeUrl ?? '')
  assert.equal(acs.status, 200)
  assert.equal(acs.headers.get('content-security-policy'), CSP)
  assert.match(acs.text, /autocomplete="one-time-code"/)
  assert.match(acs.text, /Boğaziçi Çiçek/)
  assert.equal(acs.text.includes(CARDS.challenge), false)
  const correlationId = new URL(h.url + (pay.body.challengeUrl ?? '')).searchParams.get(
    'correlationId',
  )
  const submitted = await browser(h, 'POST', `/3ds/${pay.body.paymentId}`, {
    form: { correlationId: correlationId ?? '', otp: '123456' },
  })
  assert.equal(submitted.status, 303)
  const next = submitted.headers.get('location') ?? ''
  assert.match(next, new RegExp(`^/s/${sessionId}/3ds-complete\\?`))
  const done = await browser(h, 'GET', next)
  assert.equal(done.status, 200)
  assert.match(done.text, /data-auto-redirect="\d+"/)
  const link = /id="notice-action"\s+href="([^"]+)"/.exec(done.text)?.[1]?.replaceAll('&amp;', '&')
  assert.deepEqual(returnQuery(link ?? ''), {
    order: '42',
    sessionId,
    paymentId: pay.body.paymentId,
    status: 'captured',
  })
  const payment = await m.client.request<Record<string, unknown>>(
    'GET',
    `/v1/payments/${pay.body.paymentId}`,
  )
  assert.equal(payment.body['status'], 'captured')
  // A second submit of the finished challenge is refused with a page, not a second charge.
  const replay = await browser(h, 'POST', `/3ds/${pay.body.paymentId}`, {
    form: { correlationId: correlationId ?? '', otp: '123456' },
  })
  assert.equal(replay.status, 409)
  assert.match(replay.headers.get('content-type') ?? '', /text\/html/)
})

test('a direct API charge: the ACS returns to the returnUrl with paymentId, correlationId, pares', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const { transactionId } = await createSession(m.client, { amount: 4_200 })
  const cardToken = await tokenize(m.client, CARDS.challenge)
  const charge = await m.client.request<{ paymentId: string; challengeUrl: string }>(
    'POST',
    '/v1/payments/card',
    { body: { transactionId, amount: 4_200, currency: 'TRY', cardToken } },
  )
  assert.equal(charge.status, 201)
  const challenge = new URL(charge.body.challengeUrl)
  const acs = await browser(h, 'GET', challenge.pathname + challenge.search)
  assert.equal(acs.status, 200)
  // The form's redirect leaves our origin for the merchant's: the CSP names that origin, which
  // may also frame the page (Kuruş.js's 3-D Secure modal; decision 0038), so no X-Frame-Options.
  assert.equal(
    acs.headers.get('content-security-policy'),
    `${CSP.replace("frame-ancestors 'none'", 'frame-ancestors https://shop.example')} https://shop.example`,
  )
  assert.equal(acs.headers.get('x-frame-options'), null)
  const correlationId = challenge.searchParams.get('correlationId') ?? ''
  const submitted = await browser(h, 'POST', challenge.pathname, {
    form: { correlationId, otp: '123456' },
  })
  assert.equal(submitted.status, 303)
  const query = returnQuery(submitted.headers.get('location') ?? '')
  assert.equal(query['paymentId'], charge.body.paymentId)
  assert.equal(query['correlationId'], correlationId)
  assert.ok(query['pares'])
  const callback = await m.client.request<Record<string, unknown>>(
    'POST',
    `/v1/payments/${charge.body.paymentId}/3ds-callback`,
    { body: { pares: query['pares'], correlationId } },
  )
  assert.equal(callback.status, 200, JSON.stringify(callback.body))
  assert.equal(callback.body['status'], 'captured')
})

test('a wrong correlation id shows an HTML error page and changes nothing', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const { sessionId } = await createSession(m.client, { amount: 7_500 })
  const pay = await browser<PayBody>(h, 'POST', `/v1/public/sessions/${sessionId}/pay`, {
    json: { card: buyerCard(CARDS.challenge) },
  })
  const page = await browser(h, 'GET', `/3ds/${pay.body.paymentId}?correlationId=forged`)
  assert.equal(page.status, 400)
  assert.match(page.headers.get('content-type') ?? '', /text\/html/)
  assert.equal(page.headers.get('content-security-policy'), CSP)
  const missing = await browser(h, 'GET', `/3ds/pay_nothere?correlationId=x`)
  assert.equal(missing.status, 404)
  const payment = await m.client.request<Record<string, unknown>>(
    'GET',
    `/v1/payments/${pay.body.paymentId}`,
  )
  assert.equal(payment.body['status'], 'pending_3ds')
})

test('pages carry the security headers, escape merchant text and pick the language', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant({ name: '<script>alert(1)</script> & Co' })
  const { sessionId } = await createSession(m.client, {
    amount: 1_000,
    description: '"><img src=x onerror=alert(1)>',
  })
  const tr = await browser(h, 'GET', `/s/${sessionId}`)
  assert.equal(tr.status, 200)
  assert.equal(tr.headers.get('content-security-policy'), CSP)
  assert.equal(tr.headers.get('x-content-type-options'), 'nosniff')
  assert.equal(tr.headers.get('referrer-policy'), 'no-referrer')
  assert.equal(tr.headers.get('strict-transport-security'), null)
  assert.equal(tr.text.includes('<script>alert(1)'), false)
  assert.equal(tr.text.includes('<img src=x'), false)
  assert.match(tr.text, /&lt;script&gt;alert\(1\)&lt;\/script&gt; &amp; Co/)
  assert.match(tr.text, /<html lang="tr">/)
  assert.match(tr.text, /autocomplete="cc-number"/)
  assert.match(tr.text, /autocomplete="cc-exp"/)
  assert.match(tr.text, /autocomplete="cc-csc"/)
  assert.match(tr.text, /autocomplete="cc-name"/)
  assert.equal((tr.text.match(/type="submit"/g) ?? []).length, 1)
  // No inline script or style: every script is ours, by src; no style attributes.
  assert.equal(/<script(?![^>]*(src="\/assets\/|type="application\/json"))/.test(tr.text), false)
  assert.equal(/\sstyle=/.test(tr.text), false)

  const en = await browser(h, 'GET', `/s/${sessionId}`, {
    headers: { 'accept-language': 'en-GB,en;q=0.9,tr;q=0.5' },
  })
  assert.match(en.text, /<html lang="en">/)
  const chosen = await browser(h, 'GET', `/s/${sessionId}?lang=en`)
  assert.match(chosen.text, /<html lang="en">/)
  assert.match(chosen.headers.get('set-cookie') ?? '', /kurus_lang=en/)
  const remembered = await browser(h, 'GET', `/s/${sessionId}`, {
    headers: { cookie: 'kurus_lang=en', 'accept-language': 'tr' },
  })
  assert.match(remembered.text, /<html lang="en">/)

  const js = await browser(h, 'GET', '/assets/checkout.js')
  assert.equal(js.status, 200)
  assert.match(js.headers.get('content-type') ?? '', /javascript/)
  const missing = await browser(h, 'GET', `/s/${crypto.randomUUID()}`)
  assert.equal(missing.status, 404)
  assert.match(missing.headers.get('content-type') ?? '', /text\/html/)
  assert.equal(missing.headers.get('content-security-policy'), CSP)
})

test('HSTS is sent in live only', async (t) => {
  const h = await startTestApp(t, { env: { KURUS_ENV: 'live' } })
  const page = await browser(h, 'GET', `/s/${crypto.randomUUID()}`)
  assert.equal(page.status, 404)
  assert.match(page.headers.get('strict-transport-security') ?? '', /max-age=\d+/)
})

test('an expired session refuses payment with a clear page and a 409', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const { sessionId } = await createSession(m.client, { amount: 1_000 })
  h.clock.advance(31 * 60 * 1000)
  const page = await browser(h, 'GET', `/s/${sessionId}?lang=en`)
  assert.equal(page.status, 410)
  assert.match(page.text, /This payment link has expired/)
  assert.match(page.text, /status=expired/)
  const pay = await browser(h, 'POST', `/v1/public/sessions/${sessionId}/pay`, {
    json: { card: buyerCard(CARDS.frictionless) },
  })
  assert.equal(pay.status, 409)
  assert.equal(pay.body['code'], 'SVC-STATE-3401')
})

test('QR: an EMV payload with a valid CRC; the sandbox bank pays it once, with ledger legs', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant({ name: 'Kadıköy Kahve' })
  const other = await h.newMerchant()
  const { sessionId, transactionId } = await createSession(m.client, {
    amount: 25_050,
    mode: 'qr',
  })
  const view = await browser<{ qrPayload: string }>(h, 'GET', `/v1/public/sessions/${sessionId}`)
  assert.ok(emvCrcValid(view.body.qrPayload))
  const fields = new Map(parseTlv(view.body.qrPayload).map((o) => [o.id, o.value]))
  assert.equal(fields.get('54'), '250.50')
  assert.equal(fields.get('59'), 'Kadikoy Kahve')
  const svg = await browser(h, 'GET', `/s/${sessionId}/qr.svg`)
  assert.equal(svg.status, 200)
  assert.match(svg.headers.get('content-type') ?? '', /image\/svg\+xml/)
  const page = await browser(h, 'GET', `/s/${sessionId}`)
  assert.match(page.text, new RegExp(`src="/s/${sessionId}/qr.svg"`))
  // A QR session takes no card.
  const card = await browser(h, 'POST', `/v1/public/sessions/${sessionId}/pay`, {
    json: { card: buyerCard(CARDS.frictionless) },
  })
  assert.equal(card.status, 409)

  const foreign = await other.client.request('POST', `/v1/sandbox/sessions/${sessionId}/qr-pay`, {
    body: {},
  })
  assert.equal(foreign.status, 404)
  const paid = await m.client.request<Record<string, unknown>>(
    'POST',
    `/v1/sandbox/sessions/${sessionId}/qr-pay`,
    { body: {} },
  )
  assert.equal(paid.status, 201, JSON.stringify(paid.body))
  assert.equal(paid.body['method'], 'qr')
  assert.equal(paid.body['status'], 'captured')
  const paymentId = String(paid.body['paymentId'])
  const repeat = await m.client.request<Record<string, unknown>>(
    'POST',
    `/v1/sandbox/sessions/${sessionId}/qr-pay`,
    { body: {} },
  )
  assert.equal(repeat.status, 200)
  assert.equal(repeat.body['paymentId'], paymentId)

  const payment = await m.client.request<Record<string, unknown>>(
    'GET',
    `/v1/payments/${paymentId}`,
  )
  assert.equal(payment.body['method'], 'qr')
  assert.equal(payment.body['transactionId'], transactionId)
  assert.equal(payment.body['installmentCount'], 1)
  // Priced like one installment: 249 bps half-up + 25 kuruş.
  assert.equal(payment.body['commission'], Math.floor((25_050 * 249 + 5000) / 10_000) + 25)
  const legs = await legsForPayment(h.deps.db, m.merchantId, paymentId)
  const sum = (d: string) => legs.filter((l) => l.direction === d).reduce((s, l) => s + l.amount, 0)
  assert.equal(sum('DEBIT'), 25_050)
  assert.equal(sum('CREDIT'), 25_050)
  const events = await eventsForResource(h.deps.db, m.merchantId, paymentId)
  assert.deepEqual(
    events.map((e) => e.type),
    ['payment.captured'],
  )
  const after = await browser(h, 'GET', `/v1/public/sessions/${sessionId}`)
  assert.equal(after.body['status'], 'completed')
  assert.deepEqual(returnQuery(String(after.body['redirectUrl'])), {
    order: '42',
    sessionId,
    paymentId,
    status: 'captured',
  })
})

test('card update: the card becomes the customer default and the session completes', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const customerId = await createCustomer(m.client)
  const { sessionId } = await createSession(m.client, {
    mode: 'card_update_only',
    customerId,
  })
  const page = await browser(h, 'GET', `/s/${sessionId}?lang=en`)
  assert.match(page.text, /Update card/)
  const wrong = await browser(h, 'POST', `/v1/public/sessions/${sessionId}/pay`, {
    json: { card: buyerCard(CARDS.frictionless) },
  })
  assert.equal(wrong.status, 409)
  const res = await browser<{ redirectUrl: string; card: Record<string, unknown> }>(
    h,
    'POST',
    `/v1/public/sessions/${sessionId}/card`,
    { json: { card: buyerCard(CARDS.troy) } },
  )
  assert.equal(res.status, 201, res.text)
  assert.deepEqual(res.body.card, { brand: 'troy', last4: '0001', expMonth: 12, expYear: 2030 })
  assert.deepEqual(returnQuery(res.body.redirectUrl), {
    order: '42',
    sessionId,
    status: 'card_updated',
  })
  const card = await m.client.request<Record<string, unknown>>(
    'GET',
    `/v1/customers/${customerId}/cards/default`,
  )
  assert.equal(card.status, 200)
  assert.equal(card.body['last4'], '0001')
  assert.equal(card.body['brand'], 'troy')
  const view = await browser(h, 'GET', `/v1/public/sessions/${sessionId}`)
  assert.equal(view.body['status'], 'completed')
  assert.equal(view.body['redirectUrl'], res.body.redirectUrl)
  const done = await browser(h, 'GET', `/s/${sessionId}?lang=en`)
  assert.equal(done.status, 200)
  assert.match(done.text, /Your card has been updated/)
  const again = await browser(h, 'POST', `/v1/public/sessions/${sessionId}/card`, {
    json: { card: buyerCard(CARDS.debit) },
  })
  assert.equal(again.status, 409)
})
