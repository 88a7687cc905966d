// Goal: the hosted checkout takes a payment in live (issue 39): 3-D Secure at the bank's own
// 3D gate — our page posts the bank's signed form there by our own script under the CSP, the
// bank posts back to Kuruş, the payment is authorized once at the same POS and the buyer
// lands on the merchant's returnUrl with `captured`. The sandbox ACS is never involved.
// Method: playwright-core driving Debian's chromium against a live app whose İşbank URLs are
// an EST simulator's (test/helpers/live-bank.ts); the returnUrl is a tiny local server.
import assert from 'node:assert/strict'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { test } from 'node:test'
import { testBrowser } from '../helpers/browser.ts'
import { startLiveTestApp } from '../helpers/live-bank.ts'
import { CARDS } from '../helpers/payments.ts'

test('live: the hosted checkout pays with 3-D Secure through the bank POS (EST simulator)', async (t) => {
  const h = await startLiveTestApp(t)
  const m = await h.newMerchant({ kycStatus: 'approved', name: 'Ege Zeytin' })
  const shop = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
    res.end('<!doctype html><html lang="en"><title>Shop</title><h1>Thank you</h1></html>')
  })
  await new Promise<void>((resolve) => shop.listen(0, '127.0.0.1', resolve))
  t.after(() => new Promise<void>((resolve) => shop.close(() => resolve())))
  const shopOrigin = `http://127.0.0.1:${(shop.address() as AddressInfo).port}`
  const session = await m.client.request<{ sessionId: string }>('POST', '/v1/payments/sessions', {
    body: {
      transactionId: `ord-${crypto.randomUUID()}`,
      amount: 7_450,
      currency: 'TRY',
      returnUrl: `${shopOrigin}/return`,
    },
  })
  assert.equal(session.status, 201, JSON.stringify(session.body))

  const browser = await testBrowser()
  t.after(() => browser.close())
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 } })
  t.after(() => context.close())
  const page = await context.newPage()
  const problems: string[] = []
  const posts: string[] = []
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`))
  page.on('console', (msg) => {
    // A 404 is the simulator's or the shop's missing favicon.
    if (msg.type() === 'error' && !/favicon|status of 404/.test(msg.text()))
      problems.push(msg.text())
  })
  page.on('request', (r) => {
    if (r.method() === 'POST') posts.push(new URL(r.url()).origin + new URL(r.url()).pathname)
  })
  await page.goto(`${h.url}/s/${session.body.sessionId}`)
  await page.locator('#cc-number').pressSequentially(CARDS.frictionless)
  await page.locator('#cc-exp').fill('12 / 30')
  await page.locator('#cc-csc').fill('123')
  await page.locator('#cc-name').fill('Ayşe Yılmaz')
  await page.locator('button[type="submit"]').click()
  await page.waitForURL((url) => url.origin === shopOrigin, { timeout: 20_000 })
  const back = Object.fromEntries(new URL(page.url()).searchParams)
  assert.equal(back['status'], 'captured', JSON.stringify(back))
  assert.deepEqual(problems, [])
  // The card went to the bank's gate (by our script), the bank's answer came back to us.
  const gate = new URL(h.bank.threeDGate)
  assert.ok(posts.includes(gate.origin + gate.pathname), posts.join(', '))
  assert.ok(
    posts.some((p) => p.endsWith(`/3ds/${back['paymentId']}/bank`)),
    posts.join(', '),
  )
  const payment = await m.client.request<Record<string, unknown>>(
    'GET',
    `/v1/payments/${back['paymentId']}`,
  )
  assert.equal(payment.body['status'], 'captured')
  assert.equal(h.bank.authorizations(), 1)
  assert.equal(h.bank.orders.get(back['paymentId'] ?? '')?.amount, 7_450)
  const acs = await h.deps.db.selectFrom('acquirer_sandbox_3ds').select('payment_id').execute()
  assert.equal(acs.length, 0)
})
