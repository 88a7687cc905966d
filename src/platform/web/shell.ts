import { createRequire } from 'node:module'
import { pathToFileURL } from 'node:url'
import { assetRegistry, CONTENT_TYPES, type AssetRegistry, type AssetSource } from './assets.ts'
import { csrfInput, flashMessage, type Flash } from './components.ts'
import { icons } from './icons.ts'
import { jsonForScript, markup, raw, type SafeHtml } from './html.ts'
import { LANGS, t, type Lang } from './i18n.ts'

// The one shell of every server-rendered page, in two variants:
// - buyer: the hosted pages a buyer sees (checkout, the sandbox ACS, payment links, invoices,
//   the subscription portal): top bar with the brand and the language switch, the sandbox
//   banner, `main`, and the footer that says the page is secure;
// - merchant: the dashboard: the same head, skip link and language switch, plus the header
//   search, the account box, the sidebar menu (exactly ONE `nav` landmark) and `main` with
//   exactly one `h1` (the shell renders it from `heading`, so a page cannot have none or two).
// Both load only files from our own origin (CSP without unsafe-inline): first base.css (the
// design tokens and the rules every page shares), then the variant's stylesheet. uPlot and
// htmx come from node_modules, served by us. htmx is configured for the CSP (no eval, no
// inline indicator styles, no script tags in swapped content) and keeps no page snapshots in
// localStorage (a page may have shown a secret).

/** The design tokens and the shared base rules: every asset registry of pages serves it. */
export const BASE_STYLESHEET: AssetSource = {
  file: new URL('assets/base.css', import.meta.url),
  contentType: CONTENT_TYPES.css,
}

const require = createRequire(import.meta.url)

/** The app pages' files, served under `prefix` by whoever mounts the app. */
export function appAssets(prefix: string): AssetRegistry {
  return assetRegistry(prefix, {
    'base.css': BASE_STYLESHEET,
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

export interface MerchantShellInput {
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

/**
 * Links to this page in each language. The buyer pages have no other navigation, so theirs is
 * a `nav`; the dashboard keeps its one `nav` landmark for the menu and makes this a group.
 */
function langSwitch(lang: Lang, hrefs: Record<Lang, string>, landmark: boolean): SafeHtml {
  const links = LANGS.map(
    (l) =>
      markup`<a href="${hrefs[l]}" lang="${l}" hreflang="${l}" ${l === lang ? raw('aria-current="true"') : ''}>${LANG_NAMES[l]}</a>`,
  )
  return landmark
    ? markup`<nav class="lang-switch" aria-label="${t(lang, 'language')}">${links}</nav>`
    : markup`<div class="lang-switch" role="group" aria-label="${t(lang, 'language')}">${links}</div>`
}

interface HeadInput {
  title: string
  favicon: string
  /** Stylesheet URLs after base.css, in order. */
  styles: readonly string[]
  scripts: readonly { src: string; module?: boolean }[]
  meta?: SafeHtml
}

function head(h: HeadInput): SafeHtml {
  return markup`<head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <meta name="referrer" content="no-referrer" />
    <meta name="robots" content="noindex, nofollow" />
    <meta name="color-scheme" content="light" />
    ${h.meta ?? ''}
    <title>${h.title}</title>
    <link rel="icon" href="${h.favicon}" type="image/svg+xml" />
    ${h.styles.map((href) => markup`<link rel="stylesheet" href="${href}" />`)}
    ${h.scripts.map((s) =>
      s.module
        ? markup`<script type="module" src="${s.src}"></script>`
        : markup`<script defer src="${s.src}"></script>`,
    )}
  </head>`
}

function skipLink(lang: Lang): SafeHtml {
  return markup`<a class="skip-link" href="#main">${t(lang, 'web_skip_to_content')}</a>`
}

export interface BuyerShellInput {
  lang: Lang
  title: string
  /** Which behaviour the script attaches (pay, card, qr, acs, result, notice, …). */
  page: string
  /** Links to this same page in each language. */
  langHrefs: Record<Lang, string>
  sandbox: boolean
  content: SafeHtml
  /** Serves base.css, checkout.css, checkout.js and favicon.svg. */
  assets: AssetRegistry
  /** A page's own stylesheets and module scripts (URLs), after the shared ones. */
  styles?: readonly string[]
  scripts?: readonly string[]
  data?: Record<string, unknown>
  /** The ACS page looks like the bank's, not ours. */
  variant?: 'checkout' | 'bank'
}

/** The buyer variant: the hosted pages. */
export function buyerShell(input: BuyerShellInput): string {
  const { lang, assets } = input
  const bank = input.variant === 'bank'
  const brand = bank
    ? markup`<span class="logo logo-bank"
        ><span class="bank-mark" aria-hidden="true">SB</span
        ><span class="logo-text">${t(lang, 'acs_bank')}</span
        ><span class="badge-3ds">3-D Secure</span></span
      >`
    : markup`<span class="logo"
        >${icons.logo}<span class="logo-text">Kuruş</span
        ><span class="logo-tag">${t(lang, 'brand_tagline')}</span></span
      >`
  const page = markup`<!doctype html>
    <html lang="${lang}">
      ${head({
        title: input.title,
        favicon: assets.url('favicon.svg'),
        styles: [assets.url('base.css'), assets.url('checkout.css'), ...(input.styles ?? [])],
        scripts: [assets.url('checkout.js'), ...(input.scripts ?? [])].map((src) => ({
          src,
          module: true,
        })),
      })}
      <body class="${bank ? 'variant-bank' : 'variant-checkout'}" data-page="${input.page}">
        ${skipLink(lang)}
        <div class="page">
          <header class="topbar">
            <div class="topbar-inner">${brand}${langSwitch(lang, input.langHrefs, true)}</div>
          </header>
          ${input.sandbox ? markup`<p class="sandbox-banner"><span class="sandbox-pill">TEST</span> ${t(lang, 'sandbox')}</p>` : ''}
          <main id="main" class="main" tabindex="-1">${input.content}</main>
          <footer class="footer">
            <span class="footer-item">${icons.lock} ${t(lang, 'footer_secure')}</span
            ><span class="footer-sep" aria-hidden="true">·</span
            ><span class="footer-item">${t(lang, 'footer')}</span>
          </footer>
        </div>
        ${
          input.data
            ? markup`<script type="application/json" id="page-data">
                ${jsonForScript(input.data)}
              </script>`
            : ''
        }
      </body>
    </html> `
  return page.value
}

function navigation(nav: NonNullable<MerchantShellInput['nav']>): SafeHtml {
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

/** The merchant variant: the dashboard. */
export function merchantShell(input: MerchantShellInput): string {
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
  const tools = markup`${langSwitch(lang, input.langHrefs, false)}
  ${input.account && input.csrfToken ? accountBox(lang, input.account, input.csrfToken) : ''}`
  const page = markup`<!doctype html>
    <html lang="${lang}">
      ${head({
        title: `${input.heading} · Kuruş`,
        favicon: assets.url('favicon.svg'),
        meta: markup`<meta
          name="htmx-config"
          content='{"includeIndicatorStyles":false,"allowEval":false,"allowScriptTags":false,"selfRequestsOnly":true,"historyCacheSize":0,"refreshOnHistoryMiss":true}'
        />`,
        styles: [
          ...(input.chart ? [assets.url('uplot.css')] : []),
          assets.url('base.css'),
          assets.url('app.css'),
        ],
        scripts: [
          ...(input.chart ? [{ src: assets.url('uplot.js') }] : []),
          { src: assets.url('htmx.js') },
          { src: assets.url('app.js') },
        ],
      })}
      <body class="${signedIn ? 'app' : 'app app-public'}">
        ${skipLink(lang)}
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
