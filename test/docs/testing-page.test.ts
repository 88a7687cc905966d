// Goal: the "Testing" page (docs/testing-cards.md, issue 38) is reachable from the served
// docs: /docs/testing renders it as HTML in the API reference's look, with our CSP, and the
// API reference links to it. Method: the real app over HTTP, in demo and in live; the page's
// HTML is checked against the markdown it comes from (every test card in a table cell, every
// section a heading, no markdown syntax or comment left in it).
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { TEST_CARDS } from '../../scripts/testing-page.ts'
import { startTestApp } from '../helpers/app.ts'

test('/docs/testing serves the Testing page as HTML, linked from /docs', async (t) => {
  const h = await startTestApp(t)
  const reference = await fetch(`${h.url}/docs`)
  assert.equal(reference.status, 200)
  assert.match(await reference.text(), /<a href="\/docs\/testing">Testing<\/a>/)

  const res = await fetch(`${h.url}/docs/testing`)
  assert.equal(res.status, 200)
  assert.match(res.headers.get('content-type') ?? '', /^text\/html/)
  assert.match(res.headers.get('content-security-policy') ?? '', /default-src/)
  const html = await res.text()
  assert.match(html, /<title>Testing — Kuruş API reference<\/title>/)
  assert.match(html, /reference\.css/, 'the API reference’s stylesheet')
  assert.match(html, /<span class="kr-name">Kuruş<\/span>/)
  assert.match(html, /<h1>Testing your integration in the sandbox<\/h1>/)
  for (const section of ['Test cards', '3-D Secure codes', 'Webhooks', 'More sandbox tools']) {
    assert.match(html, new RegExp(`<h2>${section}</h2>`), section)
  }
  assert.ok(TEST_CARDS.length >= 5)
  for (const card of TEST_CARDS) {
    assert.ok(html.includes(`<td><code>${card.number}</code></td>`), `card ${card.number}`)
  }
  assert.match(html, /<li><strong>To your machine:<\/strong>/)
  assert.doesNotMatch(html, /<!--|\| ---|`|\*\*|^#/m, 'markdown left unrendered')
})

test('the Testing page is served in live too, marked sandbox-only', async (t) => {
  const h = await startTestApp(t, { env: { KURUS_ENV: 'live' } })
  const res = await fetch(`${h.url}/docs/testing`)
  assert.equal(res.status, 200)
  const html = await res.text()
  assert.match(html, /These cards work in the sandbox only/)
  assert.match(html, /<td><code>4155650100416111<\/code><\/td>/)
})
