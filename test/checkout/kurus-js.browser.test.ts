// Goal: Kuruş.js takes a card on a merchant page of ANOTHER origin (CONTRACT "Embedded card
// fields"): the fields are an iframe from the checkout origin, the page gets a single-use
// tok_… which the merchant's server charges, 3-D Secure opens in a modal on the page, and the
// card number never reaches the merchant page (its DOM and the requests it makes) nor its
// server. A page of an origin the store did not allow gets no fields; a token is charged once.
// Method: the app on one loopback port, the example merchant page (examples/kurus-js) on
// another, Chromium (playwright-core) driving it; every request the merchant's own frame makes
// and every request its server receives are recorded and searched for the card number.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import type { Browser } from 'playwright-core'
import { startMerchantPage } from '../../examples/kurus-js/server.ts'
import { startTestApp, type TestApp } from '../helpers/app.ts'
import { testBrowser } from '../helpers/browser.ts'

let browser: Browser
before(async () => {
  browser = await testBrowser()
})
after(async () => {
  await browser.close()
})

const CHALLENGE_CARD = '5528790000000008'

async function shop(h: TestApp) {
  const created = await h.operator<{
    publicKey: string
    secretKey: string
    storeId: string
    dashboard: { email: string; password: string }
  }>('POST', '/operator/v1/merchants', { name: 'Kuruş.js Shop', kycStatus: 'approved' })
  assert.equal(created.status, 201)
  const login = await fetch(`${h.url}/v1/dashboard/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(created.body.dashboard),
  })
  const { token } = (await login.json()) as { token: string }
  const allow = (origins: string[]) =>
    fetch(`${h.url}/v1/stores/${created.body.storeId}/allowed-origins`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ origins }),
    })
  return { ...created.body, allow }
}

test('a card taken on another origin: token, server charge, 3DS in the modal, PAN never on the page', async (t) => {
  const h = await startTestApp(t)
  const s = await shop(h)
  const merchant = await startMerchantPage({
    kurusUrl: h.url,
    publicKey: s.publicKey,
    secretKey: s.secretKey,
  })
  t.after(() => new Promise((done) => merchant.server.close(done)))
  assert.notEqual(new URL(merchant.url).origin, new URL(h.url).origin)
  const serverSaw: string[] = []
  merchant.server.prependListener('request', (req) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => serverSaw.push(`${req.url} ${Buffer.concat(chunks).toString()}`))
  })

  // Not yet allowed: the fields refuse to be framed by this origin.
  const refused = await fetch(`${h.url}/js/v1/fields?key=${s.publicKey}`)
  assert.equal(refused.status, 403)
  const allowed = await s.allow([merchant.url])
  assert.equal(allowed.status, 200, await allowed.clone().text())
  const fieldsPage = await fetch(`${h.url}/js/v1/fields?key=${s.publicKey}`)
  assert.equal(fieldsPage.status, 200)
  assert.match(
    String(fieldsPage.headers.get('content-security-policy')),
    new RegExp(`frame-ancestors ${merchant.url}`),
  )

  const context = await browser.newContext()
  t.after(() => context.close())
  const page = await context.newPage()
  // Requests made by the merchant's own frame (not the Kuruş iframes): none may carry the card.
  const pageRequests: string[] = []
  page.on('request', (request) => {
    if (request.frame() === page.mainFrame()) {
      pageRequests.push(`${request.url()} ${request.postData() ?? ''}`)
    }
  })
  await page.goto(merchant.url)
  const fields = page.frameLocator('iframe[title="Kart bilgileri"]')
  await fields.locator('input[name="number"]').fill(CHALLENGE_CARD)
  await fields.locator('input[name="expiry"]').fill('1230')
  await fields.locator('input[name="cvc"]').fill('123')
  await fields.locator('input[name="name"]').fill('Ayşe Yılmaz')
  await page.click('#pay')

  // 3-D Secure in the modal, on the merchant's page.
  const modal = page.locator('[role="dialog"][aria-label="3-D Secure doğrulaması"]')
  await modal.waitFor()
  const acs = page.frameLocator('[role="dialog"] iframe')
  await acs.locator('input[name="otp"]').fill('123456')
  await acs.locator('button[type="submit"]').click()
  await page.waitForFunction(() =>
    /^payment pay_\w+ captured$/.test(document.getElementById('result')?.textContent ?? ''),
  )
  assert.equal(await modal.count(), 0)

  // The card number: not in the merchant page's DOM, requests, or server.
  const html = await page.content()
  assert.ok(!html.includes(CHALLENGE_CARD), 'DOM')
  assert.ok(!pageRequests.some((r) => r.includes(CHALLENGE_CARD)), pageRequests.join('\n'))
  assert.ok(!serverSaw.some((r) => r.includes(CHALLENGE_CARD)), serverSaw.join('\n'))
  const charge = serverSaw.find((r) => r.startsWith('/charge'))
  assert.match(String(charge), /"token":"tok_\w+"/)

  // The token was for that order only: another order is refused.
  const token = /"token":"(tok_\w+)"/.exec(String(charge))?.[1] ?? ''
  const kurus = h.clientFor(s)
  const again = await kurus.request<{ code: string }>('POST', '/v1/payments/sessions', {
    body: {
      transactionId: 'order-again',
      amount: 100,
      currency: 'TRY',
      returnUrl: 'https://shop.example/r',
    },
  })
  assert.equal(again.status, 201)
  const reuse = await kurus.request<{ code: string }>('POST', '/v1/payments/card', {
    body: { transactionId: 'order-again', amount: 100, currency: 'TRY', cardToken: token },
  })
  assert.equal(reuse.status, 409)
  assert.equal(reuse.body.code, 'SVC-STATE-3401')
})

test('POST /v1/public/tokens: an origin the store did not allow, or an unknown key, gets no token', async (t) => {
  const h = await startTestApp(t)
  const s = await shop(h)
  assert.equal((await s.allow(['https://shop.example'])).status, 200)
  const card = {
    number: '4155650100416111',
    expMonth: 12,
    expYear: 2030,
    cvc: '123',
    holderName: 'A B',
  }
  const post = (body: object, origin?: string) =>
    fetch(`${h.url}/v1/public/tokens`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(origin ? { origin } : {}) },
      body: JSON.stringify(body),
    })
  const self = new URL(h.url).origin
  const ok = await post({ publicKey: s.publicKey, origin: 'https://shop.example', card }, self)
  assert.equal(ok.status, 201, await ok.clone().text())
  assert.match(((await ok.json()) as { token: string }).token, /^tok_/)
  const other = await post({ publicKey: s.publicKey, origin: 'https://evil.example', card }, self)
  assert.equal(other.status, 403)
  const direct = await post({ publicKey: s.publicKey, card }, 'https://evil.example')
  assert.equal(direct.status, 403)
  const unknown = await post(
    { publicKey: 'pk_demo_nobody000000', origin: 'https://shop.example', card },
    self,
  )
  assert.equal(unknown.status, 401)
  const badOrigin = await s.allow(['ftp://x', 'https://shop.example/path'])
  assert.equal(badOrigin.status, 400)
})
