// Goal: the buyer portal page works for a real buyer in a real browser: cancel via the page (the
// cancel shows up in the merchant's API), update the card through the hosted checkout and come
// back to the page with the new card, in Turkish and English, under the enforced CSP, talking to
// our origin only; screenshots at 360 and 1280 px (.artifacts/screenshots/) and axe-core finds
// nothing serious. Method: playwright-core driving Debian's chromium against startTestApp, with
// the deployment's checkout host (CHECKOUT_URL) routed to the test server.
import assert from 'node:assert/strict'
import { mkdirSync } from 'node:fs'
import { after, before, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { testBrowser, unlessClosed } from '../helpers/browser.ts'
import { startTestApp, type TestApp } from '../helpers/app.ts'
import { CARDS } from '../helpers/payments.ts'
import { eventTypes, getSub, reconcile, subscribed } from './_support.ts'
import { runsBackendIndependentChecks } from '../helpers/db.ts'

const SCREENSHOTS = fileURLToPath(new URL('../../.artifacts/screenshots/', import.meta.url))
const AXE = fileURLToPath(new URL('../../node_modules/axe-core/axe.min.js', import.meta.url))
// A *.localhost name: a potentially trustworthy origin, as HTTPS is in production.
const CHECKOUT_HOST = 'http://checkout.localhost'
const WIDTHS = { mobile: { width: 360, height: 780 }, desktop: { width: 1280, height: 860 } }

let browser: Browser

before(async () => {
  mkdirSync(SCREENSHOTS, { recursive: true })
  browser = await testBrowser()
})

after(async () => {
  await browser.close()
})

function start(t: Parameters<typeof startTestApp>[0]): Promise<TestApp> {
  return startTestApp(t, { env: { CHECKOUT_URL: CHECKOUT_HOST } })
}

interface Watched {
  context: BrowserContext
  page: Page
  /** Every request the page made, as "METHOD origin". */
  requests: string[]
  problems: string[]
}

/**
 * A browser context in which the checkout host is served by the test server (the page's
 * origin stays the checkout host, so the CSP's 'self' is what a buyer gets). Script errors,
 * CSP reports and requests are kept.
 */
async function openContext(
  h: TestApp,
  options: { viewport?: { width: number; height: number }; locale?: string; axe?: boolean } = {},
): Promise<Watched> {
  const context = await browser.newContext({
    viewport: options.viewport ?? WIDTHS.desktop,
    locale: options.locale ?? 'tr-TR',
    // axe is injected as a script tag, which our CSP would (rightly) refuse.
    bypassCSP: options.axe === true,
  })
  // Fetched and fulfilled (not re-targeted) so the browser keeps the checkout host as origin.
  await context.route(`${CHECKOUT_HOST}/**`, async (route) => {
    try {
      const response = await route.fetch({
        url: route.request().url().replace(CHECKOUT_HOST, h.url),
        maxRedirects: 0,
      })
      await route.fulfill({ response })
    } catch (error) {
      unlessClosed(error)
    }
  })
  const page = await context.newPage()
  const requests: string[] = []
  const problems: string[] = []
  page.on('request', (r) => requests.push(`${r.method()} ${new URL(r.url()).origin}`))
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`))
  page.on('console', (m) => {
    if (m.type() === 'error' && !/favicon/.test(m.text())) problems.push(`console: ${m.text()}`)
  })
  return { context, page, requests, problems }
}

function assertClean(w: Watched) {
  for (const entry of w.requests) {
    assert.equal(entry.split(' ')[1], CHECKOUT_HOST, `unexpected request ${entry}`)
  }
  assert.deepEqual(w.problems, [])
}

test('the buyer cancels on the page: the cancel shows in the merchant’s API', async (t) => {
  const h = await start(t)
  const { m, sub } = await subscribed(h)
  await reconcile(m)
  const paid = await getSub(m, sub.id)
  const w = await openContext(h)
  t.after(() => w.context.close())
  const { page } = w
  await page.goto(`${CHECKOUT_HOST}/subscription/${sub.publicHash ?? ''}`)
  assert.equal(await page.title(), 'Test Merchant · Aboneliğiniz')
  assert.equal(await page.locator('#status-value').innerText(), 'Aktif')
  assert.equal(await page.locator('#card-value').innerText(), 'VISA •••• 6111')
  const update = page.getByRole('button', { name: 'Kartı güncelle', exact: true })
  await update.waitFor()

  await page.getByRole('button', { name: 'İptal', exact: true }).click()
  const status = page.getByRole('status')
  await status.filter({ hasText: 'sona erecek' }).waitFor()
  assert.equal(await page.locator('#status-value').innerText(), 'Dönem sonunda iptal edilecek')
  assert.equal(await page.getByRole('button', { name: 'İptal', exact: true }).count(), 0)

  const after = await getSub(m, sub.id)
  assert.equal(after.cancelAtPeriodEnd, true)
  assert.equal(after.status, 'active')
  assert.equal(after.nextChargeAt, paid.nextChargeAt)
  assert.equal((await eventTypes(h, m.merchantId, sub.id)).at(-1), 'subscription.cancel_scheduled')

  // Reloaded, the page tells the same story from the server.
  await page.reload()
  await page.getByRole('status').filter({ hasText: 'sona erecek' }).waitFor()
  assert.equal(await page.getByRole('button', { name: 'İptal', exact: true }).count(), 0)
  assertClean(w)
})

test('the buyer updates the card through the hosted checkout and comes back to the page (English)', async (t) => {
  const h = await start(t)
  const { m, sub } = await subscribed(h, { card: CARDS.declined })
  await reconcile(m)
  assert.equal((await getSub(m, sub.id)).status, 'past_due')
  const w = await openContext(h, { locale: 'en-GB' })
  t.after(() => w.context.close())
  const { page } = w
  const portal = `${CHECKOUT_HOST}/subscription/${sub.publicHash ?? ''}`
  await page.goto(`${portal}?lang=en`)
  assert.equal(await page.locator('#status-value').innerText(), 'Payment failed')
  await page.locator('#portal-warning').filter({ hasText: 'The last payment failed' }).waitFor()

  await page.getByRole('button', { name: 'Update card', exact: true }).click()
  await page.waitForURL((url) => url.pathname.startsWith('/s/'))
  await page.locator('#cc-number').pressSequentially(CARDS.troy)
  await page.locator('#cc-exp').fill('12 / 30')
  await page.locator('#cc-csc').fill('123')
  await page.locator('#cc-name').fill('Ayşe Yılmaz')
  await page.locator('button[type=submit]').click()

  // Back on the portal, with the new card taken in.
  await page.waitForURL((url) => url.pathname.startsWith('/subscription/'), { timeout: 15_000 })
  assert.equal(new URL(page.url()).searchParams.get('status'), 'card_updated')
  await page.getByRole('status').filter({ hasText: 'Your card is updated' }).waitFor()
  assert.equal(await page.locator('#card-value').innerText(), 'TROY •••• 0001')

  // The past-due cycle is retried with the new card at the next tick.
  await reconcile(m)
  const after = await getSub(m, sub.id)
  assert.equal(after.status, 'active')
  assert.equal(after.cycleNumber, 1)
  assert.equal(after.cardLast4, '0001')
  assertClean(w)
})

interface AxeResult {
  violations: { id: string; impact: string | null; help: string; nodes: unknown[] }[]
}

// Rendering and accessibility do not depend on the database: checked in one pass.
if (runsBackendIndependentChecks()) {
  test('the page at 360 and 1280 px, tr and en: screenshots, and axe finds nothing serious', async (t) => {
    const h = await start(t)
    const active = await subscribed(h, { extra: { description: 'Altın üyelik' } })
    const pastDue = await subscribed(h, { card: CARDS.declined })
    await reconcile(active.m)
    const pages = [
      ['active', active.sub.publicHash ?? ''],
      ['past-due', pastDue.sub.publicHash ?? ''],
    ] as const
    for (const [label, viewport] of [
      ['360', WIDTHS.mobile],
      ['1280', WIDTHS.desktop],
    ] as const) {
      for (const [[state, hash], lang] of pages.flatMap((pg) =>
        (['tr', 'en'] as const).map((l) => [pg, l] as const),
      )) {
        const w = await openContext(h, { viewport, axe: true })
        try {
          await w.page.goto(`${CHECKOUT_HOST}/subscription/${hash}?lang=${lang}`)
          await w.page.screenshot({
            path: `${SCREENSHOTS}subscription-${state}-${lang}-${label}.png`,
            fullPage: true,
          })
          await w.page.addScriptTag({ path: AXE })
          const result = await w.page.evaluate(
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
            `${state} ${lang} at ${label} px`,
          )
        } finally {
          await w.context.close()
        }
      }
    }
  })
}
