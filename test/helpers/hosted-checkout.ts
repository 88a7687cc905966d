import assert from 'node:assert/strict'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { TestContext } from 'node:test'
import type { TestMerchant } from './app.ts'
import { testBrowser } from './browser.ts'
import { CARDS } from './payments.ts'

export interface HostedCheckoutRun {
  /** The query the buyer came back to the shop's returnUrl with (status, paymentId, …). */
  back: Record<string, string>
  /** Origin + path of every POST the buyer's browser made, in order. */
  posts: string[]
  /** Page errors and console errors seen on the way. */
  problems: string[]
}

/**
 * Plays a buyer on the hosted checkout in chromium: a session of `amount` kuruş whose
 * returnUrl is a local shop, the frictionless test card typed into the card form, and the
 * wait until the browser is back at the shop. Whatever 3-D Secure the payment needs on the
 * way (a bank's 3D gate, the sandbox ACS) happens by the pages' own scripts.
 */
export async function payOnHostedCheckout(
  t: TestContext,
  appUrl: string,
  merchant: TestMerchant,
  amount: number,
): Promise<HostedCheckoutRun> {
  const shop = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
    res.end('<!doctype html><html lang="en"><title>Shop</title><h1>Thank you</h1></html>')
  })
  await new Promise<void>((resolve) => shop.listen(0, '127.0.0.1', resolve))
  t.after(() => new Promise<void>((resolve) => shop.close(() => resolve())))
  const shopOrigin = `http://127.0.0.1:${(shop.address() as AddressInfo).port}`
  const session = await merchant.client.request<{ sessionId: string }>(
    'POST',
    '/v1/payments/sessions',
    {
      body: {
        transactionId: `ord-${crypto.randomUUID()}`,
        amount,
        currency: 'TRY',
        returnUrl: `${shopOrigin}/return`,
      },
    },
  )
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
    // A 404 is a simulator's or the shop's missing favicon.
    if (msg.type() === 'error' && !/favicon|status of 404/.test(msg.text()))
      problems.push(msg.text())
  })
  page.on('request', (r) => {
    if (r.method() === 'POST') posts.push(new URL(r.url()).origin + new URL(r.url()).pathname)
  })
  await page.goto(`${appUrl}/s/${session.body.sessionId}`)
  await page.locator('#cc-number').pressSequentially(CARDS.frictionless)
  await page.locator('#cc-exp').fill('12 / 30')
  await page.locator('#cc-csc').fill('123')
  await page.locator('#cc-name').fill('Ayşe Yılmaz')
  await page.locator('button[type="submit"]').click()
  await page.waitForURL((url) => url.origin === shopOrigin, { timeout: 20_000 })
  return { back: Object.fromEntries(new URL(page.url()).searchParams), posts, problems }
}
