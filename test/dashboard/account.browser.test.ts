// Goal: a person who forgot their password gets back in through the browser, in Turkish, and
// a signed-in one finds the account page (issue 41 "Accounts"): "Şifremi unuttum" on the
// sign-in page → the address → the mailed link → a new password → signed in with it. The
// forgot, reset and account pages do not scroll sideways at 360 px, have one h1, and axe-core
// finds nothing serious or critical on them.
// Method: playwright-core driving Debian's chromium (the run's shared one) against
// startTestApp (PGlite only: the pages do not depend on the database); the mail read from the
// demo mailbox as the person would open it.
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { after, before, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import type { Browser, Page } from 'playwright-core'
import { listMailbox } from '../../src/modules/mail/index.ts'
import { startTestApp } from '../helpers/app.ts'
import { testBrowser } from '../helpers/browser.ts'
import { runsBackendIndependentChecks } from '../helpers/db.ts'
import { newDashboardMerchant } from './_web.ts'

const AXE_SOURCE = readFileSync(
  fileURLToPath(new URL('../../node_modules/axe-core/axe.min.js', import.meta.url)),
  'utf8',
)

let browser: Browser | undefined

before(async () => {
  if (runsBackendIndependentChecks()) browser = await testBrowser()
})

after(async () => {
  await browser?.close()
})

interface AxeResult {
  testEngine: { name: string }
  violations: { id: string; impact: string | null; help: string; nodes: unknown[] }[]
}

async function checkPage(page: Page, label: string): Promise<void> {
  const { scroll, client } = await page.evaluate(() => ({
    scroll: document.documentElement.scrollWidth,
    client: document.documentElement.clientWidth,
  }))
  assert.ok(scroll <= client, `${label}: the page scrolls sideways (${scroll} > ${client} px)`)
  const result = await page.evaluate<AxeResult>(
    `${AXE_SOURCE}\n;axe.run(document, { resultTypes: ['violations'] })`,
  )
  assert.equal(result.testEngine.name, 'axe-core', `${label}: axe ran`)
  const serious = result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')
  assert.deepEqual(
    serious.map((v) => `${v.id}: ${v.help} (${v.nodes.length})`),
    [],
    label,
  )
  assert.equal(await page.locator('h1').count(), 1, `${label}: one h1`)
}

// Registered on the PGlite run only: the pages do not depend on the database.
if (runsBackendIndependentChecks()) {
  test('forgot password in the browser: the link, a new password, signed in', async (t) => {
    assert.ok(browser)
    const h = await startTestApp(t)
    const m = await newDashboardMerchant(h)
    const context = await browser.newContext({
      locale: 'tr-TR',
      viewport: { width: 360, height: 780 },
    })
    t.after(() => context.close())
    const page = await context.newPage()

    await page.goto(`${h.url}/dashboard/login`)
    await page.getByRole('link', { name: 'Şifremi unuttum' }).click()
    await page.waitForURL(`${h.url}/dashboard/password/forgot`)
    await checkPage(page, 'forgot')
    await page.getByLabel('E-posta').fill(m.email)
    await page.getByRole('button', { name: 'Bağlantı gönder' }).click()
    await page
      .getByRole('status')
      .getByText(/sıfırlama bağlantısı gönderdik/)
      .waitFor()

    const [mail] = await listMailbox(h.deps, { to: m.email, limit: 1 })
    const link = /https?:\/\/\S+(\/dashboard\/password\/reset\/\S+)/.exec(mail?.text ?? '')?.[1]
    assert.ok(link, mail?.text)
    await page.goto(`${h.url}${link}`)
    await checkPage(page, 'reset')
    await page.getByLabel('Yeni şifre', { exact: true }).fill('a-fresh-password-1')
    await page.getByLabel('Yeni şifre (tekrar)').fill('a-fresh-password-1')
    await page.getByRole('button', { name: 'Şifreyi kaydet' }).click()
    await page.waitForURL(`${h.url}/dashboard/login`)
    await page
      .getByRole('status')
      .getByText(/Şifreniz değişti/)
      .waitFor()

    await page.getByLabel('E-posta').fill(m.email)
    await page.getByLabel('Şifre').fill('a-fresh-password-1')
    await page.getByRole('button', { name: 'Giriş yap' }).click()
    await page.waitForURL(`${h.url}/dashboard`)
    await page.goto(`${h.url}/dashboard/settings/account`)
    await checkPage(page, 'account')
    assert.equal(await page.locator('#account-email').innerText(), m.email)
  })
}
