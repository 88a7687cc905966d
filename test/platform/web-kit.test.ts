// Goal: the web kit is one: every hosted buyer page (checkout, payment link, invoice,
// subscription portal) answers an error with the same page and the same words for a status,
// naming only what was not found; the buyer pages and the dashboard load the one stylesheet of
// design tokens (base.css) before their own, from their own origin. Method: plain HTTP.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { startTestApp, type TestApp } from '../helpers/app.ts'

async function page(h: TestApp, path: string) {
  const response = await fetch(h.url + path, { redirect: 'manual' })
  return {
    status: response.status,
    type: response.headers.get('content-type') ?? '',
    text: await response.text(),
  }
}

/** The notice's heading and body, as the buyer reads them. */
function notice(html: string): { title: string; body: string } {
  const title = /<h1 id="notice-heading" class="notice-title">([^<]*)<\/h1>/.exec(html)?.[1]
  const body = /<p class="notice-body">([^<]*)<\/p>/.exec(html)?.[1]
  assert.ok(title !== undefined && body !== undefined, 'an error notice')
  return { title, body }
}

const PAGES = {
  checkout: { malformed: `/s/${'x'.repeat(65)}`, missingAsset: '/assets/nope.css' },
  link: { malformed: '/l/x', missingAsset: '/l/AAAAAAAAAAAAAAAAAAAAAA' },
  invoice: { malformed: '/invoice/x', missingAsset: '/invoice-assets/nope.css' },
  subscription: { malformed: '/subscription/x', missingAsset: '/subscription-assets/nope.css' },
} as const

test('every buyer page says the same for a bad request; a 404 names what is missing', async (t) => {
  const h = await startTestApp(t)
  const bad = []
  for (const [name, paths] of Object.entries(PAGES)) {
    const res = await page(h, paths.malformed)
    assert.equal(res.status, 400, name)
    assert.match(res.type, /^text\/html/, name)
    bad.push(notice(res.text))
  }
  assert.equal(new Set(bad.map((n) => `${n.title}|${n.body}`)).size, 1)
  assert.deepEqual(bad[0], { title: 'Geçersiz istek', body: 'Bu bağlantı eksik ya da hatalı.' })

  const missing = Object.fromEntries(
    await Promise.all(
      Object.entries(PAGES).map(async ([name, paths]) => {
        const res = await page(h, paths.missingAsset)
        assert.equal(res.status, 404, name)
        return [name, notice(res.text).title] as const
      }),
    ),
  )
  assert.deepEqual(missing, {
    checkout: 'Ödeme bağlantısı bulunamadı',
    link: 'Ödeme linki bulunamadı',
    invoice: 'Fatura bulunamadı',
    subscription: 'Abonelik bulunamadı',
  })

  const english = await page(h, '/invoice/x?lang=en')
  assert.deepEqual(notice(english.text), {
    title: 'Invalid request',
    body: 'This link is incomplete or malformed.',
  })
})

test('buyer pages and the dashboard load the design tokens first, from our origin', async (t) => {
  const h = await startTestApp(t)
  const stylesheets = (html: string) =>
    [...html.matchAll(/<link rel="stylesheet" href="([^"]+)"/g)].map((m) => m[1] ?? '')

  const buyer = stylesheets((await page(h, '/subscription/x')).text)
  assert.match(buyer[0] ?? '', /^\/assets\/base\.css\?v=[0-9a-f]{16}$/)
  assert.match(buyer[1] ?? '', /^\/assets\/checkout\.css\?v=/)
  const dashboard = stylesheets((await page(h, '/dashboard/login')).text)
  assert.match(dashboard[0] ?? '', /^\/dashboard\/assets\/base\.css\?v=[0-9a-f]{16}$/)
  assert.match(dashboard[1] ?? '', /^\/dashboard\/assets\/app\.css\?v=/)

  // One file: the tokens are defined in it, and the variants' stylesheets use them.
  const base = await page(h, buyer[0] ?? '')
  assert.equal(base.status, 200)
  assert.match(base.type, /^text\/css/)
  assert.equal((await page(h, dashboard[0] ?? '')).text, base.text)
  assert.match(base.text, /--brand: #4338ca;/)
  for (const css of [buyer[1], dashboard[1]]) {
    const text = (await page(h, css ?? '')).text
    assert.match(text, /var\(--brand\)/)
    assert.doesNotMatch(text, /--brand:\s*#4338ca/)
  }
})
