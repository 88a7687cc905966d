// Goal: the payments pages do what the API does, through the same services: the list finds a
// payment by id, transactionId, card last4 and customer email; a partial refund (with its
// confirmation step) changes what the API reports; capture and void of authorizations; a
// refused action shows its reason in role="alert" and changes nothing; another merchant's
// payment is the 404 page; each action is in the audit log; CSV export of the filter goes
// through the export machinery; the overview's figures match what was made through the API.
// Method: the real app over HTTP, a cookie-jar client, the signed API to check results.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { startTestApp } from '../helpers/app.ts'
import { CARDS, charge } from '../helpers/payments.ts'
import { buildExport } from '../../src/modules/transactions/index.ts'
import { getPayment } from '../../src/modules/payments/index.ts'
import { memberWeb } from './_sections.ts'
import {
  alertOf,
  apiPayment,
  csrfOf,
  newDashboardMerchant,
  paidPayment,
  signedIn,
  tableText,
  blockText,
  textOf,
} from './_web.ts'

async function newCustomer(client: Awaited<ReturnType<typeof newDashboardMerchant>>['client']) {
  const email = `buyer-${crypto.randomUUID()}@example.com`
  const res = await client.request<{ id: string }>('POST', '/v1/customers', {
    body: { email, name: 'Ayşe Yılmaz', externalId: crypto.randomUUID() },
  })
  assert.equal(res.status, 201, JSON.stringify(res.body))
  return { customerId: res.body.id, email }
}

test('the search box finds a payment by its id, transactionId, card last4 and customer email', async (t) => {
  const h = await startTestApp(t)
  const m = await newDashboardMerchant(h)
  const buyer = await newCustomer(m.client)
  const mine = await paidPayment(m, 12_345, { customerId: buyer.customerId })
  const other = await paidPayment(m, 99_900, { card: '5890040000000016' })
  const web = await signedIn(h, m)

  const all = await web.get('/dashboard/payments')
  assert.equal(all.status, 200)
  const allRows = tableText(all.text, 'payments-table')
  assert.ok(allRows.includes(mine.transactionId) && allRows.includes(other.transactionId))
  assert.ok(allRows.includes('₺123,45'))

  const find = async (q: string) =>
    tableText(
      (await web.get(`/dashboard/payments?q=${encodeURIComponent(q)}`)).text,
      'payments-table',
    )
  for (const q of [mine.paymentId, mine.transactionId, '6111', buyer.email]) {
    const rows = await find(q)
    assert.ok(rows.includes(mine.transactionId), `found by ${q}`)
    assert.ok(!rows.includes(other.transactionId), `only the match for ${q}`)
  }
  assert.ok((await find('0016')).includes(other.transactionId))
  const none = await web.get('/dashboard/payments?q=nobody%40example.com')
  assert.match(none.text, /Bu filtreyle eşleşen ödeme yok/)
  // Filters: status and amount range (lira, as typed).
  assert.ok(!(await find('x')).includes('₺'))
  const big = await web.get('/dashboard/payments?min=500')
  const bigRows = tableText(big.text, 'payments-table')
  assert.ok(bigRows.includes(other.transactionId) && !bigRows.includes(mine.transactionId))
  const bad = await web.get('/dashboard/payments?min=abc')
  assert.match(alertOf(bad.text) ?? '', /tutar/)
})

test('keyset pages: 30 payments over two pages, none twice, none lost', async (t) => {
  const h = await startTestApp(t)
  const m = await newDashboardMerchant(h)
  const made: string[] = []
  for (let i = 0; i < 27; i++) made.push((await paidPayment(m, 1_000 + i)).transactionId)
  const web = await signedIn(h, m)
  const first = await web.get('/dashboard/payments')
  const next = /href="(\/dashboard\/payments\?after=[^"]+)"/.exec(first.text)?.[1]
  assert.ok(next, 'a next-page link')
  const second = await web.get(next.replaceAll('&amp;', '&'))
  const seen = [first, second].map((p) => tableText(p.text, 'payments-table')).join(' ')
  for (const id of made) assert.equal(seen.split(id).length - 1, 1, id)
  assert.doesNotMatch(second.text, /rel="next"/)
})

test('a partial refund from the detail page, confirmed, is what the API then reports', async (t) => {
  const h = await startTestApp(t)
  const m = await newDashboardMerchant(h)
  const { paymentId } = await paidPayment(m, 50_000)
  const web = await signedIn(h, m)
  const detail = await web.get(`/dashboard/payments/${paymentId}`)
  assert.equal(detail.status, 200)
  assert.match(detail.text, /İade et/)
  assert.equal(textOf(detail.text, 'refundable'), '₺500,00')
  assert.match(
    detail.text,
    /name="amount"[^>]*value="500.00"/,
    'prefilled with the refundable amount',
  )
  const key = /name="idempotencyKey" value="([^"]+)"/.exec(detail.text)?.[1] ?? ''

  // Step one asks for a confirmation and changes nothing.
  const ask = await web.submit(
    `/dashboard/payments/${paymentId}/refund`,
    { amount: '123,45', reason: 'kırık ürün', idempotencyKey: key },
    detail,
  )
  assert.equal(ask.status, 200)
  assert.match(ask.text, /₺123,45 iade et/)
  assert.equal((await apiPayment(m, paymentId))['refundableAmount'], 50_000)

  const done = await web.submit(
    `/dashboard/payments/${paymentId}/refund`,
    { amount: '123.45', reason: 'kırık ürün', idempotencyKey: key, confirm: 'yes' },
    ask,
  )
  assert.equal(done.status, 303)
  const after = await web.get(done.location ?? '')
  assert.match(after.text, /role="status"[\s\S]*₺123,45 iade edildi/)
  assert.equal(textOf(after.text, 'refundable'), '₺376,55')
  const api = await apiPayment(m, paymentId)
  assert.equal(api['refundableAmount'], 50_000 - 12_345)
  assert.equal(api['refundAmount'], 12_345)
  // A partly refunded payment says so, with what was refunded, what remains and the net after
  // the refund and the commission it gave back.
  assert.equal(textOf(after.text, 'payment-status'), 'Kısmen iade edildi')
  assert.equal(textOf(after.text, 'refunded'), '₺123,45')
  assert.equal(textOf(after.text, 'remaining'), '₺376,55')
  const stored = await getPayment(h.deps, m.merchantId, paymentId)
  assert.ok(stored.commissionRefunded > 0, 'the refund gave part of the commission back')
  const net = stored.netAmount - 12_345 + stored.commissionRefunded
  const tr = (minor: number) =>
    new Intl.NumberFormat('tr-TR', {
      style: 'currency',
      currency: 'TRY',
      currencyDisplay: 'narrowSymbol',
    }).format(minor / 100)
  assert.equal(textOf(after.text, 'net'), tr(net))
  assert.ok(net < stored.netAmount, 'the net went down with the refund')
  const list = await web.get('/dashboard/payments')
  assert.match(
    tableText(list.text, 'payments-table'),
    /₺500,00 ₺123,45 iade edildi Kısmen iade edildi/,
  )

  // The same form sent again (a double click) is the same refund, not a second one.
  const again = await web.submit(
    `/dashboard/payments/${paymentId}/refund`,
    { amount: '123.45', idempotencyKey: key, confirm: 'yes' },
    after,
  )
  assert.equal(again.status, 303)
  assert.equal((await apiPayment(m, paymentId))['refundAmount'], 12_345)

  const log = await web.get('/dashboard/settings/audit-log')
  const rows = tableText(log.text, 'audit-table')
  assert.ok(rows.includes('İade yapıldı') && rows.includes(paymentId))
})

test('a refused action shows its reason in role="alert" and changes nothing', async (t) => {
  const h = await startTestApp(t)
  const m = await newDashboardMerchant(h)
  const { paymentId } = await paidPayment(m, 10_000)
  const web = await signedIn(h, m)
  const detail = await web.get(`/dashboard/payments/${paymentId}`)
  const key = /name="idempotencyKey" value="([^"]+)"/.exec(detail.text)?.[1] ?? ''
  const tooMuch = await web.submit(
    `/dashboard/payments/${paymentId}/refund`,
    { amount: '200', idempotencyKey: key, confirm: 'yes' },
    detail,
  )
  assert.equal(tooMuch.status, 400)
  assert.match(alertOf(tooMuch.text) ?? '', /iade edilebilir tutarı \(₺100,00\) aşamaz/)
  // Voiding a captured payment is no action the page offers; forged, it is refused.
  assert.doesNotMatch(detail.text, /\/void"/)
  const voided = await web.submit(`/dashboard/payments/${paymentId}/void`, {}, detail)
  assert.equal(voided.status, 409)
  assert.ok(alertOf(voided.text), 'the reason is shown')
  assert.equal((await apiPayment(m, paymentId))['status'], 'captured')
  assert.equal((await apiPayment(m, paymentId))['refundAmount'], 0)
})

test('capture and void of authorizations from the detail page', async (t) => {
  const h = await startTestApp(t)
  const m = await newDashboardMerchant(h)
  const a = await paidPayment(m, 7_000, { capture: false })
  const b = await paidPayment(m, 8_000, { capture: false })
  const web = await signedIn(h, m)
  const pageA = await web.get(`/dashboard/payments/${a.paymentId}`)
  assert.match(pageA.text, /Tahsil et/)
  assert.match(pageA.text, /İptal et/)
  assert.doesNotMatch(pageA.text, /id="refund-form"/)
  const captured = await web.submit(`/dashboard/payments/${a.paymentId}/capture`, {}, pageA)
  assert.equal(captured.status, 303)
  assert.equal((await apiPayment(m, a.paymentId))['status'], 'captured')
  const voided = await web.submit(
    `/dashboard/payments/${b.paymentId}/void`,
    {},
    `/dashboard/payments/${b.paymentId}`,
  )
  assert.equal(voided.status, 303)
  assert.equal((await apiPayment(m, b.paymentId))['status'], 'voided')
  const after = await web.get(`/dashboard/payments/${b.paymentId}`)
  assert.match(after.text, /Ödeme iptal edildi/)
  assert.doesNotMatch(after.text, /Tahsil et/)
})

test('capture from the page is refused while KYC is not approved, as on the API; void stays allowed', async (t) => {
  const h = await startTestApp(t)
  const m = await newDashboardMerchant(h)
  const a = await paidPayment(m, 7_000, { capture: false })
  const b = await paidPayment(m, 8_000, { capture: false })
  const kyc = await m.client.request('POST', '/v1/sandbox/kyc', { body: { status: 'suspended' } })
  assert.equal(kyc.status, 200)
  const web = await signedIn(h, m)
  const pageA = await web.get(`/dashboard/payments/${a.paymentId}`)
  const refused = await web.submit(`/dashboard/payments/${a.paymentId}/capture`, {}, pageA)
  assert.equal(refused.status, 403)
  assert.ok(alertOf(refused.text), 'the reason is shown')
  assert.equal((await apiPayment(m, a.paymentId))['status'], 'authorized')
  const api = await m.client.request<{ code: string }>(
    'POST',
    `/v1/payments/${a.paymentId}/capture`,
    { body: {} },
  )
  assert.equal(api.body.code, 'SVC-KYC-3101', 'the API refuses it with the same code')
  const voided = await web.submit(`/dashboard/payments/${b.paymentId}/void`, {}, pageA)
  assert.equal(voided.status, 303)
  assert.equal((await apiPayment(m, b.paymentId))['status'], 'voided')
})

test("another merchant's payment is the 404 page, and its actions change nothing", async (t) => {
  const h = await startTestApp(t)
  const m = await newDashboardMerchant(h)
  const other = await newDashboardMerchant(h, 'Başka Mağaza')
  const theirs = await paidPayment(other, 40_000)
  const web = await signedIn(h, m)
  const page = await web.get(`/dashboard/payments/${theirs.paymentId}`)
  assert.equal(page.status, 404)
  assert.match(page.text, /Sayfa bulunamadı/)
  const home = await web.get('/dashboard/payments')
  const refund = await web.submit(
    `/dashboard/payments/${theirs.paymentId}/refund`,
    { amount: '100', idempotencyKey: crypto.randomUUID(), confirm: 'yes' },
    home,
  )
  assert.equal(refund.status, 404)
  assert.equal((await apiPayment(other, theirs.paymentId))['refundAmount'], 0)
  assert.equal((await web.get('/dashboard/payments/pay_doesnotexist')).status, 404)
  assert.equal((await web.get('/dashboard/nothing-here')).status, 404)
})

test('CSV export of the current filter goes through the export machinery', async (t) => {
  const h = await startTestApp(t)
  const m = await newDashboardMerchant(h)
  const { transactionId } = await paidPayment(m, 2_500)
  const other = await paidPayment(m, 3_500)
  const web = await signedIn(h, m)
  const list = await web.get(`/dashboard/payments?q=${transactionId}&status=captured`)
  const res = await web.submit(
    '/dashboard/payments/export',
    { q: transactionId, status: 'captured' },
    list,
  )
  assert.equal(res.status, 303)
  const exportId = /\/exports\/(exp_\w+)$/.exec(res.location ?? '')?.[1]
  assert.ok(exportId)
  const api = await m.client.request<{ status: string; filters: Record<string, unknown> }>(
    'GET',
    `/v1/transactions/exports/${exportId}`,
  )
  assert.equal(api.status, 200)
  assert.equal(api.body.filters['status'], 'captured')
  const page = await web.get(res.location ?? '')
  assert.equal(page.status, 200)
  assert.match(page.text, /CSV/)
  // Built (the job's body, run here: no worker in tests), the file has the one matching row.
  await buildExport(h.deps, exportId)
  const ready = await web.get(res.location ?? '')
  const link = /href="([^"]+\/download)"/.exec(ready.text)?.[1]
  assert.ok(link, 'a download link once ready')
  const file = await web.get(link)
  assert.equal(file.status, 200)
  assert.ok(file.text.includes(transactionId))
  assert.ok(!file.text.includes(other.transactionId), 'the search applies to the export')
  assert.equal(file.text.trim().split('\n').length, 2, 'a header and the one payment')
})

test('the overview shows the figures of payments made through the API', async (t) => {
  const h = await startTestApp(t)
  const m = await newDashboardMerchant(h)
  const a = await paidPayment(m, 100_000)
  await paidPayment(m, 23_456)
  await paidPayment(m, 5_000, { capture: false })
  const declined = await charge(m.client, CARDS.declined, 9_999, { threeDSecure: false })
  assert.equal(declined.res.status, 402)
  const refund = await m.client.request('POST', `/v1/payments/${a.paymentId}/refund`, {
    body: { amount: 10_000 },
  })
  assert.equal(refund.status, 200, JSON.stringify(refund.body))
  const web = await signedIn(h, m)
  const page = await web.get('/dashboard')
  assert.equal(page.status, 200)
  assert.match(blockText(page.text, 'today-gross', 'li'), /₺1\.234,56/)
  assert.match(blockText(page.text, 'today-count', 'li'), /2$/)
  assert.match(blockText(page.text, 'period-gross', 'li'), /₺1\.234,56/)
  // Approved 3 (two captured, one authorized) of 4 decided (one declined).
  assert.match(blockText(page.text, 'today-success', 'li'), /%75/)
  assert.match(blockText(page.text, 'refunds', 'li'), /₺100,00/)
  const balances = await m.client.request<{
    items: { reserveMinor: number; availableMinor: number }[]
  }>('GET', '/v1/balances')
  const available = balances.body.items.reduce((s, b) => s + b.availableMinor, 0)
  const reserved = balances.body.items.reduce((s, b) => s + b.reserveMinor, 0)
  const fmt = (minor: number) =>
    new Intl.NumberFormat('tr-TR', { style: 'currency', currency: 'TRY' }).format(minor / 100)
  assert.match(
    blockText(page.text, 'available', 'li'),
    new RegExp(fmt(available).replace(/[.$]/g, '\\$&')),
  )
  assert.match(
    blockText(page.text, 'reserved', 'li'),
    new RegExp(fmt(reserved).replace(/[.$]/g, '\\$&')),
  )
  const table = tableText(page.text, 'volume-table')
  assert.ok(table.includes('₺1.234,56'), 'the table has today’s volume')
  assert.match(page.text, /id="page-data"/)
  assert.ok(csrfOf(page.text))
  // Against the previous period (nothing then): its value, no percentage of nothing.
  assert.match(blockText(page.text, 'period-gross', 'li'), /Önceki dönem: ₺0,00/)

  // The periods: 7 days, today; a custom one compared with the days before it.
  const week = await web.get('/dashboard?range=7')
  assert.equal(week.status, 200)
  assert.equal((tableText(week.text, 'volume-table').match(/₺/g) ?? []).length, 7 * 2)
  assert.match(week.text, /aria-current="true"[^>]*>Son 7 gün|Son 7 gün/)
  const today = await web.get('/dashboard?range=today')
  assert.match(blockText(today.text, 'period-gross', 'li'), /₺1\.234,56/)
  h.clock.advance(2 * 24 * 3600_000)
  await paidPayment(m, 50_000)
  const later = await signedIn(h, m) // two days on, the first session has ended
  const day = (offset: number) =>
    new Date(h.clock.now().getTime() + offset * 24 * 3600_000).toLocaleDateString('en-CA', {
      timeZone: 'Europe/Istanbul',
    })
  const custom = await later.get(`/dashboard?range=custom&from=${day(0)}&to=${day(0)}`)
  assert.equal(custom.status, 200)
  assert.match(blockText(custom.text, 'period-gross', 'li'), /₺500,00/)
  const twoDays = await later.get(`/dashboard?range=custom&from=${day(-2)}&to=${day(-2)}`)
  assert.match(blockText(twoDays.text, 'period-gross', 'li'), /₺1\.234,56/)
  const compared = await later.get(`/dashboard?range=custom&from=${day(-1)}&to=${day(0)}`)
  // ₺500,00 now against ₺1.234,56 in the two days before: −59,5%.
  assert.match(
    blockText(compared.text, 'period-gross', 'li'),
    /Önceki döneme göre -%59,5 \(₺1\.234,56\)/,
  )
  // A period that ends before it starts, or in the future: refused at the field, in Turkish.
  for (const bad of [
    `from=${day(0)}&to=${day(-3)}`,
    `from=${day(0)}&to=${day(5)}`,
    'from=x&to=y',
  ]) {
    const refused = await later.get(`/dashboard?range=custom&${bad}`)
    assert.equal(refused.status, 400, bad)
    assert.match(refused.text, /class="field-error"[^>]*>Geçerli bir tarih aralığı seçin/)
  }
})

test('the card vault access log lists each time a card was read out of the vault', async (t) => {
  const h = await startTestApp(t)
  const m = await newDashboardMerchant(h)
  const { res, cardToken } = await charge(m.client, CARDS.frictionless, 1_500, {
    threeDSecure: false,
  })
  assert.equal(res.status, 201)
  const web = await signedIn(h, m)
  const page = await web.get('/dashboard/developers/card-access')
  assert.equal(page.status, 200)
  assert.ok(tableText(page.text, 'card-access-table').includes(cardToken))
  const other = await newDashboardMerchant(h, 'Başka Mağaza')
  const theirs = await signedIn(h, other)
  const empty = await theirs.get('/dashboard/developers/card-access')
  assert.ok(!empty.text.includes(cardToken), 'scoped to the merchant')
})

test('the header’s search: ids to their pages, an amount, an email, anything else to payments', async (t) => {
  const h = await startTestApp(t)
  const m = await newDashboardMerchant(h)
  const paid = await paidPayment(m, 15_000)
  const web = await signedIn(h, m)
  const page = await web.get('/dashboard/payments')
  assert.match(page.text, /role="search"[\s\S]*?id="search-header"/)
  const where = async (q: string) =>
    (await web.get(`/dashboard/search?q=${encodeURIComponent(q)}`)).location
  assert.equal(await where(paid.paymentId), `/dashboard/payments/${paid.paymentId}`)
  assert.equal(await where('cus_abc123'), '/dashboard/customers/cus_abc123')
  assert.equal(await where('sub_abc123'), '/dashboard/subscriptions/sub_abc123')
  assert.equal(await where('inv_abc123'), '/dashboard/invoices/inv_abc123')
  assert.equal(await where('₺150,00'), '/dashboard/payments?min=150%2C00&max=150%2C00')
  assert.equal(await where('ayse@example.com'), '/dashboard/customers?q=ayse%40example.com')
  assert.equal(await where('0016'), '/dashboard/payments?q=0016')
  // The amount search finds the payment.
  const byAmount = await web.get('/dashboard/payments?min=150%2C00&max=150%2C00')
  assert.match(tableText(byAmount.text, 'payments-table'), new RegExp(paid.transactionId))
  const byTransaction = await web.get((await where(paid.transactionId)) ?? '')
  assert.match(tableText(byTransaction.text, 'payments-table'), new RegExp(paid.transactionId))
})

test('internals (event codes, ledger legs, risk facts) only under "Teknik ayrıntılar", for developer roles', async (t) => {
  const h = await startTestApp(t)
  const m = await newDashboardMerchant(h)
  const paid = await paidPayment(m, 15_000)
  const owner = await signedIn(h, m)
  const mine = await owner.get(`/dashboard/payments/${paid.paymentId}`)
  assert.match(
    mine.text,
    /<details class="tech-details" id="payment-internals">\s*<summary>Teknik ayrıntılar/,
  )
  assert.match(
    blockText(mine.text, 'payment-internals', 'details'),
    /payment\.captured|DEBIT|CREDIT/,
  )
  const finance = await memberWeb(h, m, 'finance')
  const theirs = await finance.get(`/dashboard/payments/${paid.paymentId}`)
  assert.equal(theirs.status, 200)
  assert.doesNotMatch(theirs.text, /Teknik ayrıntılar|payment-internals|risk-facts|DEBIT/)
})
