// Goal: a buyer pays an invoice in a real browser: opens the invoice's link, presses Öde,
// fills the hosted checkout's card form, comes back to the invoice page and sees it paid;
// the merchant's signed API says paid too. The page passes axe-core at 360 and 1280 px and
// breaks no CSP rule. Method: playwright-core driving Debian's chromium against startTestApp.
// The invoice's link is on CHECKOUT_URL (http://localhost:3000 in tests, where nothing
// listens): the browser context routes that origin to the test app, so the buyer uses the
// exact link the merchant got, and the checkout returns to it.
import assert from 'node:assert/strict'
import { mkdirSync } from 'node:fs'
import { after, before, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import type { Browser, BrowserContext } from 'playwright-core'
import { testBrowser, unlessClosed } from '../helpers/browser.ts'
import { startTestApp, type TestApp } from '../helpers/app.ts'
import { CARDS } from '../helpers/payments.ts'
import { activatedInvoice, eventTypes, getInvoice } from './_support.ts'
import { runsBackendIndependentChecks } from '../helpers/db.ts'

const SCREENSHOTS = fileURLToPath(new URL('../../.artifacts/screenshots/', import.meta.url))
const AXE = fileURLToPath(new URL('../../node_modules/axe-core/axe.min.js', import.meta.url))
const WIDTHS = { mobile: { width: 360, height: 780 }, desktop: { width: 1280, height: 860 } }

let browser: Browser

before(async () => {
  mkdirSync(SCREENSHOTS, { recursive: true })
  browser = await testBrowser()
})

after(async () => {
  await browser.close()
})

/** A context in which CHECKOUT_URL's origin is served by the test app. */
async function buyerContext(
  h: TestApp,
  options: { viewport: { width: number; height: number }; bypassCSP?: boolean },
): Promise<{ context: BrowserContext; problems: string[] }> {
  const context = await browser.newContext({ locale: 'tr-TR', ...options })
  const checkoutOrigin = new URL(h.config.checkoutUrl).origin
  await context.route(
    (url) => url.origin === checkoutOrigin,
    async (route) => {
      const url = new URL(route.request().url())
      try {
        const response = await route.fetch({
          url: h.url + url.pathname + url.search,
          maxRedirects: 0,
        })
        await route.fulfill({ response })
      } catch (error) {
        unlessClosed(error)
      }
    },
  )
  const problems: string[] = []
  context.on('weberror', (e) => problems.push(`pageerror: ${e.error().message}`))
  context.on('console', (m) => {
    if (m.type() === 'error' && !/favicon/.test(m.text())) problems.push(`console: ${m.text()}`)
  })
  return { context, problems }
}

test('a buyer pays an invoice through its page and sees it paid', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant({ name: 'Anadolu Kitap' })
  const invoice = await activatedInvoice(m)
  assert.ok(invoice.url.startsWith(h.config.checkoutUrl))
  const { context, problems } = await buyerContext(h, { viewport: WIDTHS.desktop })
  t.after(() => context.close())
  const page = await context.newPage()

  await page.goto(invoice.url)
  assert.equal(await page.getAttribute('html', 'lang'), 'tr')
  assert.equal(await page.locator('h1').innerText(), 'Ödenecek tutar\n₺1.234,56')
  assert.equal(await page.locator('#status-value').innerText(), 'Ödeme bekleniyor')
  await page.screenshot({ path: `${SCREENSHOTS}invoice-open-1280.png`, fullPage: true })

  await page.getByRole('button', { name: 'Öde', exact: true }).click()
  await page.waitForURL(/\/s\/[0-9a-f-]{36}$/)
  assert.equal(await page.locator('h1').innerText(), 'Ödenecek tutar\n₺1.234,56')
  await page.locator('#cc-number').pressSequentially(CARDS.frictionless)
  await page.locator('#cc-exp').fill('12 / 30')
  await page.locator('#cc-csc').fill('123')
  await page.locator('#cc-name').fill('Ayşe Yılmaz')
  await page.getByRole('button', { name: /₺1\.234,56 öde/ }).click()

  // The checkout returns to the invoice's page, which now says paid.
  await page.waitForURL((url) => url.pathname === `/invoice/${invoice.publicHash}`)
  const back = Object.fromEntries(new URL(page.url()).searchParams)
  assert.equal(back['status'], 'captured')
  assert.equal(await page.locator('#status-value').innerText(), 'Ödendi')
  assert.match(await page.locator('#invoice-status').innerText(), /ödendi/)
  assert.equal(await page.getByRole('button', { name: 'Öde', exact: true }).count(), 0)
  await page.screenshot({ path: `${SCREENSHOTS}invoice-paid-1280.png`, fullPage: true })

  const paid = await getInvoice(m, invoice.id)
  assert.equal(paid.status, 'paid')
  assert.equal(paid.paymentId, back['paymentId'])
  const payment = await m.client.request<{ status: string; amount: number }>(
    'GET',
    `/v1/payments/${back['paymentId']}`,
  )
  assert.equal(payment.body.status, 'captured')
  assert.equal(payment.body.amount, invoice.amountMinor)
  assert.deepEqual(await eventTypes(h, m.merchantId, invoice.id), [
    'invoice.created',
    'invoice.activated',
    'invoice.viewed',
    'invoice.paid',
  ])
  assert.deepEqual(problems, [])
})

interface AxeResult {
  violations: { id: string; impact: string | null; help: string; nodes: unknown[] }[]
}

// Rendering and accessibility do not depend on the database: checked in one pass.
if (runsBackendIndependentChecks()) {
  test('the invoice page at 360 and 1280 px, in both languages: axe finds nothing serious', async (t) => {
    const h = await startTestApp(t)
    const m = await h.newMerchant({ name: 'Boğaziçi Çiçek Evi' })
    const invoice = await activatedInvoice(m, {
      dueDate: '2027-02-28T09:00:00Z',
      notes: 'Siparişiniz için teşekkürler.',
    })
    for (const [label, viewport] of [
      ['360', WIDTHS.mobile],
      ['1280', WIDTHS.desktop],
    ] as const) {
      for (const lang of ['tr', 'en'] as const) {
        // axe is injected as a script tag, which our CSP would (rightly) refuse.
        const { context } = await buyerContext(h, { viewport, bypassCSP: true })
        try {
          const page = await context.newPage()
          await page.goto(`${invoice.url}?lang=${lang}`)
          const name = lang === 'tr' ? 'Öde' : 'Pay'
          assert.equal(await page.getByRole('button', { name, exact: true }).count(), 1)
          await page.screenshot({
            path: `${SCREENSHOTS}invoice-${lang}-${label}.png`,
            fullPage: true,
          })
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
            `${lang} at ${label} px`,
          )
          // Nothing overflows sideways on a phone.
          const overflow = await page.evaluate(
            () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
          )
          assert.equal(overflow, 0, `${lang} at ${label} px`)
        } finally {
          await context.close()
        }
      }
    }
  })
}
