// Goal: the merchant dashboard works for a real person in a real browser on the real server,
// under its CSP: sign-in (wrong, then right password, by keyboard), the overview's figures
// match data made through the API, finding a payment by transactionId and by last4, a partial
// refund from the detail page (then the API's refundable amount), capture and void, a refused
// action's alert, a forged POST without CSRF token, another merchant's payment as the 404
// page, a viewer invited by email who cannot refund, TOTP enrolment and sign-in, sign-out,
// the EN switch; one flow per section (find a customer, pause a subscription, create an
// invoice with line items, accept a chargeback, upload a payout CSV and approve it); and on
// every dashboard page at 360 and 1280 px: no page-level horizontal
// scroll and no serious or critical axe violation. Runs once (PGlite): pages and the browser
// do not depend on the database, which the web-*.test.ts files cover on both.
// Method: playwright-core driving Debian's chromium against startTestApp; axe-core evaluated
// in the page (DevTools evaluation is not subject to the page's CSP, a script tag would be).
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { after, before, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core'
import { startGarantiSimulator } from '../../src/modules/acquirer/index.ts'
import { listMailbox } from '../../src/modules/mail/index.ts'
import { startTestApp, type TestApp } from '../helpers/app.ts'
import { runsBackendIndependentChecks } from '../helpers/db.ts'
import { CARDS, charge, tokenize } from '../helpers/payments.ts'
import { trIban } from '../payouts/_support.ts'
import { createSubscription } from '../subscriptions/_support.ts'
import { apiPayment, newDashboardMerchant, paidPayment, totpCode } from './_web.ts'

const AXE_SOURCE = readFileSync(
  fileURLToPath(new URL('../../node_modules/axe-core/axe.min.js', import.meta.url)),
  'utf8',
)
const WIDTHS = { mobile: { width: 360, height: 780 }, desktop: { width: 1280, height: 860 } }

let browser: Browser

before(async () => {
  if (!runsBackendIndependentChecks()) return
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  })
})

after(async () => {
  await browser?.close()
})

interface Watched {
  context: BrowserContext
  page: Page
  /** Script errors, CSP refusals and requests to other origins: must stay empty. */
  problems: string[]
}

async function open(h: TestApp, viewport = WIDTHS.desktop, locale = 'tr-TR'): Promise<Watched> {
  const context = await browser.newContext({ viewport, locale })
  const page = await context.newPage()
  const problems: string[] = []
  const ours = new URL(h.url).origin
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`))
  page.on('console', (m) => {
    // 4xx pages are expected in this walk (403, 404, 401): the browser logs each as an error.
    if (m.type() === 'error' && !/status of 4\d\d/.test(m.text())) {
      problems.push(`console: ${m.text()}`)
    }
  })
  page.on('request', (r) => {
    const origin = new URL(r.url()).origin
    if (origin !== ours && origin !== 'null' && !r.url().startsWith('data:')) {
      problems.push(`request to another origin: ${r.url()}`)
    }
  })
  return { context, page, problems }
}

interface AxeResult {
  testEngine: { name: string }
  violations: { id: string; impact: string | null; help: string; nodes: unknown[] }[]
}

/** No page-level horizontal scroll, and axe-core finds nothing serious or critical. */
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

async function signInByKeyboard(page: Page, h: TestApp, email: string, password: string) {
  await page.goto(`${h.url}/dashboard/login`)
  await page.getByLabel('E-posta').focus()
  await page.keyboard.type(email)
  await page.keyboard.press('Tab')
  await page.keyboard.type(password)
  await page.keyboard.press('Enter')
}

function money(minor: number): string {
  return new Intl.NumberFormat('tr-TR', {
    style: 'currency',
    currency: 'TRY',
    currencyDisplay: 'narrowSymbol',
  }).format(minor / 100)
}

if (runsBackendIndependentChecks()) {
  test('the dashboard walk, in a real browser under its CSP', async (t) => {
    const h = await startTestApp(t)
    const m = await newDashboardMerchant(h, 'Anadolu Kitap')
    const other = await newDashboardMerchant(h, 'Başka Mağaza')
    // Data made through the signed API.
    const big = await paidPayment(m, 100_000)
    const debit = await paidPayment(m, 23_456, { card: CARDS.debit })
    const toCapture = await paidPayment(m, 5_000, { capture: false })
    const toVoid = await paidPayment(m, 6_000, { capture: false })
    const declined = await charge(m.client, CARDS.declined, 9_999, { threeDSecure: false })
    assert.equal(declined.res.status, 402)
    const refunded = await m.client.request('POST', `/v1/payments/${big.paymentId}/refund`, {
      body: { amount: 10_000 },
    })
    assert.equal(refunded.status, 200)
    const theirs = await paidPayment(other, 77_700)
    const link = await m.client.request<{ id: string }>('POST', '/v1/payment-links', {
      body: {
        storeId: m.storeId,
        amount: 14_990,
        description: 'El yapımı seramik kupa',
        maxPayments: 10,
        metadata: { sku: 'KUPA-01' },
      },
    })
    assert.equal(link.status, 201)

    const w = await open(h)
    t.after(() => w.context.close())
    const { page } = w

    await t.test('sign-in: a wrong password, then the right one (keyboard only)', async () => {
      await signInByKeyboard(page, h, m.email, 'not-the-password')
      const alert = page.getByRole('alert')
      await alert.waitFor()
      assert.match(await alert.innerText(), /E-posta ya da şifre hatalı/)
      assert.equal(await page.getByLabel('E-posta').inputValue(), m.email, 'the email is kept')
      await page.getByLabel('Şifre').fill(m.password)
      await page.getByRole('button', { name: 'Giriş yap' }).click()
      await page.waitForURL(`${h.url}/dashboard`)
      assert.equal(await page.locator('h1').innerText(), 'Genel bakış')
    })

    await t.test('the overview shows the figures of the data made through the API', async () => {
      assert.match(await page.locator('#today-gross').innerText(), /₺1\.234,56/)
      assert.match(await page.locator('#today-count').innerText(), /\b2$/)
      // Approved: two captured and two authorized; declined: one.
      assert.match(await page.locator('#today-success').innerText(), /%80/)
      assert.match(await page.locator('#refunds').innerText(), /₺100,00/)
      const balances = await m.client.request<{
        items: { reserveMinor: number; availableMinor: number }[]
      }>('GET', '/v1/balances')
      const sum = (k: 'reserveMinor' | 'availableMinor') =>
        balances.body.items.reduce((s, b) => s + b[k], 0)
      assert.ok(
        (await page.locator('#available').innerText()).includes(money(sum('availableMinor'))),
      )
      assert.ok((await page.locator('#reserved').innerText()).includes(money(sum('reserveMinor'))))
      // The chart drew (uPlot ran under the CSP), and its numbers are in the table too.
      await page.locator('#volume-chart canvas').first().waitFor()
      assert.match((await page.locator('#volume-table').textContent()) ?? '', /₺1\.234,56/)
    })

    await t.test(
      'find a payment by its transactionId and by the card’s last four digits',
      async () => {
        await page.getByRole('link', { name: 'Ödemeler' }).click()
        await page.waitForURL(`${h.url}/dashboard/payments`)
        const search = page.getByRole('searchbox', { name: 'Ara', exact: true })
        await search.fill(big.transactionId)
        await page.getByRole('button', { name: 'Filtrele' }).click()
        await page.waitForURL(/q=/)
        const rows = page.locator('#payments-table tbody tr')
        assert.equal(await rows.count(), 1)
        assert.match(await rows.innerText(), new RegExp(big.transactionId))
        await page.getByRole('searchbox', { name: 'Ara', exact: true }).fill('0016')
        await page.getByRole('button', { name: 'Filtrele' }).click()
        await page.waitForURL(/q=0016/)
        assert.equal(await rows.count(), 1)
        assert.match(await rows.innerText(), new RegExp(debit.transactionId))
      },
    )

    await t.test(
      'a partial refund from the detail page, then the API’s refundable amount',
      async () => {
        await page.goto(`${h.url}/dashboard/payments?q=${big.transactionId}`)
        await page.locator('#payments-table tbody tr a').click()
        await page.waitForURL(`${h.url}/dashboard/payments/${big.paymentId}`)
        const amount = page.getByLabel('İade tutarı (₺)')
        assert.equal(await amount.inputValue(), '900,00', 'prefilled with the refundable amount')
        await amount.fill('250,50')
        await page.getByRole('button', { name: 'İade et' }).click()
        await page.getByRole('heading', { name: 'İadeyi onaylayın' }).waitFor()
        await page.getByRole('button', { name: '₺250,50 iade et' }).click()
        await page.waitForURL(`${h.url}/dashboard/payments/${big.paymentId}`)
        assert.match(await page.getByRole('status').innerText(), /₺250,50 iade edildi/)
        assert.equal(await page.locator('#refundable').innerText(), '₺649,50')
        assert.equal((await apiPayment(m, big.paymentId))['refundableAmount'], 64_950)
      },
    )

    await t.test('capture and void of authorized payments', async () => {
      await page.goto(`${h.url}/dashboard/payments/${toCapture.paymentId}`)
      await page.getByRole('button', { name: 'Tahsil et' }).click()
      await page.getByRole('status').getByText('Ödeme tahsil edildi.').waitFor()
      assert.equal((await apiPayment(m, toCapture.paymentId))['status'], 'captured')
      await page.goto(`${h.url}/dashboard/payments/${toVoid.paymentId}`)
      await page.getByRole('button', { name: 'İptal et' }).click()
      await page.getByRole('status').getByText('Ödeme iptal edildi.').waitFor()
      assert.equal((await apiPayment(m, toVoid.paymentId))['status'], 'voided')
      assert.equal(await page.getByRole('button', { name: 'Tahsil et' }).count(), 0)
    })

    await t.test('an impossible refund is refused at its field, before confirming', async () => {
      await page.goto(`${h.url}/dashboard/payments/${debit.paymentId}`)
      await page.getByLabel('İade tutarı (₺)').fill('5000')
      await page.getByRole('button', { name: 'İade et' }).click()
      const alert = page.getByRole('alert')
      await alert.waitFor()
      assert.match(await alert.innerText(), /iade edilebilir tutarı \(₺234,56\) aşamaz/)
      assert.equal(await page.getByRole('heading', { name: 'İadeyi onaylayın' }).count(), 0)
      const amount = page.getByLabel('İade tutarı (₺)')
      assert.equal(await amount.getAttribute('aria-invalid'), 'true')
      assert.equal(await amount.inputValue(), '5000', 'what was typed is kept')
      assert.equal((await apiPayment(m, debit.paymentId))['refundAmount'], 0)
    })

    await t.test('a forged POST without the CSRF token is a 403 and changes nothing', async () => {
      const status = await page.evaluate(async (id) => {
        const res = await fetch(`/dashboard/payments/${id}/refund`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: `amount=10&confirm=yes&idempotencyKey=${crypto.randomUUID()}`,
        })
        return res.status
      }, debit.paymentId)
      assert.equal(status, 403)
      assert.equal((await apiPayment(m, debit.paymentId))['refundAmount'], 0)
    })

    await t.test('another merchant’s payment is the 404 page', async () => {
      const res = await page.goto(`${h.url}/dashboard/payments/${theirs.paymentId}`)
      assert.equal(res?.status(), 404)
      assert.equal(await page.locator('h1').innerText(), 'Sayfa bulunamadı')
    })

    const viewerEmail = `viewer-${crypto.randomUUID()}@example.com`
    const viewerPassword = 'a long viewer password'
    await t.test(
      'an invited viewer cannot refund: no button, and a forged POST is a 403',
      async () => {
        await page.goto(`${h.url}/dashboard/settings`)
        await page.getByLabel('E-posta').fill(viewerEmail)
        await page.getByLabel('Rol', { exact: true }).selectOption('viewer')
        await page.getByRole('button', { name: 'Davet gönder' }).click()
        await page
          .getByRole('status')
          .getByText(`${viewerEmail} adresine davet gönderildi.`)
          .waitFor()
        const [mail] = await listMailbox(h.deps, { to: viewerEmail, limit: 1 })
        const link = /\/dashboard\/invite\/[\w-]+/.exec(mail?.text ?? '')?.[0]
        assert.ok(link)
        const v = await open(h)
        try {
          await v.page.goto(`${h.url}${link}`)
          await v.page.getByLabel('Yeni şifre', { exact: true }).fill(viewerPassword)
          await v.page.getByLabel('Yeni şifre (tekrar)').fill(viewerPassword)
          await v.page.getByRole('button', { name: 'Hesabımı oluştur' }).click()
          await v.page.waitForURL(`${h.url}/dashboard/login`)
          await signInByKeyboard(v.page, h, viewerEmail, viewerPassword)
          await v.page.waitForURL(`${h.url}/dashboard`)
          await v.page.goto(`${h.url}/dashboard/payments/${debit.paymentId}`)
          assert.equal(await v.page.getByRole('button', { name: 'İade et' }).count(), 0)
          const token = await v.page.locator('input[name="_csrf"]').first().inputValue()
          const status = await v.page.evaluate(
            async ({ id, csrf }) => {
              const res = await fetch(`/dashboard/payments/${id}/refund`, {
                method: 'POST',
                headers: { 'content-type': 'application/x-www-form-urlencoded' },
                body: new URLSearchParams({
                  _csrf: csrf,
                  amount: '10',
                  confirm: 'yes',
                  idempotencyKey: crypto.randomUUID(),
                }).toString(),
              })
              return res.status
            },
            { id: debit.paymentId, csrf: token },
          )
          assert.equal(status, 403)
          assert.equal((await apiPayment(m, debit.paymentId))['refundAmount'], 0)
          assert.deepEqual(v.problems, [])
        } finally {
          await v.context.close()
        }
      },
    )

    await t.test('TOTP enrolment, then sign-in with a code', async () => {
      await page.goto(`${h.url}/dashboard/settings/two-factor`)
      await page.getByRole('img', { name: /karekod/i }).waitFor()
      const secret = (await page.locator('#totp-secret').innerText()).trim()
      await page.getByLabel('Doğrulama kodu').fill(totpCode(h, secret))
      await page.getByRole('button', { name: 'İki adımlı doğrulamayı aç' }).click()
      await page.getByRole('status').getByText('İki adımlı doğrulama açıldı.').waitFor()
      await page.getByRole('button', { name: 'Çıkış' }).click()
      await page.waitForURL(`${h.url}/dashboard/login`)
      await signInByKeyboard(page, h, m.email, m.password)
      await page.waitForURL(`${h.url}/dashboard/login/two-factor`)
      h.clock.advance(30_000) // the enrolment's code is spent
      const code = page.getByLabel('Doğrulama kodu')
      assert.equal(await code.getAttribute('autocomplete'), 'one-time-code')
      await code.fill(totpCode(h, secret))
      await page.getByRole('button', { name: 'Doğrula' }).click()
      await page.waitForURL(`${h.url}/dashboard`)
    })

    await t.test('the EN switch, kept across pages', async () => {
      await page.getByRole('link', { name: 'English' }).click()
      await page.waitForURL(/lang=en/)
      assert.equal(await page.getAttribute('html', 'lang'), 'en')
      assert.equal(await page.locator('h1').innerText(), 'Overview')
      await page.getByRole('link', { name: 'Payments' }).click()
      await page.waitForURL(`${h.url}/dashboard/payments`)
      assert.equal(await page.getAttribute('html', 'lang'), 'en')
      assert.match(await page.locator('#payments-table').innerText(), /₺1,000\.00/)
      await page.getByRole('link', { name: 'Türkçe' }).click()
      await page.waitForURL(/lang=tr/)
    })

    // One flow per section, with data made through the API once the overview is checked.
    const buyerEmail = `buyer-${crypto.randomUUID()}@example.com`
    const section = { customerId: '', subscriptionId: '', invoiceId: '', chargebackId: '' }
    let draftId = ''
    await t.test('customers: find one by email, see the saved card', async () => {
      const made = await m.client.request<{ id: string }>('POST', '/v1/customers', {
        body: { email: buyerEmail, name: 'Ayşe Yılmaz', externalId: crypto.randomUUID() },
      })
      section.customerId = made.body.id
      const attached = await m.client.request('POST', `/v1/customers/${made.body.id}/cards`, {
        body: { cardToken: await tokenize(m.client, CARDS.frictionless), isDefault: true },
      })
      assert.equal(attached.status, 201)
      await page.getByRole('link', { name: 'Müşteriler' }).click()
      await page.getByRole('searchbox', { name: 'Ara', exact: true }).fill(buyerEmail)
      await page.getByRole('button', { name: 'Filtrele' }).click()
      await page.getByRole('link', { name: 'Ayşe Yılmaz' }).click()
      await page.waitForURL(`${h.url}/dashboard/customers/${made.body.id}`)
      assert.match(await page.locator('#cards-table').innerText(), /•••• 6111/)
    })

    await t.test('subscriptions: pause one from its page', async () => {
      const sub = await createSubscription(m, section.customerId)
      section.subscriptionId = sub.id
      await page.goto(`${h.url}/dashboard/subscriptions/${sub.id}`)
      await page.getByRole('button', { name: 'Duraklat' }).click()
      await page.getByRole('status').getByText('Abonelik duraklatıldı.').waitFor()
      const api = await m.client.request<{ status: string }>('GET', `/v1/subscriptions/${sub.id}`)
      assert.equal(api.body.status, 'paused')
    })

    await t.test('invoices: create one with two line items', async () => {
      await page.goto(`${h.url}/dashboard/invoices`)
      await page.getByRole('link', { name: 'Yeni fatura' }).click()
      await page.getByLabel('Alıcının e-postası').fill(buyerEmail)
      const line = (n: number) => page.getByRole('group', { name: `Kalem ${String(n)}` })
      await line(1).getByLabel('Ürün ya da hizmet').fill('Roman')
      await line(1).getByLabel('Adet').fill('2')
      await line(1).getByLabel('Birim fiyat (₺)').fill('125,50')
      await line(2).getByLabel('Ürün ya da hizmet').fill('Kargo')
      await line(2).getByLabel('Adet').fill('1')
      await line(2).getByLabel('Birim fiyat (₺)').fill('30')
      await page.getByRole('button', { name: 'Faturayı oluştur' }).click()
      await page.getByRole('status').getByText('Fatura taslak olarak oluşturuldu.').waitFor()
      assert.equal(await page.locator('#invoice-amount').innerText(), '₺281,00')
      section.invoiceId = /inv_\w+/.exec(page.url())?.[0] ?? ''
      const api = await m.client.request<{ amountMinor: number }>(
        'GET',
        `/v1/invoices/${section.invoiceId}`,
      )
      assert.equal(api.body.amountMinor, 28_100)
    })

    await t.test('chargebacks: accept one from its page', async () => {
      const disputed = await paidPayment(m, 15_000)
      const raised = await m.client.request<{ id: string }>(
        'POST',
        `/v1/sandbox/payments/${disputed.paymentId}/chargebacks`,
        { body: {} },
      )
      assert.equal(raised.status, 201)
      section.chargebackId = raised.body.id
      await page.goto(`${h.url}/dashboard/chargebacks`)
      await page.locator('#chargebacks-table tbody tr a').first().click()
      await page.waitForURL(`${h.url}/dashboard/chargebacks/${raised.body.id}`)
      await page.getByRole('button', { name: 'Kabul et' }).click()
      await page.getByRole('status').getByText('Ters ibraz kabul edildi.').waitFor()
      const api = await m.client.request<{ items: { status: string }[] }>(
        'GET',
        `/v1/payments/${disputed.paymentId}/chargebacks`,
      )
      assert.equal(api.body.items[0]?.status, 'accepted')
    })

    await t.test('payouts: a pasted CSV, its per-row report, approve', async () => {
      // Settles the captures, so the merchant has an available balance to pay out of.
      const settled = await m.client.request('POST', '/v1/sandbox/reconcile', { body: {} })
      assert.equal(settled.status, 200)
      await page.goto(`${h.url}/dashboard/payouts`)
      await page.getByRole('link', { name: 'Toplu ödeme yükle' }).click()
      await page
        .getByLabel('CSV satırları')
        .fill(
          `rail,dest,holderName,amountMinor\nfast,${trIban('1111')},Ayşe Yılmaz,1500\neft,TR00,Ali Veli,100`,
        )
      await page.getByRole('button', { name: 'Yükle ve denetle' }).click()
      await page
        .getByRole('status')
        .getByText('Taslak yüklendi: 2 satırın 1 tanesi geçerli.')
        .waitFor()
      assert.match(await page.locator('#report-table').innerText(), /Ali Veli/)
      draftId = /drf_\w+/.exec(page.url())?.[0] ?? ''
      await page.getByRole('button', { name: 'Onayla ve ₺15,00 öde' }).click()
      await page.getByRole('status').getByText('Taslak onaylandı: 1 ödeme sıraya alındı.').waitFor()
      const api = await m.client.request<{ items: { amountMinor: number }[] }>('GET', '/v1/payouts')
      assert.deepEqual(
        api.body.items.map((p) => p.amountMinor),
        [1_500],
      )
    })

    // Every page of the dashboard, at both widths, with the owner's session.
    await t.test(
      'every dashboard page at 360 and 1280 px: no sideways scroll, axe clean',
      async () => {
        // Data for the risk, evidence and payout pages, made here (after the flows above) so
        // the rule holds only this charge: an amount no other step uses.
        const rule = await m.client.request<{ id: string }>('POST', '/v1/risk/rules', {
          body: {
            name: 'Tam 777 TL',
            action: 'review',
            condition: { '==': [{ var: 'amount' }, 77_700] },
          },
        })
        assert.equal(rule.status, 201)
        const held = await paidPayment(m, 77_700)
        const reviews = await m.client.request<{ items: { id: string; paymentId: string }[] }>(
          'GET',
          '/v1/reviews?status=open',
        )
        const reviewId = reviews.body.items.find((r) => r.paymentId === held.paymentId)?.id ?? ''
        const listed = await m.client.request('POST', '/v1/risk/lists/email/items', {
          body: { value: 'dolandirici@example.com', note: 'iki ters ibraz' },
        })
        assert.equal(listed.status, 201)
        const open = await m.client.request<{ id: string }>(
          'POST',
          `/v1/sandbox/payments/${big.paymentId}/chargebacks`,
          { body: { amount: 1_000 } },
        )
        assert.equal(open.status, 201)
        const payouts = await m.client.request<{ items: { id: string }[] }>('GET', '/v1/payouts')
        const payoutId = payouts.body.items[0]?.id ?? ''
        // A Garanti POS (on its simulator) and a reconciled day with a sale only the bank has,
        // for the POS pages; made last, so no earlier payment went through it.
        const garanti = {
          merchantId: '7000679',
          terminalId: '30691298',
          provisionUser: 'PROVAUT',
          provisionPassword: '123qweASD/',
          storeKey: '12345678',
        }
        const bank = await startGarantiSimulator(garanti)
        t.after(() => bank.close())
        const pos = await m.client.request<{ id: string }>('POST', '/v1/pos-accounts', {
          body: {
            provider: 'garanti',
            name: 'Garanti BBVA',
            environment: 'test',
            credentials: garanti,
            endpoints: { api: bank.api, threeDGate: bank.threeDGate },
          },
        })
        assert.equal(pos.status, 201, JSON.stringify(pos.body))
        bank.transactions.push({
          orderId: 'pay_notoursatall0000000000',
          trxType: 'Satis',
          status: 'Basarili',
          amount: 7_500,
          at: new Date(),
          retrefNum: '999999999999',
          origRetrefNum: '',
        })
        const bankDay = new Date(Date.now() + 3 * 3_600_000).toISOString().slice(0, 10)
        const reconciled = await m.client.request('POST', '/v1/acquirer-reconciliation', {
          body: { date: bankDay, posAccountId: pos.body.id },
        })
        assert.equal(reconciled.status, 200, JSON.stringify(reconciled.body))
        const state = await w.context.storageState()
        const pages = [
          '/dashboard',
          '/dashboard/payments',
          `/dashboard/payments?q=${big.transactionId}`,
          `/dashboard/payments/${big.paymentId}`,
          `/dashboard/payments/${toCapture.paymentId}`,
          `/dashboard/payments/${theirs.paymentId}`,
          '/dashboard/developers',
          '/dashboard/developers/webhooks/deliveries',
          '/dashboard/developers/events',
          '/dashboard/developers/card-access',
          '/dashboard/settings',
          '/dashboard/settings/two-factor',
          '/dashboard/settings/audit-log',
          '/dashboard/customers',
          `/dashboard/customers?q=${encodeURIComponent(buyerEmail)}`,
          `/dashboard/customers/${section.customerId}`,
          '/dashboard/subscriptions',
          `/dashboard/subscriptions/${section.subscriptionId}`,
          '/dashboard/invoices',
          '/dashboard/invoices/new',
          `/dashboard/invoices/${section.invoiceId}`,
          '/dashboard/payment-links',
          '/dashboard/payment-links/new',
          `/dashboard/payment-links/${link.body.id}`,
          '/dashboard/chargebacks',
          `/dashboard/chargebacks/${section.chargebackId}`,
          '/dashboard/reviews',
          `/dashboard/reviews/${reviewId}`,
          '/dashboard/risk/rules',
          `/dashboard/risk/rules/${rule.body.id}`,
          '/dashboard/risk/lists/email',
          `/dashboard/chargebacks/${open.body.id}`,
          '/dashboard/payouts',
          '/dashboard/payouts/drafts/new',
          `/dashboard/payouts/drafts/${draftId}`,
          '/dashboard/payouts/drafts',
          `/dashboard/payouts/${payoutId}`,
          '/dashboard/reports',
          '/dashboard/pos',
          '/dashboard/pos/new?provider=est_v3',
          '/dashboard/pos/new?provider=garanti',
          `/dashboard/pos/${pos.body.id}`,
          `/dashboard/pos/reconciliation?date=${bankDay}&pos=${pos.body.id}`,
          '/dashboard/no-such-page',
        ]
        for (const [label, viewport] of Object.entries(WIDTHS)) {
          const context = await browser.newContext({
            viewport,
            locale: 'tr-TR',
            storageState: state,
          })
          try {
            const p = await context.newPage()
            for (const path of pages) {
              await p.goto(`${h.url}${path}`)
              await checkPage(p, `${path} at ${label}`)
            }
            // A page with a form result: the refund confirmation.
            await p.goto(`${h.url}/dashboard/payments/${big.paymentId}`)
            await p.getByRole('button', { name: 'İade et' }).click()
            await p.getByRole('heading', { name: 'İadeyi onaylayın' }).waitFor()
            await checkPage(p, `refund confirmation at ${label}`)
            // The pages before sign-in, in a context of their own.
            const anon = await browser.newContext({ viewport, locale: 'tr-TR' })
            try {
              const a = await anon.newPage()
              for (const path of [
                '/dashboard/login',
                '/dashboard/invite/unknown-link-0000000000000000',
              ]) {
                await a.goto(`${h.url}${path}`)
                await checkPage(a, `${path} at ${label}`)
              }
              await signInByKeyboard(a, h, m.email, 'wrong-password')
              await a.getByRole('alert').waitFor()
              await checkPage(a, `failed sign-in at ${label}`)
              await signInByKeyboard(a, h, m.email, m.password)
              await a.waitForURL(`${h.url}/dashboard/login/two-factor`)
              await checkPage(a, `two-factor code at ${label}`)
            } finally {
              await anon.close()
            }
          } finally {
            await context.close()
          }
        }
      },
    )

    await t.test('sign-out ends the session: the back button shows the sign-in page', async () => {
      await page.goto(`${h.url}/dashboard`)
      await page.getByRole('button', { name: 'Çıkış' }).click()
      await page.waitForURL(`${h.url}/dashboard/login`)
      await page.getByRole('status').getByText('Çıkış yaptınız.').waitFor()
      await page.goBack()
      await page.goto(`${h.url}/dashboard/payments`)
      await page.waitForURL(`${h.url}/dashboard/login`)
    })

    assert.deepEqual(w.problems, [])
  })
}
