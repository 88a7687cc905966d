// Goal: the invoice state machine: send (needs buyerEmail), activate, the first public read
// (viewed), cancel from every open status, expiry at expiresAt (reconciler and lazily), 409
// from terminal states, KYC gates, and the events of each move. Method: signed and unsigned
// HTTP against the real app; time moved on h.clock; POST /v1/sandbox/reconcile.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { startTestApp } from '../helpers/app.ts'
import {
  action,
  activatedInvoice,
  assertWrittenBetween,
  browser,
  createInvoice,
  eventTypes,
  getInvoice,
  publicPay,
  reconcile,
  sessionStatus,
  storedStatus,
  type ErrorBody,
} from './_support.ts'

const HOUR_MS = 60 * 60 * 1000

test('send: draft → sent with sentAt and invoice.sent; a second send is 409', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const invoice = await createInvoice(m)
  const before = h.clock.now()
  const res = await action<{ id: string; status: string; sentAt: string }>(m, invoice.id, 'send')
  assert.equal(res.status, 200, JSON.stringify(res.body))
  assert.deepEqual(Object.keys(res.body).sort(), ['id', 'sentAt', 'status'])
  assert.equal(res.body.status, 'sent')
  assertWrittenBetween(res.body.sentAt, before, h.clock.now())
  const again = await action(m, invoice.id, 'send')
  assert.equal(again.status, 409)
  assert.equal(again.body.code, 'SVC-STATE-3401')
  const activate = await action(m, invoice.id, 'activate')
  assert.equal(activate.status, 409)
  assert.deepEqual(await eventTypes(h, m.merchantId, invoice.id), [
    'invoice.created',
    'invoice.sent',
  ])
})

test('send without buyerEmail is 400 on buyerEmail and leaves the draft', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const invoice = await createInvoice(m, { buyerEmail: undefined })
  assert.equal(invoice.buyerEmail, null)
  const res = await action(m, invoice.id, 'send')
  assert.equal(res.status, 400)
  assert.equal(res.body.code, 'SVC-VAL-3001')
  assert.deepEqual(res.body.details, [
    { field: 'buyerEmail', reason: 'is required to send the invoice' },
  ])
  assert.equal((await getInvoice(m, invoice.id)).status, 'draft')
})

test('activate: draft → activated with activatedAt; again is 409; send after it is 409', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const invoice = await createInvoice(m)
  const before = h.clock.now()
  const res = await action<{ status: string; activatedAt: string }>(m, invoice.id, 'activate')
  assert.equal(res.status, 200)
  assert.deepEqual(Object.keys(res.body).sort(), ['activatedAt', 'id', 'status'])
  assert.equal(res.body.status, 'activated')
  assertWrittenBetween(res.body.activatedAt, before, h.clock.now())
  assert.equal((await action(m, invoice.id, 'activate')).status, 409)
  assert.equal((await action(m, invoice.id, 'send')).status, 409)
  assert.deepEqual(await eventTypes(h, m.merchantId, invoice.id), [
    'invoice.created',
    'invoice.activated',
  ])
})

test('public view: a draft is 404; the first read moves activated → viewed, once', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant({ name: 'Anadolu Kitap' })
  const invoice = await createInvoice(m, { notes: 'Teşekkürler' })
  const draft = await browser<ErrorBody>(h, 'GET', `/v1/public/invoices/${invoice.publicHash}`)
  assert.equal(draft.status, 404)
  assert.equal(draft.body.code, 'SVC-RES-3301')
  assert.equal((await action(m, invoice.id, 'activate')).status, 200)

  const first = await browser(h, 'GET', `/v1/public/invoices/${invoice.publicHash}`)
  assert.equal(first.status, 200)
  assert.equal(first.headers.get('cache-control'), 'no-store')
  assert.deepEqual(first.body, {
    publicHash: invoice.publicHash,
    merchantName: 'Anadolu Kitap',
    status: 'viewed',
    amountMinor: invoice.amountMinor,
    currency: 'TRY',
    lineItems: invoice.lineItems,
    buyerName: 'Ayşe Yılmaz',
    dueDate: null,
    expiresAt: null,
    notes: 'Teşekkürler',
    paidAt: null,
  })
  // Nothing the buyer need not see: no merchant id, no buyer email, no invoice id.
  assert.ok(!first.text.includes(m.merchantId))
  assert.ok(!first.text.includes('ayse@example.com'))
  h.clock.advance(1000)
  const second = await browser<{ status: string }>(
    h,
    'GET',
    `/v1/public/invoices/${invoice.publicHash}`,
  )
  assert.equal(second.body.status, 'viewed')
  const signed = await getInvoice(m, invoice.id)
  assert.equal(signed.status, 'viewed')
  assert.ok(signed.viewedAt !== null && signed.viewedAt < h.clock.now().toISOString())
  assert.deepEqual(await eventTypes(h, m.merchantId, invoice.id), [
    'invoice.created',
    'invoice.activated',
    'invoice.viewed',
  ])
})

test('public view of a sent invoice moves it to viewed; unknown or malformed hashes are 404/400', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const invoice = await createInvoice(m)
  assert.equal((await action(m, invoice.id, 'send')).status, 200)
  const view = await browser<{ status: string }>(
    h,
    'GET',
    `/v1/public/invoices/${invoice.publicHash}`,
  )
  assert.equal(view.body.status, 'viewed')
  const unknown = await browser<ErrorBody>(h, 'GET', '/v1/public/invoices/AAAAAAAAAAAAAAAAAAAAAA')
  assert.equal(unknown.status, 404)
  const malformed = await browser<ErrorBody>(h, 'GET', '/v1/public/invoices/short')
  assert.equal(malformed.status, 400)
})

test('the public PDF changes no status', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const invoice = await activatedInvoice(m)
  const pdf = await browser(h, 'GET', `/v1/public/invoices/${invoice.publicHash}/pdf`)
  assert.equal(pdf.status, 200)
  assert.equal(pdf.headers.get('content-type'), 'application/pdf')
  assert.equal(pdf.bytes.subarray(0, 5).toString(), '%PDF-')
  assert.equal(await storedStatus(h, invoice.id), 'activated')
  const draft = await createInvoice(m)
  const hidden = await browser(h, 'GET', `/v1/public/invoices/${draft.publicHash}/pdf`)
  assert.equal(hidden.status, 404)
})

test('cancel works from draft, sent, activated and viewed, emits invoice.cancelled', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const draft = await createInvoice(m)
  const sent = await createInvoice(m)
  assert.equal((await action(m, sent.id, 'send')).status, 200)
  const activated = await activatedInvoice(m)
  const viewed = await activatedInvoice(m)
  await browser(h, 'GET', `/v1/public/invoices/${viewed.publicHash}`)
  assert.equal(await storedStatus(h, viewed.id), 'viewed')

  for (const invoice of [draft, sent, activated, viewed]) {
    const before = h.clock.now()
    const res = await action<{ status: string; cancelledAt: string }>(m, invoice.id, 'cancel')
    assert.equal(res.status, 200, JSON.stringify(res.body))
    assert.deepEqual(Object.keys(res.body).sort(), ['cancelledAt', 'id', 'status'])
    assert.equal(res.body.status, 'cancelled')
    assertWrittenBetween(res.body.cancelledAt, before, h.clock.now())
    const types = await eventTypes(h, m.merchantId, invoice.id)
    assert.equal(types.at(-1), 'invoice.cancelled')
    assert.equal(types.filter((x) => x === 'invoice.cancelled').length, 1)
  }
})

test('a cancelled invoice refuses every change with 409; its page still shows it', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const invoice = await activatedInvoice(m)
  assert.equal((await action(m, invoice.id, 'cancel')).status, 200)
  for (const verb of ['cancel', 'send', 'activate'] as const) {
    const res = await action(m, invoice.id, verb)
    assert.equal(res.status, 409, verb)
    assert.equal(res.body.code, 'SVC-STATE-3401', verb)
  }
  const pay = await publicPay(h, invoice.publicHash)
  assert.equal(pay.status, 409)
  const view = await browser<{ status: string }>(
    h,
    'GET',
    `/v1/public/invoices/${invoice.publicHash}`,
  )
  assert.equal(view.body.status, 'cancelled')
  assert.deepEqual(await eventTypes(h, m.merchantId, invoice.id), [
    'invoice.created',
    'invoice.activated',
    'invoice.cancelled',
  ])
})

test('cancelling cancels the open checkout session', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const invoice = await activatedInvoice(m)
  const pay = await publicPay(h, invoice.publicHash)
  assert.equal(pay.status, 200)
  assert.equal(await sessionStatus(h, pay.body.sessionId), 'active')
  assert.equal((await action(m, invoice.id, 'cancel')).status, 200)
  assert.equal(await sessionStatus(h, pay.body.sessionId), 'cancelled')
  const checkout = await browser(h, 'GET', `/s/${pay.body.sessionId}`)
  assert.equal(checkout.status, 410)
})

test('the reconciler expires open invoices at expiresAt and cancels their session', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const expiresAt = new Date(h.clock.now().getTime() + 10 * 60 * 1000).toISOString()
  const draft = await createInvoice(m, { expiresAt })
  const open = await activatedInvoice(m, { expiresAt })
  const later = await activatedInvoice(m, {
    expiresAt: new Date(h.clock.now().getTime() + 2 * HOUR_MS).toISOString(),
  })
  const pay = await publicPay(h, open.publicHash)
  assert.equal(pay.status, 200)

  h.clock.advance(9 * 60 * 1000)
  await reconcile(m)
  assert.equal(await storedStatus(h, open.id), 'activated')

  h.clock.advance(60 * 1000)
  const before = h.clock.now()
  const ran = await reconcile(m)
  assert.ok((ran['invoices.expire_invoices'] ?? 0) >= 2)
  assert.equal(await storedStatus(h, draft.id), 'expired')
  assert.equal(await storedStatus(h, open.id), 'expired')
  assert.equal(await storedStatus(h, later.id), 'activated')
  assert.equal(await sessionStatus(h, pay.body.sessionId), 'cancelled')
  const body = await getInvoice(m, open.id)
  assertWrittenBetween(body.expiredAt, before, h.clock.now())
  assert.deepEqual(await eventTypes(h, m.merchantId, open.id), [
    'invoice.created',
    'invoice.activated',
    'invoice.expired',
  ])
  // Terminal: every change is 409, and so is paying.
  for (const verb of ['cancel', 'send', 'activate'] as const) {
    assert.equal((await action(m, open.id, verb)).status, 409, verb)
  }
  assert.equal((await publicPay(h, open.publicHash)).status, 409)
})

test('expiry is seen at once by readers, before the reconciler has run', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const invoice = await activatedInvoice(m, {
    expiresAt: new Date(h.clock.now().getTime() + HOUR_MS).toISOString(),
  })
  h.clock.advance(HOUR_MS)
  assert.equal(await storedStatus(h, invoice.id), 'activated')
  const view = await browser<{ status: string }>(
    h,
    'GET',
    `/v1/public/invoices/${invoice.publicHash}`,
  )
  assert.equal(view.body.status, 'expired')
  assert.equal(await storedStatus(h, invoice.id), 'expired')
  const draft = await createInvoice(m, {
    expiresAt: new Date(h.clock.now().getTime() + HOUR_MS).toISOString(),
  })
  h.clock.advance(HOUR_MS)
  const send = await action(m, draft.id, 'send')
  assert.equal(send.status, 409)
  assert.equal((await getInvoice(m, draft.id)).status, 'expired')
})

test('KYC not approved: send, activate and public pay are 403; create and cancel are allowed', async (t) => {
  const h = await startTestApp(t)
  const pending = await h.newMerchant({ kycStatus: 'pending' })
  const invoice = await createInvoice(pending)
  for (const verb of ['send', 'activate'] as const) {
    const res = await action(pending, invoice.id, verb)
    assert.equal(res.status, 403, verb)
    assert.equal(res.body.code, 'SVC-KYC-3101', verb)
  }
  assert.equal((await action(pending, invoice.id, 'cancel')).status, 200)

  // An approved merchant activates, then is suspended: the buyer cannot pay.
  const m = await h.newMerchant()
  const open = await activatedInvoice(m)
  const kyc = await h.operator('PUT', `/operator/v1/merchants/${m.merchantId}/kyc`, {
    status: 'suspended',
  })
  assert.equal(kyc.status, 200, JSON.stringify(kyc.body))
  const pay = await publicPay(h, open.publicHash)
  assert.equal(pay.status, 403)
  assert.equal((pay.body as unknown as ErrorBody).code, 'SVC-KYC-3101')
})

test('submerchant keys may not use invoices (403 SVC-AUTH-3201)', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const sub = await h.operator<{ publicKey: string; secretKey: string }>(
    'POST',
    `/operator/v1/merchants/${m.merchantId}/submerchants`,
    { name: 'Alt Satıcı', iban: 'TR330006100519786457841326', holderName: 'Alt Satıcı' },
  )
  assert.equal(sub.status, 201, JSON.stringify(sub.body))
  const client = h.clientFor(sub.body)
  const res = await client.request<ErrorBody>('GET', '/v1/invoices')
  assert.equal(res.status, 403)
  assert.equal(res.body.code, 'SVC-AUTH-3201')
})
