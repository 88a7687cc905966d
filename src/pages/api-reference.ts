import { readFileSync } from 'node:fs'
import type { FastifyPluginAsync, FastifyReply } from 'fastify'
import { AppError } from '../platform/errors.ts'
import { assetRegistry, CONTENT_TYPES, sendAsset } from '../platform/web/assets.ts'
import { escapeHtml } from '../platform/web/html.ts'
import { contentSecurityPolicy, pageSecurityHeaders } from '../platform/web/security.ts'
import { markdownToHtml } from './markdown.ts'

// The API reference at /docs (issue 38, decision 0038): Swagger UI over /openapi.json in a
// page of our own — Kuruş's name, logo and colours, our CSP (no inline script), no Swagger or
// Fastify branding. Swagger UI's files come from swagger-ui-dist, served from our origin.
// "Try it" exists in the sandbox only: the page fetches the demo merchant's keys from
// /docs/try-it/keys and signs each request in the browser (api-reference/signing.js). In live
// neither route exists and the page offers no Try it.
// The "Testing" page (test cards, 3DS codes, webhooks) is docs/testing-cards.md, which
// `npm run docs:testing` generates, rendered once at start into the same look at /docs/testing.

const ASSETS = assetRegistry('/docs/assets/', {
  'swagger-ui-bundle.js': {
    file: new URL(import.meta.resolve('swagger-ui-dist/swagger-ui-bundle.js')),
    contentType: CONTENT_TYPES.js,
  },
  'swagger-ui.css': {
    file: new URL(import.meta.resolve('swagger-ui-dist/swagger-ui.css')),
    contentType: CONTENT_TYPES.css,
  },
  'reference.css': {
    file: new URL('api-reference/reference.css', import.meta.url),
    contentType: CONTENT_TYPES.css,
  },
  'reference.js': {
    file: new URL('api-reference/reference.js', import.meta.url),
    contentType: CONTENT_TYPES.js,
  },
  'signing.js': {
    file: new URL('api-reference/signing.js', import.meta.url),
    contentType: CONTENT_TYPES.js,
  },
  'logo.svg': { file: new URL('favicon.svg', import.meta.url), contentType: CONTENT_TYPES.svg },
})

/** Served in the sandbox only: the browser's signer is no use without the demo keys. */
const DEMO_ONLY = new Set(['signing.js'])

export interface ApiReferenceOptions {
  env: 'demo' | 'live'
  /** The demo merchant's key pair (demo only), or undefined before the seed made one. */
  demoKeys: () => Promise<{ publicKey: string; secretKey: string } | undefined>
}

const TESTING_PAGE = new URL('../../docs/testing-cards.md', import.meta.url)

function header(status: string): string {
  return `<header class="kr-header">
<a class="kr-brand" href="/docs"><img src="${escapeHtml(ASSETS.url('logo.svg'))}" alt="" width="32" height="32"><span class="kr-name">Kuruş</span><span class="kr-title">API reference</span></a>
<nav class="kr-nav"><a href="/docs">Reference</a><a href="/docs/testing">Testing</a><a href="/openapi.json">OpenAPI document</a></nav>
<div class="kr-status">${status}</div>
</header>`
}

function testingPage(live: boolean): string {
  const status = live
    ? `<span class="kr-env">Live</span><span class="kr-try-it">These cards work in the sandbox only</span>`
    : `<span class="kr-env kr-env-demo">Sandbox</span>`
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Testing — Kuruş API reference</title>
<link rel="icon" type="image/svg+xml" href="${escapeHtml(ASSETS.url('logo.svg'))}">
<link rel="stylesheet" href="${escapeHtml(ASSETS.url('reference.css'))}">
</head>
<body>
${header(status)}
<main class="kr-main kr-doc">
${markdownToHtml(readFileSync(TESTING_PAGE, 'utf8'))}
</main>
</body>
</html>
`
}

function referencePage(tryIt: boolean): string {
  const env = tryIt
    ? `<span class="kr-env kr-env-demo">Sandbox</span><span class="kr-try-it" id="kr-try-it">Try it signs with the demo keys</span>`
    : `<span class="kr-env">Live</span><span class="kr-try-it">Sign requests with your keys: the SDK, the CLI or docs/api.md</span>`
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Kuruş API reference</title>
<link rel="icon" type="image/svg+xml" href="${escapeHtml(ASSETS.url('logo.svg'))}">
<link rel="stylesheet" href="${escapeHtml(ASSETS.url('swagger-ui.css'))}">
<link rel="stylesheet" href="${escapeHtml(ASSETS.url('reference.css'))}">
</head>
<body data-try-it="${tryIt ? 'demo' : 'off'}">
${header(env)}
<main id="swagger-ui" class="kr-main"></main>
<script src="${escapeHtml(ASSETS.url('swagger-ui-bundle.js'))}"></script>
<script type="module" src="${escapeHtml(ASSETS.url('reference.js'))}"></script>
</body>
</html>
`
}

export function apiReferenceRoutes(options: ApiReferenceOptions): FastifyPluginAsync {
  const tryIt = options.env === 'demo'
  const page = referencePage(tryIt)
  const live = options.env === 'live'
  const testing = testingPage(live)
  return async (app) => {
    const hide = { schema: { hide: true } }
    const sendPage = (reply: FastifyReply, html: string): FastifyReply =>
      reply
        .headers(pageSecurityHeaders({ live }))
        .header('content-security-policy', contentSecurityPolicy())
        .header('cache-control', 'no-cache')
        .type('text/html; charset=utf-8')
        .send(html)
    app.get('/docs', hide, async (_request, reply) => sendPage(reply, page))
    app.get('/docs/testing', hide, async (_request, reply) => sendPage(reply, testing))
    app.get('/docs/', hide, async (_request, reply) => reply.redirect('/docs', 301))
    app.get<{ Params: { name: string }; Querystring: { v?: string } }>(
      '/docs/assets/:name',
      hide,
      async (request, reply) => {
        const asset = ASSETS.get(request.params.name)
        if (!asset || (!tryIt && DEMO_ONLY.has(asset.name))) {
          return reply.code(404).type('text/plain; charset=utf-8').send('not found')
        }
        return sendAsset(reply.header('x-content-type-options', 'nosniff'), asset, request.query.v)
      },
    )
    if (!tryIt) return
    // The sandbox's demo keys, which `npm start` prints in its banner too: play money only.
    // Never registered in live.
    app.get('/docs/try-it/keys', hide, async (_request, reply) => {
      const keys = await options.demoKeys()
      void reply.header('cache-control', 'no-store')
      if (!keys) throw new AppError('SVC-RES-3301', 404, 'no demo merchant yet')
      return { publicKey: keys.publicKey, secretKey: keys.secretKey }
    })
  }
}
