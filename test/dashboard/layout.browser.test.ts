// Goal: the dashboard's pages are laid out, not only rendered. At 360, 768, 1280 and 1920 px
// the sign-in page, the other pages before sign-in and every list page: (1) the page itself
// never scrolls sideways; (2) from 768 px up, the page's main form or table is at least 300 px
// wide (the 1280-px sign-in form once sat in a 160-px grid column); (3) a table wider than
// its container sits in a scroll wrapper, and from 1280 px up no table needs that wrapper to
// scroll (the reports, API keys and payments tables once hid their last columns); (4) with a
// sidebar, its background reaches the bottom of a long page; (5) at 360 px the header is
// compact (the navigation behind a menu button that opens it); the overview chart's tooltip
// names the day in Turkish and the amount in lira.
// Method: playwright-core driving Debian's chromium against startTestApp (PGlite only: the
// layout does not depend on the database); geometry read with getBoundingClientRect.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { chromium, type Browser, type Page } from 'playwright-core'
import { startGarantiSimulator } from '../../src/modules/acquirer/index.ts'
import { startTestApp } from '../helpers/app.ts'
import { runsBackendIndependentChecks } from '../helpers/db.ts'
import { newDashboardMerchant, paidPayment } from './_web.ts'

const WIDTHS = [360, 768, 1280, 1920] as const

let browser: Browser

before(async () => {
  if (!runsBackendIndependentChecks()) return
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run'],
  })
})

after(async () => {
  await browser?.close()
})

interface Geometry {
  pageScroll: number
  pageClient: number
  main: { kind: string; width: number } | null
  tables: { id: string; width: number; wrapClient: number; wrapScroll: number; scrolls: boolean }[]
  nav: { bottom: number } | null
  mainBottom: number
  header: number
}

/** What the checks need, measured in the page. */
function measure(page: Page): Promise<Geometry> {
  return page.evaluate(() => {
    const main = document.querySelector('main')
    const visible = (e: Element) => (e as HTMLElement).offsetParent !== null
    const tables = [...(main?.querySelectorAll('table') ?? [])].filter(visible)
    const forms = [...(main?.querySelectorAll('form') ?? [])].filter(
      (f) =>
        visible(f) &&
        f.closest('table') === null &&
        f.querySelector('input:not([type="hidden"]), select, textarea') !== null,
    )
    // A list with no rows yet shows its empty state; a page of words, its panel.
    const first =
      tables[0] ?? forms[0] ?? main?.querySelector('.empty') ?? main?.querySelector('.panel')
    // The sidebar column (its background), whatever its markup.
    const nav = document.querySelector('.app-menu, .app-nav')
    return {
      pageScroll: document.documentElement.scrollWidth,
      pageClient: document.documentElement.clientWidth,
      main: first
        ? { kind: first.tagName.toLowerCase(), width: first.getBoundingClientRect().width }
        : null,
      tables: tables.map((table) => {
        const wrap = table.parentElement as HTMLElement
        const overflow = getComputedStyle(wrap).overflowX
        return {
          id: wrap.id || table.id || table.querySelector('caption')?.textContent?.trim() || '?',
          width: table.getBoundingClientRect().width,
          wrapClient: wrap.clientWidth,
          wrapScroll: wrap.scrollWidth,
          scrolls: overflow === 'auto' || overflow === 'scroll',
        }
      }),
      nav: nav && visible(nav) ? { bottom: nav.getBoundingClientRect().bottom } : null,
      mainBottom: main?.getBoundingClientRect().bottom ?? 0,
      header: document.querySelector('header')?.getBoundingClientRect().height ?? 0,
    }
  })
}

/** Every way the page is badly laid out (empty when it is fine). */
function problemsOf(g: Geometry, width: number, label: string, expectNav: boolean): string[] {
  const out: string[] = []
  const fail = (ok: boolean, what: string) => {
    if (!ok) out.push(`${label}: ${what}`)
  }
  fail(g.pageScroll <= g.pageClient, `the page scrolls sideways (${g.pageScroll} px)`)
  fail(g.main !== null, 'no main form or table')
  if (g.main && width >= 768) {
    fail(g.main.width >= 300, `the main ${g.main.kind} is ${Math.round(g.main.width)} px wide`)
  }
  for (const table of g.tables) {
    if (table.wrapScroll > table.wrapClient) {
      fail(table.scrolls, `table ${table.id} is clipped (no scroll wrapper)`)
    }
    if (width >= 1280) {
      fail(
        table.wrapScroll <= table.wrapClient,
        `table ${table.id} needs ${table.wrapScroll} px in ${table.wrapClient} px`,
      )
    }
  }
  if (width >= 960 && expectNav) {
    fail(g.nav !== null, 'no sidebar')
    if (g.nav) fail(g.nav.bottom >= g.mainBottom - 1, 'the sidebar stops above the bottom')
  }
  if (width === 360) fail(g.header <= 72, `the header is ${Math.round(g.header)} px tall`)
  return out
}

if (runsBackendIndependentChecks()) {
  test('the sign-in page and every list page lay out at 360, 768, 1280 and 1920 px', async (t) => {
    const h = await startTestApp(t)
    const m = await newDashboardMerchant(h, 'Anadolu Kitap ve Kırtasiye Ticaret Limited Şirketi')
    // Rows in the lists, with long values where the real ones are long.
    const paid = await paidPayment(m, 123_456)
    await paidPayment(m, 9_990)
    await paidPayment(m, 5_000, { capture: false })
    const refunded = await m.client.request('POST', `/v1/payments/${paid.paymentId}/refund`, {
      body: { amount: 10_000 },
    })
    assert.equal(refunded.status, 200)
    const customer = await m.client.request<{ id: string }>('POST', '/v1/customers', {
      body: {
        email: `ayse.yilmaz.uzun.bir.adres-${crypto.randomUUID()}@example.com`,
        name: 'Ayşe Yılmaz',
        phone: '+905321234567',
        externalId: crypto.randomUUID(),
      },
    })
    assert.equal(customer.status, 201)
    const link = await m.client.request('POST', '/v1/payment-links', {
      body: { storeId: m.storeId, amount: 14_990, description: 'El yapımı seramik kupa' },
    })
    assert.equal(link.status, 201)
    const now = h.clock.now()
    const report = await m.client.request('POST', '/v1/reports', {
      body: {
        type: 'balance_summary',
        from: new Date(now.getTime() - 86_400_000).toISOString(),
        to: now.toISOString(),
        format: 'pdf',
      },
    })
    assert.equal(report.status, 202)
    const chargeback = await m.client.request(
      'POST',
      `/v1/sandbox/payments/${paid.paymentId}/chargebacks`,
      { body: { amount: 1_000 } },
    )
    assert.equal(chargeback.status, 201)
    // A bank POS (after the payments, which the sandbox took) and a reconciliation with a
    // difference planted at the bank, so both POS lists have rows.
    const garanti = {
      merchantId: '7000679',
      terminalId: '30691298',
      provisionUser: 'PROVAUT',
      provisionPassword: '123qweASD/',
      storeKey: '12345678',
    }
    const sim = await startGarantiSimulator(garanti)
    t.after(() => sim.close())
    const pos = await m.client.request<{ id: string }>('POST', '/v1/pos-accounts', {
      body: {
        provider: 'garanti',
        name: 'Garanti BBVA sanal POS — Anadolu Kitap merkez mağaza',
        environment: 'test',
        credentials: garanti,
        endpoints: { api: sim.api, threeDGate: sim.threeDGate },
      },
    })
    assert.equal(pos.status, 201, JSON.stringify(pos.body))
    sim.transactions.push({
      orderId: 'pay_notoursatall0000000000',
      trxType: 'Satis',
      status: 'Basarili',
      amount: 1_234_567,
      at: now,
      retrefNum: '999999999999',
      origRetrefNum: '',
    })
    const day = new Date(now.getTime() + 3 * 3_600_000).toISOString().slice(0, 10)
    const reconciled = await m.client.request<{ items: unknown[] }>(
      'POST',
      '/v1/acquirer-reconciliation',
      { body: { date: day, posAccountId: pos.body.id } },
    )
    assert.equal(reconciled.status, 200, JSON.stringify(reconciled.body))
    assert.equal(reconciled.body.items.length, 1)

    const signedIn = await browser.newContext({ locale: 'tr-TR' })
    t.after(() => signedIn.close())
    const first = await signedIn.newPage()
    await first.goto(`${h.url}/dashboard/login`)
    await first.getByLabel('E-posta').fill(m.email)
    await first.getByLabel('Şifre').fill(m.password)
    await first.getByRole('button', { name: 'Giriş yap' }).click()
    await first.waitForURL(`${h.url}/dashboard`)
    const state = await signedIn.storageState()

    const listPages = [
      '/dashboard',
      '/dashboard/payments',
      '/dashboard/customers',
      '/dashboard/subscriptions',
      '/dashboard/invoices',
      '/dashboard/payment-links',
      '/dashboard/chargebacks',
      '/dashboard/reviews',
      '/dashboard/risk/rules',
      '/dashboard/payouts',
      '/dashboard/payouts/drafts',
      '/dashboard/reports',
      '/dashboard/developers',
      '/dashboard/developers/events',
      '/dashboard/developers/webhooks/deliveries',
      '/dashboard/settings',
      '/dashboard/settings/audit-log',
      '/dashboard/pos',
      '/dashboard/pos/new?provider=garanti',
      `/dashboard/pos/reconciliation?date=${day}&pos=${pos.body.id}`,
    ]
    const problems: string[] = []
    for (const width of WIDTHS) {
      const viewport = { width, height: 860 }
      const anon = await browser.newContext({ viewport, locale: 'tr-TR' })
      try {
        const page = await anon.newPage()
        for (const path of ['/dashboard/login', '/dashboard/invite/unknown-link-000000000000']) {
          await page.goto(`${h.url}${path}`)
          problems.push(...problemsOf(await measure(page), width, `${path} at ${width}`, false))
        }
      } finally {
        await anon.close()
      }
      const context = await browser.newContext({ viewport, locale: 'tr-TR', storageState: state })
      try {
        const page = await context.newPage()
        for (const path of listPages) {
          await page.goto(`${h.url}${path}`)
          problems.push(...problemsOf(await measure(page), width, `${path} at ${width}`, true))
        }
        if (width === 1280) {
          // The chart's tooltip: the day in Turkish, the amount in lira, the previous period.
          await page.goto(`${h.url}/dashboard?range=7`)
          const over = page.locator('#volume-chart .u-over')
          await over.waitFor()
          const box = await over.boundingBox()
          assert.ok(box)
          // The latest day (hover scrolls the chart into view first).
          await over.hover({ position: { x: box.width - 4, y: box.height / 2 } })
          const tip = page.locator('.chart-tip')
          await tip.waitFor()
          assert.match(
            await tip.innerText(),
            /\d{1,2} (Ocak|Şubat|Mart|Nisan|Mayıs|Haziran|Temmuz|Ağustos|Eylül|Ekim|Kasım|Aralık) \d{4}[\s\S]*Brüt hacim: ₺[\d.]+,\d\d[\s\S]*Önceki dönem/,
          )
        }
        if (width === 360) {
          // The navigation is one tap away, not a sideways strip.
          await page.goto(`${h.url}/dashboard/payments`)
          const links = page.locator('.app-nav a')
          assert.equal(await links.first().isVisible(), false, 'the menu starts closed')
          await page.getByRole('button', { name: 'Menü' }).click()
          const customers = page.locator('.app-nav').getByRole('link', { name: 'Müşteriler' })
          await customers.click()
          await page.waitForURL(`${h.url}/dashboard/customers`)
        }
      } finally {
        await context.close()
      }
    }
    assert.deepEqual(problems, [])
  })
}
