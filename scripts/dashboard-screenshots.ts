// Regenerates docs/dashboard/*.png: the merchant dashboard's main pages in Turkish and
// English, at 1280 px and at 360 px. Starts the real app on a throwaway embedded database,
// makes a demo merchant and its data through the operator and signed APIs, then drives
// Debian's chromium (playwright-core) through the pages.
// Usage: npx node scripts/dashboard-screenshots.ts [name…]   (chromium at /usr/bin/chromium)
// With names (e.g. `reviews review`), only those pages are taken again.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { chromium } from 'playwright-core'
import { loadConfig } from '../src/config.ts'
import { startRuntime } from '../src/server.ts'
import { Kurus } from '../sdk/index.ts'
import { startGarantiSimulator } from '../src/modules/acquirer/index.ts'

const OUT = fileURLToPath(new URL('../docs/dashboard/', import.meta.url))
const OPERATOR_TOKEN = 'screenshots-operator-token-0123456789'

const only = process.argv.slice(2)
const wanted = (name: string) => only.length === 0 || only.includes(name)

const dataDir = mkdtempSync(join(tmpdir(), 'kurus-shots-'))
const config = loadConfig(
  { KURUS_ENV: 'demo', KURUS_DATA_DIR: dataDir, LOG_LEVEL: 'warn' },
  { operatorToken: OPERATOR_TOKEN },
)
const runtime = await startRuntime(config)
const base = await runtime.app.fastify.listen({ port: 0, host: '127.0.0.1' })

async function operator<T>(path: string, body: unknown): Promise<T> {
  const res = await fetch(base + path, {
    method: 'POST',
    headers: { authorization: `Bearer ${OPERATOR_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`)
  return (await res.json()) as T
}

try {
  const merchant = await operator<{
    publicKey: string
    secretKey: string
    storeId: string
    dashboard: { email: string; password: string }
  }>('/operator/v1/merchants', {
    name: 'Anadolu Kitap',
    kycStatus: 'approved',
    ownerEmail: 'ayse@anadolukitap.com.tr',
  })
  const client = new Kurus({ ...merchant, baseUrl: base })
  const pay = async (amount: number, card: string, extra: Record<string, unknown> = {}) => {
    const transactionId = `SIP-${Math.floor(Math.random() * 1e6)}`
    const session = await client.request('POST', '/v1/payments/sessions', {
      body: {
        transactionId,
        amount,
        currency: 'TRY',
        returnUrl: 'https://kitap.example/donus',
        metadata: { kanal: 'web' },
      },
    })
    if (session.status !== 201) throw new Error(`session: ${JSON.stringify(session.body)}`)
    const token = await client.request<{ cardToken: string }>('POST', '/v1/cards/tokens', {
      body: {
        cardNumber: card,
        expMonth: 12,
        expYear: 2030,
        cvc: '123',
        holderName: 'Ayşe Yılmaz',
      },
    })
    const res = await client.request<{ paymentId: string }>('POST', '/v1/payments/card', {
      body: {
        transactionId,
        amount,
        currency: 'TRY',
        cardToken: token.body.cardToken,
        threeDSecure: false,
        ...extra,
      },
    })
    if (res.status !== 201 && res.status !== 402)
      throw new Error(`charge: ${JSON.stringify(res.body)}`)
    return res.body.paymentId
  }
  const featured = await pay(184_990, '4155650100416111')
  await pay(23_456, '5890040000000016')
  await pay(9_990, '9792020000000001')
  await pay(45_000, '4155650100416111', { capture: false })
  await pay(12_000, '4000000000000002')
  await client.request('POST', `/v1/payments/${featured}/refund`, { body: { amount: 20_000 } })
  // Customers, subscriptions, invoices, chargebacks and payouts.
  const made = async <T>(path: string, body: unknown): Promise<T> => {
    const res = await client.request<T>('POST', path, { body })
    if (res.status !== 201) throw new Error(`${path}: ${JSON.stringify(res.body)}`)
    return res.body
  }
  const customer = await made<{ id: string }>('/v1/customers', {
    externalId: 'musteri-1042',
    email: 'ayse.yilmaz@example.com',
    name: 'Ayşe Yılmaz',
    phone: '+905321234567',
  })
  const cardToken = await made<{ cardToken: string }>('/v1/cards/tokens', {
    cardNumber: '4155650100416111',
    expMonth: 12,
    expYear: 2030,
    cvc: '123',
    holderName: 'Ayşe Yılmaz',
  })
  await made(`/v1/customers/${customer.id}/cards`, {
    cardToken: cardToken.cardToken,
    isDefault: true,
  })
  const subscription = await made<{ id: string }>('/v1/subscriptions', {
    storeId: merchant.storeId,
    customerId: customer.id,
    amountMinor: 14_900,
    currency: 'TRY',
    intervalCount: 1,
    intervalUnit: 'month',
    description: 'Aylık kitap kutusu',
  })
  const invoice = await made<{ id: string }>('/v1/invoices', {
    storeId: merchant.storeId,
    amountMinor: 28_100,
    currency: 'TRY',
    buyerName: 'Ayşe Yılmaz',
    buyerEmail: 'ayse.yilmaz@example.com',
    lineItems: [
      { name: 'Roman', qty: 2, unitPriceMinor: 12_550, lineTotalMinor: 25_100 },
      { name: 'Kargo', qty: 1, unitPriceMinor: 3_000, lineTotalMinor: 3_000 },
    ],
  })
  const chargeback = await made<{ id: string }>(`/v1/sandbox/payments/${featured}/chargebacks`, {
    amount: 30_000,
    reasonCode: '4853',
  })
  await client.request('POST', '/v1/sandbox/reconcile', { body: {} })
  const draft = await made<{ draftId: string }>('/v1/payout-drafts', {
    storeId: merchant.storeId,
    rows: [
      {
        rail: 'fast',
        dest: 'TR330006100519786457841326',
        holderName: 'Mehmet Demir',
        amountMinor: 25_000,
        currency: 'TRY',
      },
      { rail: 'eft', dest: 'TR00', holderName: 'Ali Veli', amountMinor: 10_000, currency: 'TRY' },
    ],
  })
  // A review rule that holds only this amount, a held payment, a block list entry; made after
  // the other payments so no other charge is held.
  const rule = await made<{ id: string }>('/v1/risk/rules', {
    name: 'Tam 615 TL',
    action: 'review',
    condition: { '==': [{ var: 'amount' }, 61_500] },
  })
  await pay(61_500, '5890040000000016')
  const reviews = await client.request<{ items: { id: string }[] }>('GET', '/v1/reviews')
  const reviewId = reviews.body.items[0]?.id ?? ''
  await made('/v1/risk/lists/email/items', {
    value: 'dolandirici@example.com',
    note: 'iki ters ibraz',
  })
  // A second draft, approved: the payout page's payout (the first stays awaiting approval).
  const paid = await made<{ draftId: string }>('/v1/payout-drafts', {
    storeId: merchant.storeId,
    rows: [
      {
        rail: 'fast',
        dest: 'TR330006100519786457841326',
        holderName: 'Mehmet Demir',
        amountMinor: 25_000,
        currency: 'TRY',
      },
    ],
  })
  const approved = await client.request('POST', `/v1/payout-drafts/${paid.draftId}/approve`, {
    body: {},
  })
  if (approved.status !== 200) throw new Error(`approve: ${JSON.stringify(approved.body)}`)
  const payouts = await client.request<{ items: { id: string }[] }>('GET', '/v1/payouts')
  const payoutId = payouts.body.items[0]?.id ?? ''
  // Webhook endpoints are managed through the dashboard API (a dashboard user's JWT).
  const login = await fetch(`${base}/v1/dashboard/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(merchant.dashboard),
  })
  const { token } = (await login.json()) as { token: string }
  const hook = await fetch(`${base}/v1/stores/${merchant.storeId}/webhooks`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    // A loopback receiver: allowed in demo, and nothing is sent anywhere real.
    body: JSON.stringify({ url: 'http://127.0.0.1:9/kurus-webhooks' }),
  })
  if (hook.status !== 201) throw new Error(`webhook: ${await hook.text()}`)
  // A Garanti POS on its simulator (demo may point an account at one), made last so only the
  // next payments go through it; then a bank day with three planted differences, reconciled.
  const garanti = {
    merchantId: '7000679',
    terminalId: '30691298',
    provisionUser: 'PROVAUT',
    provisionPassword: '123qweASD/',
    storeKey: '12345678',
  }
  const bank = await startGarantiSimulator(garanti)
  const pos = await made<{ id: string }>('/v1/pos-accounts', {
    provider: 'garanti',
    name: 'Garanti BBVA sanal POS',
    environment: 'test',
    credentials: garanti,
    endpoints: { api: bank.api, threeDGate: bank.threeDGate },
  })
  const changed = await pay(34_990, '4155650100416111')
  const lost = await pay(12_500, '5890040000000016')
  const atBank = bank.transactions.find((x) => x.orderId === changed)
  if (atBank) atBank.amount = 35_990
  bank.transactions.splice(
    bank.transactions.findIndex((x) => x.orderId === lost),
    1,
  )
  bank.transactions.push({
    orderId: 'SIP-BANKADA-0042',
    trxType: 'Satis',
    status: 'Basarili',
    amount: 7_500,
    at: new Date(),
    retrefNum: '999999999999',
    origRetrefNum: '',
  })
  const bankDay = new Date(Date.now() + 3 * 3_600_000).toISOString().slice(0, 10)
  const reconciled = await client.request('POST', '/v1/acquirer-reconciliation', {
    body: { date: bankDay, posAccountId: pos.id },
  })
  if (reconciled.status !== 200) throw new Error(`reconcile: ${JSON.stringify(reconciled.body)}`)

  mkdirSync(OUT, { recursive: true })
  // One browser per language: a date input draws "29.11.2026" or "11/29/2026" from the
  // browser's own UI language (LANGUAGE and --lang; needs Debian's chromium-l10n), which a
  // context's `locale` does not change.
  const launch = (lang: 'tr' | 'en') =>
    chromium.launch({
      executablePath: '/usr/bin/chromium',
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--no-first-run',
        `--lang=${lang === 'tr' ? 'tr' : 'en-GB'}`,
      ],
      env: { ...process.env, LANGUAGE: lang === 'tr' ? 'tr' : 'en_GB' },
    })
  try {
    const pages: [string, string][] = [
      ['login', '/dashboard/login'],
      ['overview', '/dashboard'],
      ['payments', '/dashboard/payments'],
      ['payment', `/dashboard/payments/${featured}`],
      ['customers', '/dashboard/customers'],
      ['customer', `/dashboard/customers/${customer.id}`],
      ['subscription', `/dashboard/subscriptions/${subscription.id}`],
      ['invoice-new', '/dashboard/invoices/new'],
      ['invoice', `/dashboard/invoices/${invoice.id}`],
      ['chargebacks', '/dashboard/chargebacks'],
      ['chargeback', `/dashboard/chargebacks/${chargeback.id}`],
      ['payouts', '/dashboard/payouts'],
      ['payout-draft', `/dashboard/payouts/drafts/${draft.draftId}`],
      ['payout', `/dashboard/payouts/${payoutId}`],
      ['reviews', '/dashboard/reviews'],
      ['review', `/dashboard/reviews/${reviewId}`],
      ['risk-rules', '/dashboard/risk/rules'],
      ['risk-rule', `/dashboard/risk/rules/${rule.id}`],
      ['risk-list', '/dashboard/risk/lists/email'],
      ['developers', '/dashboard/developers'],
      ['team', '/dashboard/settings'],
      ['audit-log', '/dashboard/settings/audit-log'],
      ['account', '/dashboard/settings/account'],
      ['reports', '/dashboard/reports'],
      ['pos', '/dashboard/pos'],
      ['pos-new', '/dashboard/pos/new?provider=est_v3'],
      ['pos-account', `/dashboard/pos/${pos.id}`],
      ['pos-reconciliation', `/dashboard/pos/reconciliation?date=${bankDay}&pos=${pos.id}`],
    ]
    for (const lang of ['tr', 'en'] as const) {
      const browser = await launch(lang)
      for (const [width, height] of [
        [1280, 860],
        [360, 780],
      ] as const) {
        // The browser's own locale too: date inputs and their pickers render in it.
        const context = await browser.newContext({
          viewport: { width, height },
          locale: lang === 'tr' ? 'tr-TR' : 'en-GB',
        })
        const page = await context.newPage()
        await page.goto(`${base}/dashboard/login?lang=${lang}`)
        if (wanted('login')) {
          await page.screenshot({ path: join(OUT, `login-${lang}-${width}.png`) })
        }
        if (wanted('forgot-password')) {
          await page.goto(`${base}/dashboard/password/forgot?lang=${lang}`)
          await page.screenshot({ path: join(OUT, `forgot-password-${lang}-${width}.png`) })
          await page.goto(`${base}/dashboard/login?lang=${lang}`)
        }
        await page.locator('input[name="email"]').fill(merchant.dashboard.email)
        await page.locator('input[name="password"]').fill(merchant.dashboard.password)
        await page.locator('button[type="submit"]').click()
        await page.waitForURL(`${base}/dashboard`)
        for (const [name, path] of pages.slice(1).filter(([name]) => wanted(name))) {
          await page.goto(base + path)
          if (name === 'overview') await page.locator('#volume-chart canvas').first().waitFor()
          await page.screenshot({ path: join(OUT, `${name}-${lang}-${width}.png`), fullPage: true })
        }
        await context.close()
      }
      await browser.close()
    }
  } finally {
    await bank.close()
  }
  process.stdout.write(`screenshots written to ${OUT}\n`)
} finally {
  await runtime.close()
  rmSync(dataDir, { recursive: true, force: true })
}
