// Goal: the hosted pages work for a real buyer in a real browser on the real server: card
// payment with installments, 3DS with a right and a wrong OTP, a decline then a retry (at
// 360 px, keyboard only), QR paid through the sandbox bank, and a card update; each ends on
// the merchant's returnUrl with the right status, verified through the signed API. Every page
// is screenshotted at 360 and 1280 px (.artifacts/screenshots/) and checked with axe-core.
// Method: playwright-core driving Debian's chromium against startTestApp; the returnUrl is a
// tiny local HTTP server that records the query it is sent to.
import assert from 'node:assert/strict'
import { mkdirSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { testBrowser } from '../helpers/browser.ts'
import { startTestApp, type TestApp, type TestMerchant } from '../helpers/app.ts'
import { CARDS } from '../helpers/payments.ts'
import { createCustomer } from './_support.ts'
import { runsBackendIndependentChecks } from '../helpers/db.ts'

const SCREENSHOTS = fileURLToPath(new URL('../../.artifacts/screenshots/', import.meta.url))
const AXE = fileURLToPath(new URL('../../node_modules/axe-core/axe.min.js', import.meta.url))
const WIDTHS = { mobile: { width: 360, height: 780 }, desktop: { width: 1280, height: 860 } }

let browser: Browser
let shop: Server
let shopOrigin = ''
const returns: Record<string, string>[] = []

before(async () => {
  mkdirSync(SCREENSHOTS, { recursive: true })
  browser = await testBrowser()
  // The merchant's site: records the query of every return and says thank you.
  shop = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://shop.local')
    if (url.pathname === '/return') returns.push(Object.fromEntries(url.searchParams))
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
    res.end('<!doctype html><html lang="en"><title>Shop</title><h1>Thank you</h1></html>')
  })
  await new Promise<void>((resolve) => shop.listen(0, '127.0.0.1', resolve))
  shopOrigin = `http://127.0.0.1:${(shop.address() as AddressInfo).port}`
})

after(async () => {
  await browser.close()
  await new Promise<void>((resolve) => shop.close(() => resolve()))
})

interface Watched {
  context: BrowserContext
  page: Page
  /** Every request the page made, as "METHOD origin". */
  requests: string[]
  problems: string[]
}

/** A page with the CSP enforced; CSP reports, script errors and foreign requests are kept. */
async function openPage(
  viewport: { width: number; height: number },
  locale = 'tr-TR',
): Promise<Watched> {
  const context = await browser.newContext({ viewport, locale })
  const page = await context.newPage()
  const requests: string[] = []
  const problems: string[] = []
  page.on('request', (r) => requests.push(`${r.method()} ${new URL(r.url()).origin}`))
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`))
  page.on('console', (m) => {
    if (m.type() === 'error' && !/favicon|status of 4\d\d/.test(m.text())) {
      problems.push(`console: ${m.text()}`)
    }
  })
  return { context, page, requests, problems }
}

/** Our pages talk to our origin only; the one other origin is the merchant's return page. */
function assertOnlyOurOrigins(h: TestApp, w: Watched) {
  const ours = new URL(h.url).origin
  for (const entry of w.requests) {
    const [method, origin] = entry.split(' ')
    if (origin === ours || origin === 'data:' || origin === 'null') continue
    assert.equal(origin, shopOrigin, `unexpected request ${entry}`)
    assert.equal(method, 'GET', `card data must never be posted to ${origin}`)
  }
  assert.deepEqual(w.problems, [])
}

async function newSession(
  m: TestMerchant,
  body: Record<string, unknown>,
): Promise<{ sessionId: string }> {
  const res = await m.client.request<{ sessionId: string }>('POST', '/v1/payments/sessions', {
    body: {
      transactionId: `ord-${crypto.randomUUID()}`,
      currency: 'TRY',
      returnUrl: `${shopOrigin}/return?order=42`,
      ...body,
    },
  })
  assert.equal(res.status, 201, JSON.stringify(res.body))
  return res.body
}

async function waitForReturn(page: Page): Promise<Record<string, string>> {
  await page.waitForURL((url) => url.origin === shopOrigin)
  return Object.fromEntries(new URL(page.url()).searchParams)
}

async function fillCard(page: Page, number: string, exp = '12 / 30', cvc = '123') {
  await page.locator('#cc-number').pressSequentially(number)
  await page.locator('#cc-exp').fill(exp)
  await page.locator('#cc-csc').fill(cvc)
  await page.locator('#cc-name').fill('Ayşe Yılmaz')
}

async function getPayment(m: TestMerchant, paymentId: string) {
  const res = await m.client.request<Record<string, unknown>>('GET', `/v1/payments/${paymentId}`)
  assert.equal(res.status, 200)
  return res.body
}

test('a frictionless card paid in 3 installments returns captured', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant({ name: 'Anadolu Kitap' })
  const { sessionId } = await newSession(m, { amount: 90_000, installmentEnabled: true })
  const w = await openPage(WIDTHS.desktop)
  t.after(() => w.context.close())
  const { page } = w
  await page.goto(`${h.url}/s/${sessionId}`)
  assert.equal(await page.locator('h1').innerText(), 'Ödenecek tutar\n₺900,00')
  await page.locator('#cc-number').pressSequentially(CARDS.frictionless)
  assert.equal(await page.locator('#cc-number').inputValue(), '4155 6501 0041 6111')
  await page.locator('#cc-brand svg.brand-mark[data-brand="visa"]').waitFor({ state: 'visible' })
  const options = page.locator('input[name="installmentCount"]')
  await page.waitForFunction(
    () => document.querySelectorAll('input[name="installmentCount"]').length === 12,
  )
  assert.equal(await options.count(), 12)
  // Focus moved on to the expiry by itself once the number was complete.
  assert.equal(await page.evaluate(() => document.activeElement?.id), 'cc-exp')
  await page.locator('label.option', { hasText: '3 taksit' }).click()
  assert.match(
    await page.locator('label.option', { hasText: '3 taksit' }).innerText(),
    /3 × ₺300,00/,
  )
  await page.locator('#cc-exp').fill('12 / 30')
  await page.locator('#cc-csc').fill('123')
  await page.locator('#cc-name').fill('Ayşe Yılmaz')
  await page.getByRole('button', { name: /₺900,00 öde/ }).click()
  const back = await waitForReturn(page)
  assert.equal(back['status'], 'captured')
  assert.equal(back['sessionId'], sessionId)
  assert.equal(back['order'], '42')
  const payment = await getPayment(m, back['paymentId'] ?? '')
  assert.equal(payment['status'], 'captured')
  assert.equal(payment['installmentCount'], 3)
  assert.equal(payment['amount'], 90_000)
  assert.ok(returns.some((r) => r['paymentId'] === back['paymentId']))
  assertOnlyOurOrigins(h, w)
})

test('a 3DS challenge with the right OTP returns captured', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant({ name: 'Boğaziçi Çiçek' })
  const { sessionId } = await newSession(m, { amount: 4_990 })
  const w = await openPage(WIDTHS.desktop, 'en-GB')
  t.after(() => w.context.close())
  const { page } = w
  await page.goto(`${h.url}/s/${sessionId}`)
  assert.equal(await page.getAttribute('html', 'lang'), 'en')
  await fillCard(page, CARDS.challenge)
  await page.getByRole('button', { name: 'Pay ₺49.90' }).click()
  await page.waitForURL(/\/3ds\/pay_/)
  const otp = page.getByLabel('Verification code')
  assert.equal(await otp.getAttribute('autocomplete'), 'one-time-code')
  await otp.fill('123456')
  await otp.press('Enter')
  const back = await waitForReturn(page)
  assert.equal(back['status'], 'captured')
  assert.equal(back['sessionId'], sessionId)
  assert.equal((await getPayment(m, back['paymentId'] ?? ''))['status'], 'captured')
  assertOnlyOurOrigins(h, w)
})

test('a 3DS challenge with a wrong OTP returns failed', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const { sessionId } = await newSession(m, { amount: 4_990 })
  const w = await openPage(WIDTHS.desktop)
  t.after(() => w.context.close())
  const { page } = w
  await page.goto(`${h.url}/s/${sessionId}`)
  await fillCard(page, CARDS.challenge)
  await page.locator('button[type="submit"]').click()
  await page.waitForURL(/\/3ds\/pay_/)
  await page.getByLabel('Doğrulama kodu').fill('000000')
  await page.getByRole('button', { name: 'Onayla' }).click()
  await page.getByRole('heading', { name: 'Ödeme tamamlanamadı' }).waitFor()
  const back = await waitForReturn(page)
  assert.equal(back['status'], 'failed')
  const payment = await getPayment(m, back['paymentId'] ?? '')
  assert.equal(payment['status'], 'failed')
  assert.equal(payment['declineCode'], 'authentication_failed')
  assertOnlyOurOrigins(h, w)
})

test('at 360 px, keyboard only: a declined card, the message, then a good card', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const customerId = await createCustomer(m.client)
  const { sessionId } = await newSession(m, { amount: 12_000, customerId })
  const w = await openPage(WIDTHS.mobile)
  t.after(() => w.context.close())
  const { page } = w
  await page.goto(`${h.url}/s/${sessionId}`)
  const width = await page.evaluate(() => document.documentElement.scrollWidth)
  assert.ok(width <= 360, `no horizontal scrolling at 360 px (page is ${width} px wide)`)
  await page.locator('#cc-number').focus()
  await page.keyboard.type(CARDS.declined)
  // The number is complete: the cursor is in the expiry, then in the CVC.
  await page.keyboard.type('1230')
  assert.equal(await page.evaluate(() => document.activeElement?.id), 'cc-csc')
  await page.keyboard.type('123')
  await page.keyboard.press('Tab')
  await page.keyboard.type('Ayşe Yılmaz')
  await page.keyboard.press('Tab')
  assert.equal(await page.evaluate(() => document.activeElement?.id), 'save-card')
  await page.keyboard.press('Space')
  await page.keyboard.press('Enter')
  const alert = page.getByRole('alert')
  await alert.getByText('Ödeme reddedildi').waitFor()
  assert.match(await alert.innerText(), /bankanız tarafından reddedildi/)
  await page.screenshot({ path: `${SCREENSHOTS}pay-declined-360.png`, fullPage: true })
  // The form stays usable: the number is selected for retyping, the CVC emptied.
  assert.equal(await page.evaluate(() => document.activeElement?.id), 'cc-number')
  assert.equal(await page.locator('#cc-csc').inputValue(), '')
  await page.keyboard.type(CARDS.frictionless)
  await page.keyboard.press('Tab')
  await page.keyboard.type('123')
  await page.keyboard.press('Enter')
  const back = await waitForReturn(page)
  assert.equal(back['status'], 'captured')
  const payment = await getPayment(m, back['paymentId'] ?? '')
  assert.equal(payment['status'], 'captured')
  assert.equal(payment['cardMask'], '415565******6111')
  assert.equal(payment['customerId'], customerId)
  assertOnlyOurOrigins(h, w)
})

test('a QR payment paid through the sandbox bank moves the page on to the returnUrl', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant({ name: 'Kadıköy Kahve' })
  const { sessionId } = await newSession(m, { amount: 18_500, mode: 'qr' })
  const w = await openPage(WIDTHS.desktop)
  t.after(() => w.context.close())
  const { page } = w
  await page.goto(`${h.url}/s/${sessionId}`)
  const image = page.getByRole('img', { name: /Kadıköy Kahve için ₺185,00/ })
  await image.waitFor()
  await page.waitForFunction(() => {
    const img = document.querySelector<HTMLImageElement>('img.qr-image')
    return img !== null && img.complete && img.naturalWidth > 0
  })
  const paid = await m.client.request<{ paymentId: string }>(
    'POST',
    `/v1/sandbox/sessions/${sessionId}/qr-pay`,
    { body: {} },
  )
  assert.equal(paid.status, 201)
  const back = await waitForReturn(page)
  assert.equal(back['status'], 'captured')
  assert.equal(back['paymentId'], paid.body.paymentId)
  const payment = await getPayment(m, paid.body.paymentId)
  assert.equal(payment['method'], 'qr')
  assert.equal(payment['status'], 'captured')
  assertOnlyOurOrigins(h, w)
})

test('a card update saves the card as the customer default and returns card_updated', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const customerId = await createCustomer(m.client)
  const { sessionId } = await newSession(m, { mode: 'card_update_only', customerId })
  const w = await openPage(WIDTHS.mobile, 'en-US')
  t.after(() => w.context.close())
  const { page } = w
  await page.goto(`${h.url}/s/${sessionId}`)
  await fillCard(page, CARDS.troy, '08 / 31', '321')
  await page.locator('#cc-brand svg.brand-mark[data-brand="troy"]').waitFor({ state: 'visible' })
  await page.getByRole('button', { name: 'Update card' }).click()
  const back = await waitForReturn(page)
  assert.deepEqual(back, { order: '42', sessionId, status: 'card_updated' })
  const card = await m.client.request<Record<string, unknown>>(
    'GET',
    `/v1/customers/${customerId}/cards/default`,
  )
  assert.equal(card.status, 200)
  assert.equal(card.body['last4'], '0001')
  assert.equal(card.body['expMonth'], 8)
  assert.equal(card.body['expYear'], 2031)
  assertOnlyOurOrigins(h, w)
})

test('inline feedback: Luhn, expiry and CVC errors show next to their fields', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const { sessionId } = await newSession(m, { amount: 1_000 })
  const w = await openPage(WIDTHS.desktop, 'en-US')
  t.after(() => w.context.close())
  const { page } = w
  await page.goto(`${h.url}/s/${sessionId}`)
  await page.locator('#cc-number').pressSequentially('4155650100416112')
  await page.locator('#cc-exp').fill('01 / 20')
  await page.locator('#cc-csc').fill('1')
  await page.locator('#cc-name').focus()
  assert.equal(
    await page.locator('#cc-number-error').innerText(),
    'This card number is not valid. Please check it.',
  )
  assert.equal(await page.locator('#cc-number').getAttribute('aria-invalid'), 'true')
  assert.equal(await page.locator('#cc-exp-error').innerText(), 'This card has expired.')
  await page.locator('#cc-name').blur()
  await page.getByRole('button', { name: 'Pay ₺10.00' }).click()
  assert.equal(
    await page.locator('#cc-csc-error').innerText(),
    'The security code must be 3 digits.',
  )
  assert.equal(await page.locator('#cc-name-error').innerText(), 'Enter the name on the card.')
  assert.equal(await page.getByRole('alert').innerText(), 'Please correct the highlighted fields.')
  // Nothing was sent: the server has no payment for this session.
  const view = await fetch(`${h.url}/v1/public/sessions/${sessionId}`)
  assert.equal(((await view.json()) as { paymentId: unknown }).paymentId, null)
  assertOnlyOurOrigins(h, w)
})

interface AxeResult {
  violations: { id: string; impact: string | null; help: string; nodes: unknown[] }[]
}

/** Screenshot at both widths, then axe-core: no serious or critical violations. */
async function shootAndAudit(
  name: string,
  url: string,
  prepare?: (page: Page) => Promise<void>,
  options: { holdStill?: boolean } = {},
) {
  for (const [label, viewport] of [
    ['360', WIDTHS.mobile],
    ['1280', WIDTHS.desktop],
  ] as const) {
    // axe is injected as a script tag, which our CSP would (rightly) refuse.
    const context = await browser.newContext({
      viewport,
      bypassCSP: true,
      locale: 'tr-TR',
    })
    try {
      // An outcome page returns to the merchant by itself after a moment: hold it still.
      if (options.holdStill) {
        await context.addInitScript(() => {
          // Strip the auto-return marker as the page is parsed, before our script runs.
          new MutationObserver(() => {
            document.querySelector('[data-auto-redirect]')?.removeAttribute('data-auto-redirect')
          }).observe(document, { childList: true, subtree: true })
        })
      }
      const page = await context.newPage()
      await page.goto(url)
      if (prepare) await prepare(page)
      await page.screenshot({ path: `${SCREENSHOTS}${name}-${label}.png`, fullPage: true })
      await page.addScriptTag({ path: AXE })
      const result = await page.evaluate(
        async () =>
          (await (
            window as unknown as { axe: { run(): Promise<unknown> } }
          ).axe.run()) as AxeResult,
      )
      const serious = result.violations.filter(
        (v) => v.impact === 'serious' || v.impact === 'critical',
      )
      assert.deepEqual(
        serious.map((v) => `${v.id}: ${v.help} (${v.nodes.length})`),
        [],
        `${name} at ${label} px`,
      )
    } finally {
      await context.close()
    }
  }
}

// Rendering and accessibility do not depend on the database: checked in one pass.
if (runsBackendIndependentChecks()) {
  test('every page at 360 and 1280 px: screenshots, and axe finds nothing serious', async (t) => {
    const h = await startTestApp(t)
    const m = await h.newMerchant({ name: 'Anadolu Kitap' })
    const customerId = await createCustomer(m.client)
    const pay = await newSession(m, {
      amount: 123_450,
      installmentEnabled: true,
      customerId,
      description: 'Sipariş #1042 · 3 kitap',
    })
    await shootAndAudit('pay', `${h.url}/s/${pay.sessionId}`)
    await shootAndAudit('pay-filled', `${h.url}/s/${pay.sessionId}`, async (page) => {
      await fillCard(page, CARDS.frictionless)
      await page.waitForFunction(
        () => document.querySelectorAll('input[name="installmentCount"]').length === 12,
      )
      await page.locator('label.option', { hasText: '3 taksit' }).click()
    })
    await shootAndAudit('pay-declined', `${h.url}/s/${pay.sessionId}`, async (page) => {
      await fillCard(page, CARDS.declined)
      await page.locator('button[type="submit"]').click()
      await page.getByRole('alert').getByText('Ödeme reddedildi').waitFor()
    })
    await shootAndAudit('pay-en', `${h.url}/s/${pay.sessionId}?lang=en`)

    const card = await newSession(m, { mode: 'card_update_only', customerId })
    await shootAndAudit('card-update', `${h.url}/s/${card.sessionId}`)

    const qr = await newSession(m, { amount: 18_500, mode: 'qr' })
    await shootAndAudit('qr', `${h.url}/s/${qr.sessionId}`, async (page) => {
      await page.waitForFunction(() => {
        const img = document.querySelector<HTMLImageElement>('img.qr-image')
        return img !== null && img.complete && img.naturalWidth > 0
      })
    })

    // A challenge for the ACS page and, without script (no auto-return), the outcome page.
    const threeDs = await newSession(m, { amount: 4_990 })
    const res = await fetch(`${h.url}/v1/public/sessions/${threeDs.sessionId}/pay`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        card: {
          number: CARDS.challenge,
          expMonth: 12,
          expYear: 2030,
          cvc: '123',
          holderName: 'A B',
        },
      }),
    })
    const { challengeUrl } = (await res.json()) as { challengeUrl: string }
    await shootAndAudit('acs', `${h.url}${challengeUrl}`)
    const correlationId = new URL(`${h.url}${challengeUrl}`).searchParams.get('correlationId') ?? ''
    const acs = await fetch(`${h.url}${challengeUrl.split('?')[0]}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ correlationId, otp: '123456' }).toString(),
      redirect: 'manual',
    })
    assert.equal(acs.status, 303)
    await shootAndAudit(
      'outcome',
      `${h.url}${acs.headers.get('location') ?? ''}`,
      async (page) => {
        await page.getByRole('heading', { name: 'Ödeme başarılı' }).waitFor()
      },
      { holdStill: true },
    )
    // The paid session's page now says so; an expired one says that.
    await shootAndAudit('completed', `${h.url}/s/${threeDs.sessionId}`)
    const old = await newSession(m, { amount: 1_000 })
    h.clock.advance(31 * 60 * 1000)
    await shootAndAudit('expired', `${h.url}/s/${old.sessionId}`)
    await shootAndAudit('not-found', `${h.url}/s/${crypto.randomUUID()}`)
  })
}
