// Goal: a buyer pays through a payment link in a real browser: opens the link the merchant
// got, types the name the link asks for, presses Öde, fills the hosted checkout's card form,
// comes back to the link's page and is thanked; the merchant sees the payment with its
// paymentLinkId and the link's paymentsCount. The page passes axe-core (nothing serious or
// critical) at 360 and 1280 px in both languages, does not overflow at 360 px, weighs under
// 100 KB with everything it loads, loads nothing from another origin and breaks no CSP rule.
// Method: playwright-core driving Debian's chromium against startTestApp. The link is on
// CHECKOUT_URL (http://localhost:3000 in tests, where nothing listens): the browser context
// routes that origin to the test app, so the buyer uses the exact link the merchant got.
import assert from 'node:assert/strict'
import { mkdirSync } from 'node:fs'
import { after, before, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import type { Browser, BrowserContext } from 'playwright-core'
import type { PaymentLink } from '../../sdk/index.ts'
import { testBrowser, unlessClosed } from '../helpers/browser.ts'
import { startTestApp, type TestApp } from '../helpers/app.ts'
import { CARDS } from '../helpers/payments.ts'
import { runsBackendIndependentChecks } from '../helpers/db.ts'
import { createLink } from './_support.ts'

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

/** A context in which CHECKOUT_URL's origin is served by the test app; other origins fail. */
async function buyerContext(
  h: TestApp,
  options: { viewport: { width: number; height: number }; bypassCSP?: boolean },
): Promise<{ context: BrowserContext; problems: string[]; bytes: { n: number } }> {
  const context = await browser.newContext({ locale: 'tr-TR', ...options })
  const checkoutOrigin = new URL(h.config.checkoutUrl).origin
  const problems: string[] = []
  const bytes = { n: 0 }
  await context.route('**/*', async (route) => {
    const url = new URL(route.request().url())
    if (url.origin !== checkoutOrigin) {
      problems.push(`request to another origin: ${url.href}`)
      return route.abort()
    }
    try {
      const response = await route.fetch({
        url: h.url + url.pathname + url.search,
        maxRedirects: 0,
      })
      bytes.n += (await response.body()).length
      await route.fulfill({ response })
    } catch (error) {
      unlessClosed(error)
    }
  })
  context.on('weberror', (e) => problems.push(`pageerror: ${e.error().message}`))
  context.on('console', (m) => {
    if (m.type() === 'error' && !/favicon/.test(m.text())) problems.push(`console: ${m.text()}`)
  })
  return { context, problems, bytes }
}

test('a buyer pays through a payment link and is thanked; the merchant sees the payment', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant({ name: 'Kapadokya Seramik' })
  const link = await createLink(m, { maxPayments: 5, collect: { name: true } })
  const { context, problems, bytes } = await buyerContext(h, { viewport: WIDTHS.mobile })
  t.after(() => context.close())
  const page = await context.newPage()

  await page.goto(link.url)
  assert.equal(await page.getAttribute('html', 'lang'), 'tr')
  assert.equal(await page.locator('h1').innerText(), 'Ödenecek tutar\n₺149,90')
  assert.equal(await page.locator('#link-description').innerText(), 'El yapımı kupa')
  assert.ok(bytes.n < 100 * 1024, `the page and its assets weigh ${bytes.n} bytes`)
  await page.screenshot({ path: `${SCREENSHOTS}payment-link-360.png`, fullPage: true })

  await page.getByLabel('Ad soyad').fill('Ayşe Yılmaz')
  await page.getByRole('button', { name: '₺149,90 Öde' }).click()
  await page.waitForURL(/\/s\/[0-9a-f-]{36}$/)
  assert.equal(await page.locator('h1').innerText(), 'Ödenecek tutar\n₺149,90')
  await page.locator('#cc-number').pressSequentially(CARDS.frictionless)
  await page.locator('#cc-exp').fill('12 / 30')
  await page.locator('#cc-csc').fill('123')
  await page.locator('#cc-name').fill('Ayşe Yılmaz')
  await page.getByRole('button', { name: /₺149,90 öde/ }).click()

  // The checkout returns to the link's page, which thanks the buyer.
  await page.waitForURL((url) => url.pathname === new URL(link.url).pathname)
  const back = Object.fromEntries(new URL(page.url()).searchParams)
  assert.equal(back['status'], 'captured')
  assert.match(await page.locator('h1').innerText(), /Ödemeniz alındı/)

  const payment = await m.client.request<{
    status: string
    paymentLinkId: string
    metadata: Record<string, string>
  }>('GET', `/v1/payments/${back['paymentId']}`)
  assert.equal(payment.body.status, 'captured')
  assert.equal(payment.body.paymentLinkId, link.id)
  assert.equal(payment.body.metadata['customerName'], 'Ayşe Yılmaz')
  const after = await m.client.request<PaymentLink>('GET', `/v1/payment-links/${link.id}`)
  assert.equal(after.body.paymentsCount, 1)
  assert.deepEqual(problems, [])
})

interface AxeResult {
  violations: { id: string; impact: string | null; help: string; nodes: unknown[] }[]
}

// Rendering and accessibility do not depend on the database: checked in one pass.
if (runsBackendIndependentChecks()) {
  test('the link page and its 410 page at 360 and 1280 px, TR and EN: axe finds nothing serious', async (t) => {
    const h = await startTestApp(t)
    const m = await h.newMerchant({ name: 'Boğaziçi Çiçek Evi' })
    const link = await createLink(m, {
      description: 'Haftalık çiçek aboneliği — ilk teslimat',
      collect: { name: true, email: true, phone: true },
    })
    const off = await createLink(m)
    await m.client.request('POST', `/v1/payment-links/${off.id}/deactivate`, { body: {} })
    for (const [label, viewport] of [
      ['360', WIDTHS.mobile],
      ['1280', WIDTHS.desktop],
    ] as const) {
      for (const lang of ['tr', 'en'] as const) {
        for (const [kind, url] of [
          ['open', link.url],
          ['gone', off.url],
        ] as const) {
          // axe is injected as a script tag, which our CSP would (rightly) refuse.
          const { context } = await buyerContext(h, { viewport, bypassCSP: true })
          try {
            const page = await context.newPage()
            await page.goto(`${url}?lang=${lang}`)
            await page.screenshot({
              path: `${SCREENSHOTS}payment-link-${kind}-${lang}-${label}.png`,
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
              `${kind} ${lang} at ${label} px`,
            )
            const overflow = await page.evaluate(
              () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
            )
            assert.equal(overflow, 0, `${kind} ${lang} at ${label} px`)
          } finally {
            await context.close()
          }
        }
      }
    }
  })
}
