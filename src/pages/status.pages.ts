import type { FastifyReply, FastifyRequest } from 'fastify'
import { isStateConflict, type AppError } from '../platform/errors.ts'
import { markup, type SafeHtml } from '../platform/web/html.ts'
import type { AssetRegistry } from '../platform/web/assets.ts'
import {
  langHrefs,
  langOf,
  sendHtml,
  type HtmlContextOptions,
  type PageRateLimiter,
} from '../platform/web/html-context.ts'
import { t, type Lang, type MessageKey } from '../platform/web/i18n.ts'
import { formatMoney } from '../platform/web/format.ts'
import { icons, layout } from './layout.ts'

// The sandbox ACS page, the outcome page after a 3DS challenge, and the notices shown in
// place of a form (expired, completed, not found, errors), and the one error page of every
// hosted buyer page.

interface PageBase {
  lang: Lang
  langHrefs: Record<Lang, string>
  sandbox: boolean
}

export interface AcsPageInput extends PageBase {
  action: string
  correlationId: string
  merchantName: string
  amount: number
  cardMask: string | null
}

export function acsPage(p: AcsPageInput): string {
  const { lang } = p
  const card = p.cardMask ? `•••• ${p.cardMask.slice(-4)}` : '—'
  const content = markup`<section class="bank-card" aria-labelledby="acs-heading">
    <h1 id="acs-heading" class="bank-title">${icons.shield}<span>${t(lang, 'acs_title')}</span></h1>
    <p class="bank-intro">${t(lang, 'acs_intro')}</p>
    <dl class="facts">
      <div>
        <dt>${t(lang, 'acs_merchant')}</dt>
        <dd>${p.merchantName}</dd>
      </div>
      <div>
        <dt>${t(lang, 'acs_amount')}</dt>
        <dd class="facts-amount">${formatMoney(p.amount, lang)}</dd>
      </div>
      <div>
        <dt>${t(lang, 'acs_card')}</dt>
        <dd>${card}</dd>
      </div>
    </dl>
    <form id="otp-form" class="otp-form" method="post" action="${p.action}">
      <input type="hidden" name="correlationId" value="${p.correlationId}" />
      <div class="field">
        <label for="otp">${t(lang, 'acs_otp')}</label>
        <div class="input-wrap">
          <input
            id="otp"
            name="otp"
            type="text"
            class="otp-input"
            autocomplete="one-time-code"
            inputmode="numeric"
            pattern="[0-9]*"
            maxlength="6"
            aria-describedby="otp-hint"
            required
            autofocus
          />
        </div>
        <p class="hint" id="otp-hint">${t(lang, 'acs_otp_hint')}</p>
      </div>
      <button type="submit" class="primary-button bank-button" id="submit-button">
        <span class="button-label">${t(lang, 'acs_confirm')}</span>
      </button>
    </form>
    ${p.sandbox ? markup`<p class="sandbox-hint">${t(lang, 'acs_sandbox')}</p>` : ''}
  </section>`
  return layout({
    lang,
    title: t(lang, 'html_title_acs'),
    page: 'acs',
    langHrefs: p.langHrefs,
    sandbox: p.sandbox,
    content,
    variant: 'bank',
    data: { lang, messages: { processing: t(lang, 'processing') } },
  })
}

export type Tone = 'success' | 'failure' | 'pending' | 'info'

export interface NoticeInput extends PageBase {
  tone: Tone
  title: string
  body: string
  detail?: string
  merchantName?: string
  amount?: number
  action?: { href: string; label: string }
  /** Send the buyer on to `action.href` by itself after this long (outcome pages). */
  autoRedirectMs?: number
  variant?: 'checkout' | 'bank'
}

const TONE_ICONS: Record<Tone, SafeHtml> = {
  success: icons.check,
  failure: icons.cross,
  pending: icons.clock,
  info: icons.alert,
}

export function noticePage(p: NoticeInput): string {
  const { lang } = p
  const action = p.action
  const content = markup`<section class="notice notice-${p.tone}" aria-labelledby="notice-heading">
    <span class="notice-icon">${TONE_ICONS[p.tone]}</span>
    <h1 id="notice-heading" class="notice-title">${p.title}</h1>
    ${p.merchantName && p.amount !== undefined ? markup`<p class="notice-amount"><span>${p.merchantName}</span><strong>${formatMoney(p.amount, lang)}</strong></p>` : ''}
    <p class="notice-body">${p.body}</p>
    ${p.detail ? markup`<p class="notice-detail">${p.detail}</p>` : ''}
    ${
      action
        ? markup`<a
            class="primary-button notice-action"
            id="notice-action"
            href="${action.href}"
            ${p.autoRedirectMs === undefined ? '' : markup` data-auto-redirect="${p.autoRedirectMs}"`}
            >${action.label}</a
          >`
        : ''
    }
  </section>`
  return layout({
    lang,
    title: p.title,
    page: 'notice',
    langHrefs: p.langHrefs,
    sandbox: p.sandbox,
    content,
    variant: p.variant ?? 'checkout',
  })
}

interface Words {
  title: MessageKey
  body: MessageKey
}

export interface BuyerErrorOptions {
  sandbox: boolean
  /** What this context's pages are (a 404 says which thing was not found). */
  notFound?: Words
  /** A state conflict the page can name (the ACS page: verified already). */
  conflict?: Words
}

/**
 * The one error page of the hosted buyer pages (checkout, payment links, invoices, the
 * subscription portal), as htmlContext's `errorPage`: the same words for a status on every
 * page, only a 404 names what was not found; a server error gives the reference support asks
 * for.
 */
export function buyerErrorPage(options: BuyerErrorOptions) {
  return (request: FastifyRequest, reply: FastifyReply, error: AppError): FastifyReply => {
    const { status } = error
    const lang = langOf(request)
    const words: Words =
      status === 404
        ? (options.notFound ?? { title: 'not_found_title', body: 'not_found_body' })
        : status === 429
          ? { title: 'rate_title', body: 'rate_body' }
          : status === 403
            ? { title: 'unavailable_title', body: 'unavailable_body' }
            : options.conflict && isStateConflict(error)
              ? options.conflict
              : status < 500 && status !== 409
                ? { title: 'bad_request_title', body: 'bad_request_body' }
                : { title: 'error_title', body: 'error_body' }
    return sendHtml(
      reply,
      status,
      noticePage({
        lang,
        langHrefs: langHrefs(request),
        sandbox: options.sandbox,
        tone: 'info',
        title: t(lang, words.title),
        body: t(lang, words.body),
        ...(status >= 500 ? { detail: t(lang, 'error_ref', { requestId: request.id }) } : {}),
      }),
    )
  }
}

export interface BuyerContextInput extends Omit<BuyerErrorOptions, 'sandbox'> {
  /** Names the context in the error log. */
  name: string
  /** The deployment (`live` adds HSTS and Secure cookies; `demo` shows the sandbox hints). */
  env: string
  rateLimiter: PageRateLimiter
  assets?: AssetRegistry
  form?: HtmlContextOptions['form']
}

/** htmlContext's options for a hosted buyer page: the one error page, the same rules. */
export function buyerContext(input: BuyerContextInput): HtmlContextOptions {
  const { name, env, rateLimiter, assets, form, notFound, conflict } = input
  return {
    name,
    live: env === 'live',
    rateLimiter,
    ...(assets ? { assets } : {}),
    ...(form ? { form } : {}),
    errorPage: buyerErrorPage({
      sandbox: env === 'demo',
      ...(notFound ? { notFound } : {}),
      ...(conflict ? { conflict } : {}),
    }),
  }
}
