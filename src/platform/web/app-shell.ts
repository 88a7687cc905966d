import { createRequire } from 'node:module'
import { pathToFileURL } from 'node:url'
import { assetRegistry, CONTENT_TYPES, type AssetRegistry } from './assets.ts'
import { csrfInput, flashMessage, type Flash } from './components.ts'
import { markup, raw, type SafeHtml } from './html.ts'
import { LANGS, t, type Lang } from './i18n.ts'

// The shell of the server-rendered app pages (the merchant dashboard): skip link, header
// with the language switch and the account's sign-out button, exactly ONE `nav` landmark,
// and `main` with exactly one `h1` (the shell renders it from `heading`, so a page cannot
// have none or two). Scripts and styles are files from our own origin (CSP without
// unsafe-inline); uPlot and htmx come from node_modules, served by us. htmx is configured for
// the CSP (no eval, no inline indicator styles, no script tags in swapped content) and keeps
// no page snapshots in localStorage (a page may have shown a secret).

const require = createRequire(import.meta.url)

/** The app pages' files, served under `prefix` by whoever mounts the app. */
export function appAssets(prefix: string): AssetRegistry {
  return assetRegistry(prefix, {
    'app.css': { file: new URL('assets/app.css', import.meta.url), contentType: CONTENT_TYPES.css },
    'app.js': { file: new URL('assets/app.js', import.meta.url), contentType: CONTENT_TYPES.js },
    'uplot.css': {
      file: pathToFileURL(require.resolve('uplot/dist/uPlot.min.css')),
      contentType: CONTENT_TYPES.css,
    },
    'uplot.js': {
      file: pathToFileURL(require.resolve('uplot/dist/uPlot.iife.min.js')),
      contentType: CONTENT_TYPES.js,
    },
    'htmx.js': {
      file: pathToFileURL(require.resolve('htmx.org/dist/htmx.min.js')),
      contentType: CONTENT_TYPES.js,
    },
    'favicon.svg': {
      file: new URL('../../pages/favicon.svg', import.meta.url),
      contentType: CONTENT_TYPES.svg,
    },
  })
}

export interface NavLink {
  href: string
  label: string
  current: boolean
}

export interface Account {
  email: string
  roleLabel: string
  merchantName: string
  signOutAction: string
}

export interface ShellInput {
  lang: Lang
  /** The page's heading (its one h1); also the start of the document title. */
  heading: string
  /** Beside the heading: the page's main actions. */
  headingAside?: SafeHtml
  /** The app's start page (the brand links there). */
  homeHref: string
  /** The same page in each language. */
  langHrefs: Record<Lang, string>
  assets: AssetRegistry
  sandbox: boolean
  /** Absent on pages before sign-in (then there is no navigation). */
  nav?: { label: string; links: readonly NavLink[] }
  /** The search across the app, in the header (signed-in pages). */
  search?: { action: string; label: string; placeholder: string }
  account?: Account
  csrfToken?: string
  flash?: Flash
  content: SafeHtml
  /** Load the chart library (the overview). */
  chart?: boolean
  /** Data for app.js, as a JSON block (never inline script). */
  data?: SafeHtml
}

const LANG_NAMES: Record<Lang, string> = { tr: 'Türkçe', en: 'English' }

function langSwitch(lang: Lang, hrefs: Record<Lang, string>): SafeHtml {
  // A group of links, not a `nav`: the page keeps exactly one navigation landmark.
  return markup`<div class="lang-switch" role="group" aria-label="${t(lang, 'language')}">
    ${LANGS.map(
      (l) =>
        markup`<a href="${hrefs[l]}" lang="${l}" hreflang="${l}" ${l === lang ? raw('aria-current="true"') : ''}>${LANG_NAMES[l]}</a>`,
    )}
  </div>`
}

function navigation(nav: NonNullable<ShellInput['nav']>): SafeHtml {
  return markup`<nav class="app-nav" aria-label="${nav.label}">
    <ul>
      ${nav.links.map(
        (l) =>
          markup`<li><a href="${l.href}" ${l.current ? raw('aria-current="page"') : ''}>${l.label}</a></li>`,
      )}
    </ul>
  </nav>`
}

function accountBox(lang: Lang, account: Account, csrfToken: string): SafeHtml {
  return markup`<div class="account">
    <p class="account-who">
      <span class="account-email">${account.email}</span>
      <span class="account-role">${account.merchantName} · ${account.roleLabel}</span>
    </p>
    <form method="post" action="${account.signOutAction}">
      ${csrfInput(csrfToken)}
      <button type="submit" class="button button-secondary">${t(lang, 'web_sign_out')}</button>
    </form>
  </div>`
}

export function appShell(input: ShellInput): string {
  const { lang, assets } = input
  const signedIn = input.account !== undefined && input.csrfToken !== undefined
  // With a navigation, narrow screens show these inside the menu (app.css), not in the header.
  const search = input.search
    ? (
        id: string,
      ) => markup`<form method="get" action="${input.search?.action ?? ''}" class="header-search" role="search">
        <label class="sr-only" for="${id}">${input.search?.label ?? ''}</label>
        <input type="search" id="${id}" name="q" maxlength="200" placeholder="${input.search?.placeholder ?? ''}" />
      </form>`
    : () => markup``
  const tools = markup`${langSwitch(lang, input.langHrefs)}
  ${input.account && input.csrfToken ? accountBox(lang, input.account, input.csrfToken) : ''}`
  const page = markup`<!doctype html>
    <html lang="${lang}">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="referrer" content="no-referrer" />
        <meta name="robots" content="noindex, nofollow" />
        <meta name="color-scheme" content="light" />
        <meta
          name="htmx-config"
          content='{"includeIndicatorStyles":false,"allowEval":false,"allowScriptTags":false,"selfRequestsOnly":true,"historyCacheSize":0,"refreshOnHistoryMiss":true}'
        />
        <title>${input.heading} · Kuruş</title>
        <link rel="icon" href="${assets.url('favicon.svg')}" type="image/svg+xml" />
        ${input.chart ? markup`<link rel="stylesheet" href="${assets.url('uplot.css')}" />` : ''}
        <link rel="stylesheet" href="${assets.url('app.css')}" />
        ${input.chart ? markup`<script defer src="${assets.url('uplot.js')}"></script>` : ''}
        <script defer src="${assets.url('htmx.js')}"></script>
        <script defer src="${assets.url('app.js')}"></script>
      </head>
      <body class="${signedIn ? 'app' : 'app app-public'}">
        <a class="skip-link" href="#main">${t(lang, 'web_skip_to_content')}</a>
        <header class="app-header">
          ${
            input.nav
              ? markup`<button
                type="button"
                class="menu-button"
                aria-controls="app-menu"
                aria-expanded="false"
              >
                <span class="menu-icon" aria-hidden="true"></span>${t(lang, 'web_menu')}
              </button>`
              : ''
          }
          <a class="brand" href="${input.homeHref}"
            ><span class="brand-mark" aria-hidden="true">K</span
            ><span class="brand-name">Kuruş</span></a
          >
          ${input.sandbox ? markup`<span class="badge badge-warning">${t(lang, 'web_sandbox')}</span>` : ''}
          <div class="${input.nav ? 'header-tools header-tools-wide' : 'header-tools'}">
            ${search('search-header')}${tools}
          </div>
        </header>
        <div class="${input.nav ? 'app-body app-body-nav' : 'app-body'}">
          ${
            input.nav
              ? markup`<div id="app-menu" class="app-menu">
                ${navigation(input.nav)}
                <div class="menu-tools">${search('search-menu')}${tools}</div>
              </div>`
              : ''
          }
          <main id="main" class="app-main" tabindex="-1">
            ${flashMessage(input.flash)}
            <div class="page-head">
              <h1>${input.heading}</h1>
              ${input.headingAside ?? ''}
            </div>
            ${input.content}
          </main>
        </div>
        ${input.data ? markup`<script type="application/json" id="page-data">${input.data}</script>` : ''}
      </body>
    </html>`
  return page.value
}

export type ErrorStatus = 400 | 403 | 404 | 409 | 429 | 500

/** The heading and body of an error page (the caller puts them in the shell). */
export function errorContent(
  lang: Lang,
  status: ErrorStatus,
  requestId: string,
  homeHref: string,
): { heading: string; content: SafeHtml } {
  const key = status === 403 ? '403' : status === 404 ? '404' : status === 429 ? '429' : 'other'
  const heading = t(lang, `web_error_${key}_title`)
  const body = t(lang, `web_error_${key}_body`)
  return {
    heading,
    content: markup`<div class="panel error-page">
      <p>${body}</p>
      ${status >= 500 ? markup`<p class="muted">${t(lang, 'web_error_ref', { requestId })}</p>` : ''}
      <p><a class="button button-secondary" href="${homeHref}">${t(lang, 'web_back_home')}</a></p>
    </div>`,
  }
}
