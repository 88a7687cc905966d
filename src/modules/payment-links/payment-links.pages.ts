import type { FastifyPluginAsync, FastifyRequest } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { Deps } from '../../database.ts'
import { isValidationError } from '../../platform/errors.ts'
import { toAppError } from '../../platform/http/errors.ts'
import { markup, type SafeHtml } from '../../platform/web/html.ts'
import {
  htmlContext,
  langHrefs,
  langOf,
  PublicHashParams,
  ReturnQuery,
  sendHtml,
} from '../../platform/web/html-context.ts'
import { wordsWith, type Lang } from '../../platform/web/i18n.ts'
import { formatMoney } from '../../platform/web/format.ts'
import { icons, layout } from '../../pages/layout.ts'
import { buyerContext, noticePage } from '../../pages/status.pages.ts'
import type { RateLimiter } from '../gateway/index.ts'
import {
  linkUrl,
  payLink,
  viewPublicLink,
  type Buyer,
  type LinkStatus,
  type PublicLink,
} from './payment-links.service.ts'

// The buyer's page of a payment link, /l/{hash}: the merchant, the description, the amount
// and one Öde / Pay button (plus name, email or phone when the link asks for them). A plain
// HTML form, no script of its own. GET makes nothing (link previews of chat apps fetch it);
// the POST makes the checkout session and sends the buyer to /s/{sessionId} (303). A
// deactivated, expired or used-up link answers 410 with a page that says so. Same shell,
// stylesheet and rules as the checkout pages: our own origin only, strict CSP, HTML error
// pages, Turkish and English.

// This page's words: its own table (payment-links.messages.ts, `plink_` keys).
const m = wordsWith('plink_')

function initial(name: string): string {
  return Array.from(name.trim())[0]?.toLocaleUpperCase('tr') ?? '•'
}

const FORM_BODY_BYTES_MAX = 2048

interface Base {
  lang: Lang
  langHrefs: Record<Lang, string>
  sandbox: boolean
}

function base(deps: Deps, request: FastifyRequest): Base {
  return {
    lang: langOf(request),
    langHrefs: langHrefs(request),
    sandbox: deps.config.env === 'demo',
  }
}

/** What the form shows back after a refused submit. */
interface FormState {
  values: Buyer
  errors: ReadonlySet<string>
}

function buyerField(
  lang: Lang,
  name: 'name' | 'email' | 'phone',
  state: FormState | undefined,
): SafeHtml {
  const id = `buyer-${name}`
  const invalid = state?.errors.has(name) ?? false
  const attrs = {
    name: { type: 'text', autocomplete: 'name', inputmode: 'text', maxlength: '100' },
    email: { type: 'email', autocomplete: 'email', inputmode: 'email', maxlength: '254' },
    phone: { type: 'tel', autocomplete: 'tel', inputmode: 'tel', maxlength: '20' },
  }[name]
  return markup`<div class="field">
    <label for="${id}">${m(lang, `field_${name}`)}</label>
    <div class="input-wrap">
      <input
        id="${id}"
        name="${name}"
        type="${attrs.type}"
        autocomplete="${attrs.autocomplete}"
        inputmode="${attrs.inputmode}"
        maxlength="${attrs.maxlength}"
        value="${state?.values[name] ?? ''}"
        aria-describedby="${id}-error"
        aria-invalid="${invalid ? 'true' : 'false'}"
        required
      />
    </div>
    <p class="field-error" id="${id}-error">${invalid ? m(lang, `field_${name}_error`) : ''}</p>
  </div>`
}

function returnedBox(lang: Lang, status: string | undefined): SafeHtml {
  if (status === 'failed' || status === 'expired' || status === 'cancelled') {
    return markup`<div class="alert" id="link-alert" role="alert">
      ${icons.alert}<span>${m(lang, 'failed_note')}</span>
    </div>`
  }
  if (status === 'pending' || status === 'pending_3ds') {
    return markup`<p class="alert" id="link-status" role="status">
      ${icons.clock}<span>${m(lang, 'pending_note')}</span>
    </p>`
  }
  return markup``
}

export function linkPage(
  b: Base,
  hash: string,
  view: PublicLink,
  extra: { returned?: string | undefined; form?: FormState; busy?: boolean } = {},
): string {
  const { lang } = b
  const { link, merchantName } = view
  const asked = (['name', 'email', 'phone'] as const).filter((k) => link.collect[k])
  const content = markup`<div class="checkout">
    <section class="summary" aria-labelledby="summary-heading">
      <div class="merchant">
        <span class="merchant-mark" aria-hidden="true">${initial(merchantName)}</span>
        <div class="merchant-text">
          <p class="eyebrow">${m(lang, 'eyebrow')}</p>
          <p class="merchant-name" id="link-merchant">${merchantName}</p>
        </div>
      </div>
      <h1 id="summary-heading" class="amount-block">
        <span class="amount-label">${m(lang, 'amount_label')}</span
        ><span class="amount" id="link-amount">${formatMoney(link.amount, lang)}</span>
      </h1>
      <p class="description" id="link-description">${link.description}</p>
    </section>
    <section class="panel" aria-labelledby="pay-heading">
      <h2 id="pay-heading" class="panel-title">${icons.card}<span>${m(lang, 'pay_heading')}</span></h2>
      ${returnedBox(lang, extra.returned)}
      ${extra.busy ? markup`<div class="alert" id="link-busy" role="alert">${icons.clock}<span>${m(lang, 'busy_note')}</span></div>` : ''}
      <form method="post" action="/l/${encodeURIComponent(hash)}" novalidate>
        ${asked.map((k) => buyerField(lang, k, extra.form))}
        <button type="submit" class="primary-button" id="pay-button">
          ${icons.lock}<span class="button-label">${m(lang, 'pay', { amount: formatMoney(link.amount, lang) })}</span>
        </button>
      </form>
    </section>
  </div>`
  return layout({
    lang,
    title: m(lang, 'title', { merchant: merchantName }),
    page: 'link',
    langHrefs: b.langHrefs,
    sandbox: b.sandbox,
    content,
  })
}

function gonePage(b: Base, status: Exclude<LinkStatus, 'active'>, view?: PublicLink): string {
  return noticePage({
    ...b,
    tone: 'info',
    title: m(b.lang, `gone_${status}_title`),
    body: m(b.lang, `gone_${status}_body`, { merchant: view?.merchantName ?? '' }),
    ...(view ? { merchantName: view.merchantName, amount: view.link.amount } : {}),
  })
}

function thanksPage(b: Base, view: PublicLink): string {
  return noticePage({
    ...b,
    tone: 'success',
    title: m(b.lang, 'thanks_title'),
    body: m(b.lang, 'thanks_body', { merchant: view.merchantName }),
    merchantName: view.merchantName,
    amount: view.link.amount,
  })
}

export interface LinkPagesOptions {
  /** The per-IP limiter of the public context: the page shares its budget. */
  rateLimiter: RateLimiter
}

/** The form's fields, from an urlencoded body (unknown fields ignored). */
function buyerFrom(body: unknown): Buyer {
  const form = new URLSearchParams(typeof body === 'string' ? body : '')
  const pick = (k: string) => form.get(k)?.slice(0, 300) ?? undefined
  return { name: pick('name'), email: pick('email'), phone: pick('phone') }
}

/** The payment link pages' context: register it on its own (hooks and an error handler). */
export function paymentLinkPagesRoutes(deps: Deps, options: LinkPagesOptions): FastifyPluginAsync {
  return async (plain) => {
    const app = plain.withTypeProvider<TypeBoxTypeProvider>()
    await app.register(
      htmlContext,
      buyerContext({
        name: 'payment link',
        env: deps.config.env,
        rateLimiter: options.rateLimiter,
        // The Pay form posts urlencoded (a plain HTML form): kept as text, read by buyerFrom.
        form: { bodyLimit: FORM_BODY_BYTES_MAX, parse: (text) => text },
        notFound: { title: 'plink_not_found_title', body: 'plink_not_found_body' },
      }),
    )

    app.get(
      '/l/:hash',
      { schema: { hide: true, params: PublicHashParams, querystring: ReturnQuery } },
      async (request, reply) => {
        const b = base(deps, request)
        const view = await viewPublicLink(deps, request.params.hash)
        // Back from the checkout with a captured payment: say thank you, whatever the link's
        // state now (a one-payment link is used up by this very payment).
        if (request.query.status === 'captured') return sendHtml(reply, 200, thanksPage(b, view))
        if (view.link.status !== 'active') {
          return sendHtml(reply, 410, gonePage(b, view.link.status, view))
        }
        return sendHtml(
          reply,
          200,
          linkPage(b, request.params.hash, view, { returned: request.query.status }),
        )
      },
    )

    app.post(
      '/l/:hash',
      { schema: { hide: true, params: PublicHashParams } },
      async (request, reply) => {
        const b = base(deps, request)
        const hash = request.params.hash
        const buyer = buyerFrom(request.body)
        let outcome
        try {
          outcome = await payLink(deps, hash, buyer)
        } catch (error) {
          // A field the link asks for is missing or wrong: the page again, saying which.
          const appError = toAppError(error as Error)
          if (!isValidationError(appError)) throw error
          const view = await viewPublicLink(deps, hash)
          const errors = new Set((appError.details ?? []).map((d) => d.field))
          return sendHtml(reply, 400, linkPage(b, hash, view, { form: { values: buyer, errors } }))
        }
        if (outcome.kind === 'gone') {
          return sendHtml(reply, 410, gonePage(b, outcome.status, outcome.link))
        }
        if (outcome.kind === 'busy') {
          return sendHtml(reply, 409, linkPage(b, hash, outcome.link, { busy: true }))
        }
        // Our own origin: the checkout page is served by this same process.
        return reply.code(303).header('location', `/s/${outcome.session.id}`).send()
      },
    )

    app.get(
      '/l/:hash/qr.svg',
      { schema: { hide: true, params: PublicHashParams } },
      async (request, reply) => {
        const view = await viewPublicLink(deps, request.params.hash)
        // Loaded at the first QR code drawn (docs/performance.md, "Round 3, part 3: memory").
        const { default: QRCode } = await import('qrcode')
        const svg = await QRCode.toString(linkUrl(deps.config, view.link.publicHash), {
          type: 'svg',
          errorCorrectionLevel: 'M',
          margin: 2,
          color: { dark: '#0f172a', light: '#ffffff' },
        })
        return reply
          .type('image/svg+xml; charset=utf-8')
          .header('cache-control', 'public, max-age=300')
          .send(svg)
      },
    )
  }
}
