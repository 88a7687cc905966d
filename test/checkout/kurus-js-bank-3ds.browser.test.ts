// Goal: Kuruş.js's 3-D Secure modal works when the challenge is a bank's (issue 39): the
// modal frames our page, which posts the bank's signed form to the POS's 3D gate; the bank
// posts back to Kuruş, the buyer lands on the merchant's returnUrl inside the modal, and the
// merchant's server completes the payment, authorized once at the bank.
// Method: the app and the example merchant page (examples/kurus-js) on two loopback ports, an
// EST simulator as the merchant's POS (demo `endpoints`), Chromium (playwright-core).
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { startMerchantPage } from '../../examples/kurus-js/server.ts'
import { startEstV3Simulator } from '../../src/modules/acquirer/index.ts'
import { startTestApp } from '../helpers/app.ts'
import { testBrowser } from '../helpers/browser.ts'

const EST = { clientId: '700655000200', username: 'U', password: 'P', storeKey: 'K' }

test("Kuruş.js's modal: a bank POS's 3D gate, then captured at that bank", async (t) => {
  const h = await startTestApp(t)
  const bank = await startEstV3Simulator(EST)
  t.after(() => bank.close())
  const created = await h.operator<{
    publicKey: string
    secretKey: string
    storeId: string
    dashboard: { email: string; password: string }
  }>('POST', '/operator/v1/merchants', { name: 'Kuruş.js Shop', kycStatus: 'approved' })
  assert.equal(created.status, 201)
  const s = created.body
  const kurus = h.clientFor(s)
  const pos = await kurus.request('POST', '/v1/pos-accounts', {
    body: {
      provider: 'est_v3',
      name: 'İşbank',
      environment: 'test',
      credentials: { ...EST, bank: 'isbank' },
      endpoints: { api: bank.api, threeDGate: bank.threeDGate },
    },
  })
  assert.equal(pos.status, 201, JSON.stringify(pos.body))
  const merchant = await startMerchantPage({
    kurusUrl: h.url,
    publicKey: s.publicKey,
    secretKey: s.secretKey,
  })
  t.after(() => new Promise((done) => merchant.server.close(done)))
  const login = await fetch(`${h.url}/v1/dashboard/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(s.dashboard),
  })
  const { token } = (await login.json()) as { token: string }
  const allowed = await fetch(`${h.url}/v1/stores/${s.storeId}/allowed-origins`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ origins: [merchant.url] }),
  })
  assert.equal(allowed.status, 200, await allowed.text())

  const browser = await testBrowser()
  t.after(() => browser.close())
  const context = await browser.newContext()
  t.after(() => context.close())
  const page = await context.newPage()
  await page.goto(merchant.url)
  const fields = page.frameLocator('iframe[title="Kart bilgileri"]')
  await fields.locator('input[name="number"]').fill('4155650100416111')
  await fields.locator('input[name="expiry"]').fill('1230')
  await fields.locator('input[name="cvc"]').fill('123')
  await fields.locator('input[name="name"]').fill('Ayşe Yılmaz')
  await page.click('#pay')
  await page.waitForFunction(
    () => /^payment pay_\w+ captured$/.test(document.getElementById('result')?.textContent ?? ''),
    undefined,
    { timeout: 20_000 },
  )
  const paymentId = /pay_\w+/.exec((await page.textContent('#result')) ?? '')?.[0] ?? ''
  assert.equal(bank.authorizations(), 1)
  assert.equal(bank.orders.get(paymentId)?.amount !== undefined, true)
  assert.equal(bank.callbacks.get(paymentId)?.length, 1)
})
