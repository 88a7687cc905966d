// Goal: the API reference at /docs (issue 38) is Kuruş's page — our name and logo, our CSP
// with no inline script — and its "Try it" signs requests in the browser with the demo keys
// in the sandbox, and is never offered in live. Method: the real app on a loopback port,
// Chromium (playwright-core) pressing Try it out → Execute on a GET and on a POST with its
// example body, reading the status Swagger UI shows; the same page in a live app; the
// browser's signer (signing.js) held to test/vectors/signing.json in Node's WebCrypto.
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { mkdir } from 'node:fs/promises'
import { after, before, test } from 'node:test'
import type { Browser, Page } from 'playwright-core'
import { startTestApp } from '../helpers/app.ts'
import { testBrowser } from '../helpers/browser.ts'

let browser: Browser
before(async () => {
  browser = await testBrowser()
})
after(async () => {
  await browser.close()
})

interface Signing {
  canonicalString(t: string, method: string, path: string, body: string): Promise<string>
  sign(secretKey: string, canonical: string): Promise<string>
}

interface Vector {
  name: string
  input: { secretKey: string; timestamp: string; method: string; path: string; body: string }
  expected: { canonicalString: string; signature: string }
}

test('the browser signer gives the signing vectors’ answers (WebCrypto)', async () => {
  const url = new URL('../../src/pages/api-reference/signing.js', import.meta.url)
  const signing = (await import(url.href)) as Signing
  const { vectors } = JSON.parse(
    readFileSync(new URL('../vectors/signing.json', import.meta.url), 'utf8'),
  ) as { vectors: Vector[] }
  assert.ok(vectors.length >= 3)
  for (const v of vectors) {
    const { secretKey, timestamp, method, path, body } = v.input
    const canonical = await signing.canonicalString(timestamp, method, path, body)
    assert.equal(canonical, v.expected.canonicalString, v.name)
    assert.equal(await signing.sign(secretKey, canonical), v.expected.signature, v.name)
  }
})

/** Opens /docs and waits for Swagger UI to render the operations. */
async function openReference(page: Page, url: string, problems: string[]) {
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(m.text())
  })
  page.on('pageerror', (e) => problems.push(String(e)))
  await page.goto(`${url}/docs`)
  await page
    .locator('.opblock')
    .first()
    .waitFor()
    .catch(async (error: unknown) => {
      await page.screenshot({ path: '.artifacts/api-reference-failed.png' })
      problems.push((await page.locator('body').innerHTML()).slice(0, 3000))
      throw new Error(`the reference did not render: ${problems.join('; ')}`, { cause: error })
    })
}

/**
 * Expands one operation, found by its method and path as Swagger UI shows them. Swagger UI
 * renders the tags near the top first: the page's filter box narrows it to the operation's tag.
 */
async function expand(page: Page, method: string, path: string) {
  const tag = path === '/v1/auth/whoami' ? 'identity' : (path.split('/')[2] ?? '')
  await page.locator('.operation-filter-input').fill(tag)
  await page.waitForFunction((name) => {
    const tags = [...document.querySelectorAll('.opblock-tag')]
    return tags.length === 1 && tags[0]?.getAttribute('data-tag') === name
  }, tag)
  const block = page
    .locator(`.opblock-${method.toLowerCase()}`)
    .filter({ has: page.locator(`[data-path="${path}"]`) })
  await block.locator('.opblock-summary').first().click()
  return block
}

async function execute(page: Page, method: string, path: string) {
  const block = await expand(page, method, path)
  await block.getByRole('button', { name: 'Try it out' }).click()
  await block.getByRole('button', { name: 'Execute' }).click()
  const status = block.locator('.live-responses-table .response .response-col_status').first()
  await status.waitFor()
  return { block, status: Number((await status.innerText()).trim()) }
}

test('demo: Try it signs in the browser with the demo keys and gets a 2xx', async (t) => {
  const h = await startTestApp(t)
  const merchant = await h.newMerchant({ name: 'Reference Shop' })
  const keys = await fetch(`${h.url}/docs/try-it/keys`)
  assert.equal(keys.status, 200)
  assert.equal(keys.headers.get('cache-control'), 'no-store')
  // No CORS: another site's script cannot read the demo keys from a browser.
  assert.equal(keys.headers.get('access-control-allow-origin'), null)
  const demo = (await keys.json()) as { publicKey: string; secretKey: string }
  assert.match(demo.publicKey, /^pk_demo_/)

  const html = await fetch(`${h.url}/docs`)
  assert.equal(html.status, 200)
  const csp = String(html.headers.get('content-security-policy'))
  assert.match(csp, /default-src 'self'/)
  assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/)
  const body = await html.text()
  assert.match(body, /<title>Kuruş API reference<\/title>/)
  assert.match(body, /data-try-it="demo"/)
  assert.doesNotMatch(body, /<script>|<script(?![^>]*\bsrc=)[^>]*>/, 'no inline script')
  assert.doesNotMatch(body, /fastify/i)

  const context = await browser.newContext()
  t.after(() => context.close())
  const page = await context.newPage()
  const problems: string[] = []
  await openReference(page, h.url, problems)
  // Our header, not Swagger UI's top bar (its logo and URL box).
  assert.equal(await page.locator('.topbar').count(), 0)
  assert.equal(await page.locator('.kr-name').innerText(), 'Kuruş')
  await page.getByText(`Try it signs as the demo merchant (${demo.publicKey})`).waitFor()

  const whoami = await execute(page, 'GET', '/v1/auth/whoami')
  assert.equal(whoami.status, 200)
  const shown = await whoami.block
    .locator('.live-responses-table .response-col_description pre')
    .first()
    .innerText()
  // The demo merchant is the oldest one: here the only one.
  assert.equal((JSON.parse(shown) as { merchantId: string }).merchantId, merchant.merchantId)

  // A POST with the operation's example body: the exact bytes sent are signed.
  const created = await execute(page, 'POST', '/v1/customers')
  assert.equal(
    created.status,
    201,
    await created.block.locator('.live-responses-table').innerText(),
  )
  await mkdir('.artifacts', { recursive: true })
  await page.screenshot({ path: '.artifacts/api-reference-try-it.png', fullPage: false })
  const list = await h.clientFor(demo).request<{ items: unknown[] }>('GET', '/v1/customers')
  assert.equal(list.body.items.length, 1)
  assert.deepEqual(problems, [])
})

test('demo: Try it signs a multipart upload (POST /v1/files) over the bytes it sends', async (t) => {
  const h = await startTestApp(t)
  // The demo merchant (the oldest one): Try it's keys are its keys.
  await h.newMerchant({ name: 'Upload Shop' })
  const context = await browser.newContext()
  t.after(() => context.close())
  const page = await context.newPage()
  const problems: string[] = []
  await openReference(page, h.url, problems)
  await page.getByText(/Try it signs as the demo merchant/).waitFor()

  const block = await expand(page, 'POST', '/v1/files')
  await block.getByRole('button', { name: 'Try it out' }).click()
  // The form's purpose field: a select of its enum, or a text box for a constant.
  const purposeRow = block.locator('tr').filter({ hasText: /^\s*purpose/ })
  const purpose = purposeRow.locator('select, input').first()
  if ((await purpose.evaluate((el) => el.tagName)) === 'SELECT') {
    await purpose.selectOption('dispute_evidence')
  } else {
    await purpose.fill('dispute_evidence')
  }
  const pdf = Buffer.from('%PDF-1.4\n% evidence from Try it\n%%EOF\n')
  await block.locator('input[type="file"]').setInputFiles({
    name: 'evidence.pdf',
    mimeType: 'application/pdf',
    buffer: pdf,
  })
  await block.getByRole('button', { name: 'Execute' }).click()
  const status = block.locator('.live-responses-table .response .response-col_status').first()
  await status.waitFor()
  assert.equal(
    Number((await status.innerText()).trim()),
    201,
    await block.locator('.live-responses-table').innerText(),
  )
  const shown = await block
    .locator('.live-responses-table .response-col_description pre')
    .first()
    .innerText()
  const { id } = JSON.parse(shown) as { id: string }
  // The server holds exactly the bytes chosen in the page, for the demo merchant.
  const demo = (await (await fetch(`${h.url}/docs/try-it/keys`)).json()) as {
    publicKey: string
    secretKey: string
  }
  const file = await h
    .clientFor(demo)
    .request<{ sha256: string; size: number }>('GET', `/v1/files/${id}`)
  assert.equal(file.status, 200)
  assert.equal(file.body.size, pdf.length)
  assert.equal(file.body.sha256, createHash('sha256').update(pdf).digest('hex'))
  assert.deepEqual(problems, [])
})

test('live: no Try it — no keys, no signer, no button', async (t) => {
  const h = await startTestApp(t, { env: { KURUS_ENV: 'live' } })
  assert.equal((await fetch(`${h.url}/docs/try-it/keys`)).status, 404)
  assert.equal((await fetch(`${h.url}/docs/assets/signing.js`)).status, 404)
  const html = await fetch(`${h.url}/docs`)
  assert.equal(html.status, 200)
  assert.match(await html.text(), /data-try-it="off"/)

  const context = await browser.newContext()
  t.after(() => context.close())
  const page = await context.newPage()
  const problems: string[] = []
  await openReference(page, h.url, problems)
  const block = await expand(page, 'GET', '/v1/auth/whoami')
  await block.locator('.opblock-body').waitFor()
  assert.equal(await block.getByRole('button', { name: 'Try it out' }).count(), 0)
  await page.screenshot({ path: '.artifacts/api-reference-live.png', fullPage: false })
  assert.deepEqual(problems, [])
})
