// Goal: paying an invoice: public pay makes one checkout session (`<invoiceId>:<n>`) and
// reuses it while active, a new one after it ends; a captured payment makes the invoice paid
// at once for readers (lazy) and through the reconciler, exactly once; declines, acquirer
// timeouts and terminal states. Method: unsigned calls as the buyer's browser makes them
// (public invoice API, then the hosted checkout's public API), signed reads, h.clock.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { getSessionById } from '../../src/modules/payments/index.ts'
import { startTestApp } from '../helpers/app.ts'
import { CARDS } from '../helpers/payments.ts'
import {
  action,
  activatedInvoice,
  browser,
  eventTypes,
  getInvoice,
  payByCard,
  publicPay,
  reconcile,
  sessionStatus,
  storedStatus,
  type ErrorBody,
} from './_support.ts'

test('pay makes a checkout session for the invoice, and hands the same one out again', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const customer = await m.client.request<{ id: string }>('POST', '/v1/customers', {
    body: { externalId: `ext-${crypto.randomUUID()}` },
  })
  const invoice = await activatedInvoice(m, { customerId: customer.body.id })
  const first = await publicPay(h, invoice.publicHash)
  assert.equal(first.status, 200, first.text)
  assert.deepEqual(Object.keys(first.body).sort(), ['checkoutUrl', 'expiresAt', 'sessionId'])
  assert.equal(first.body.checkoutUrl, `${h.config.checkoutUrl}/s/${first.body.sessionId}`)
  assert.equal(first.headers.get('cache-control'), 'no-store')

  const session = await getSessionById(h.deps, first.body.sessionId)
  assert.ok(session)
  assert.equal(session.transactionId, `${invoice.id}:1`)
  assert.equal(session.merchantId, m.merchantId)
  assert.equal(session.storeId, m.storeId)
  assert.equal(session.amount, invoice.amountMinor)
  assert.equal(session.currency, 'TRY')
  assert.equal(session.mode, 'payment')
  assert.equal(session.customerId, customer.body.id)
  assert.equal(session.returnUrl, invoice.url)
  assert.deepEqual(session.metadata, { invoiceId: invoice.id })
  assert.equal(session.expiresAt.toISOString(), first.body.expiresAt)

  const again = await publicPay(h, invoice.publicHash)
  assert.equal(again.body.sessionId, first.body.sessionId)
  // Paying is not reading: the invoice is still activated.
  assert.equal(await storedStatus(h, invoice.id), 'activated')
})

test('a customer deleted since the invoice was made is left off the session', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const customer = await m.client.request<{ id: string }>('POST', '/v1/customers', {
    body: { externalId: `ext-${crypto.randomUUID()}` },
  })
  const invoice = await activatedInvoice(m, { customerId: customer.body.id })
  const deleted = await m.client.request('DELETE', `/v1/customers/${customer.body.id}`)
  assert.equal(deleted.status, 204)
  const pay = await publicPay(h, invoice.publicHash)
  assert.equal(pay.status, 200, pay.text)
  const session = await getSessionById(h.deps, pay.body.sessionId)
  assert.equal(session?.customerId, null)
  assert.equal(session?.amount, invoice.amountMinor)
})

test('an expired session without a payment is replaced by session n + 1', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const invoice = await activatedInvoice(m)
  const first = await publicPay(h, invoice.publicHash)
  h.clock.advance(31 * 60 * 1000)
  const second = await publicPay(h, invoice.publicHash)
  assert.equal(second.status, 200)
  assert.notEqual(second.body.sessionId, first.body.sessionId)
  const session = await getSessionById(h.deps, second.body.sessionId)
  assert.equal(session?.transactionId, `${invoice.id}:2`)
})

test('a captured payment: GET by id shows paid at once, the event is recorded once', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const invoice = await activatedInvoice(m)
  const { body: pay } = await publicPay(h, invoice.publicHash)
  const charged = await payByCard(h, pay.sessionId, CARDS.frictionless)
  assert.equal(charged.status, 201, charged.text)
  assert.equal(charged.body.status, 'captured')
  assert.equal(await storedStatus(h, invoice.id), 'activated')

  const before = h.clock.now()
  const paid = await getInvoice(m, invoice.id)
  assert.equal(paid.status, 'paid')
  assert.equal(paid.paymentId, charged.body.paymentId)
  assert.ok(paid.paidAt !== null && Date.parse(paid.paidAt) >= before.getTime())
  // The reconciler finds nothing more to do: no second event.
  await reconcile(m)
  assert.deepEqual(await eventTypes(h, m.merchantId, invoice.id), [
    'invoice.created',
    'invoice.activated',
    'invoice.paid',
  ])
  const events = await h.deps.db
    .selectFrom('events')
    .select('data')
    .where('resource_id', '=', invoice.id)
    .where('type', '=', 'invoice.paid')
    .executeTakeFirstOrThrow()
  assert.equal((events.data as { paymentId: string }).paymentId, charged.body.paymentId)

  // Paid is terminal: every change is 409, and so is paying again.
  for (const verb of ['cancel', 'send', 'activate'] as const) {
    const res = await action(m, invoice.id, verb)
    assert.equal(res.status, 409, verb)
    assert.equal(res.body.code, 'SVC-STATE-3401')
  }
  const again = await publicPay(h, invoice.publicHash)
  assert.equal(again.status, 409)
  assert.equal((again.body as unknown as ErrorBody).code, 'SVC-STATE-3401')
})

test('the buyer back on the public view sees paid at once', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const invoice = await activatedInvoice(m)
  const { body: pay } = await publicPay(h, invoice.publicHash)
  await payByCard(h, pay.sessionId, CARDS.frictionless)
  const view = await browser<{ status: string; paidAt: string | null }>(
    h,
    'GET',
    `/v1/public/invoices/${invoice.publicHash}`,
  )
  assert.equal(view.body.status, 'paid')
  assert.ok(view.body.paidAt)
  // Paid before it was ever read: it never went through viewed.
  assert.deepEqual(await eventTypes(h, m.merchantId, invoice.id), [
    'invoice.created',
    'invoice.activated',
    'invoice.paid',
  ])
})

test('the reconciler marks paid invoices nobody has read', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const invoice = await activatedInvoice(m)
  const { body: pay } = await publicPay(h, invoice.publicHash)
  await payByCard(h, pay.sessionId, CARDS.frictionless)
  const ran = await reconcile(m)
  assert.ok((ran['invoices.reconcile_payments'] ?? 0) >= 1)
  assert.equal(await storedStatus(h, invoice.id), 'paid')
  const list = await m.client.request<{ items: { id: string; status: string }[] }>(
    'GET',
    '/v1/invoices',
  )
  assert.equal(list.body.items.find((i) => i.id === invoice.id)?.status, 'paid')
  assert.deepEqual(await eventTypes(h, m.merchantId, invoice.id), [
    'invoice.created',
    'invoice.activated',
    'invoice.paid',
  ])
})

test('a declined card leaves the invoice open and the same session usable', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const invoice = await activatedInvoice(m)
  const { body: pay } = await publicPay(h, invoice.publicHash)
  const declined = await payByCard(h, pay.sessionId, CARDS.declined)
  assert.equal(declined.status, 402)
  assert.equal((await getInvoice(m, invoice.id)).status, 'activated')
  const again = await publicPay(h, invoice.publicHash)
  assert.equal(again.body.sessionId, pay.sessionId)
  const ok = await payByCard(h, pay.sessionId, CARDS.frictionless)
  assert.equal(ok.body.status, 'captured')
  assert.equal((await getInvoice(m, invoice.id)).status, 'paid')
})

test('an acquirer timeout: cancel is 409 while the outcome is unknown; the answer makes it paid', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const invoice = await activatedInvoice(m)
  const { body: pay } = await publicPay(h, invoice.publicHash)
  const pending = await payByCard(h, pay.sessionId, CARDS.timeout)
  assert.equal(pending.status, 202, pending.text)
  assert.equal(pending.body.status, 'pending')
  assert.equal((await getInvoice(m, invoice.id)).status, 'activated')

  const cancel = await action(m, invoice.id, 'cancel')
  assert.equal(cancel.status, 409)
  assert.equal(cancel.body.code, 'SVC-STATE-3401')
  assert.match(cancel.body.message, /in progress/)
  assert.equal(await sessionStatus(h, pay.sessionId), 'active')

  // The payments reconciler asks the acquirer (captured); the invoices one runs after it.
  h.clock.advance(2 * 60 * 1000)
  await reconcile(m)
  assert.equal(await storedStatus(h, invoice.id), 'paid')
  const paid = await getInvoice(m, invoice.id)
  assert.equal(paid.status, 'paid')
  assert.equal(paid.paymentId, pending.body.paymentId)
})

test('an acquirer timeout holds off expiry until the payment is resolved', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const invoice = await activatedInvoice(m, {
    expiresAt: new Date(h.clock.now().getTime() + 10 * 60 * 1000).toISOString(),
  })
  const { body: pay } = await publicPay(h, invoice.publicHash)
  await payByCard(h, pay.sessionId, CARDS.timeout)
  h.clock.advance(11 * 60 * 1000)
  // One run: payments resolve the timeout first, so the invoice is paid, not expired.
  await reconcile(m)
  assert.equal(await storedStatus(h, invoice.id), 'paid')
  assert.deepEqual(await eventTypes(h, m.merchantId, invoice.id), [
    'invoice.created',
    'invoice.activated',
    'invoice.paid',
  ])
})

test('a session made but not recorded (a crash) is found again; its payment counts', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const forget = (id: string) =>
    h.deps.db
      .updateTable('invoices')
      .set({ session_seq: 0, session_id: null, session_minted_at: null })
      .where('id', '=', id)
      .execute()

  // Still open: the same session is handed out again and recorded.
  const open = await activatedInvoice(m)
  const first = await publicPay(h, open.publicHash)
  await forget(open.id)
  const again = await publicPay(h, open.publicHash)
  assert.equal(again.body.sessionId, first.body.sessionId)

  // Paid through it: never a second session, the invoice is paid.
  const invoice = await activatedInvoice(m)
  const pay = await publicPay(h, invoice.publicHash)
  assert.equal((await payByCard(h, pay.body.sessionId, CARDS.frictionless)).status, 201)
  await forget(invoice.id)
  assert.equal(await storedStatus(h, invoice.id), 'activated')
  const late = await publicPay(h, invoice.publicHash)
  assert.equal(late.status, 409)
  assert.equal(await storedStatus(h, invoice.id), 'paid')
  const sessions = await h.deps.db
    .selectFrom('payment_sessions')
    .select('transaction_id')
    .where('transaction_id', 'like', `${invoice.id}:%`)
    .execute()
  assert.deepEqual(
    sessions.map((s) => s.transaction_id),
    [`${invoice.id}:1`],
  )
})

test('unknown and draft links cannot be paid', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const unknown = await publicPay(h, 'AAAAAAAAAAAAAAAAAAAAAA')
  assert.equal(unknown.status, 404)
  const draft = await m.client.request<{ publicHash: string }>('POST', '/v1/invoices', {
    body: {
      storeId: m.storeId,
      amountMinor: 1000,
      currency: 'TRY',
      lineItems: [{ name: 'x', qty: 1, unitPriceMinor: 1000, lineTotalMinor: 1000 }],
    },
  })
  const res = await publicPay(h, draft.body.publicHash)
  assert.equal(res.status, 404)
  const extra = await browser<ErrorBody>(
    h,
    'POST',
    `/v1/public/invoices/${draft.body.publicHash}/pay`,
    { amount: 1 },
  )
  assert.equal(extra.status, 400)
})
