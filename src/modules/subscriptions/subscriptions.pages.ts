import type { FastifyPluginAsync } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { Deps } from '../../database.ts'
import type { RateLimiter } from '../gateway/index.ts'
import { markup, type SafeHtml } from '../../platform/web/html.ts'
import { assetRegistry, CONTENT_TYPES } from '../../platform/web/assets.ts'
import {
  htmlContext,
  langHrefs,
  langOf,
  PublicHashParams,
  ReturnQuery,
  sendHtml,
} from '../../platform/web/html-context.ts'
import { wordsWith, type Lang } from '../../platform/web/i18n.ts'
import { formatDate, formatMoney } from '../../platform/web/format.ts'
import { icons, layout } from '../../pages/layout.ts'
import { buyerContext } from '../../pages/status.pages.ts'
import { getPortalView, type PortalView } from './portal.service.ts'

type IntervalUnit = PortalView['subscription']['intervalUnit']
type SubscriptionStatus = PortalView['subscription']['status']

// The buyer's subscription page, /subscription/{publicHash}: the plan, the next charge and
// the card, with a cancel button (at the end of the paid period) and an update-card button
// (a card_update_only checkout session). It uses the checkout pages' shell and stylesheet
// (src/pages) and one small script of its own, /subscription-assets/portal.js, which calls
// the public API /v1/public/subscriptions/{hash}/…. Same rules as the checkout pages: our
// own origin only, no inline script or style (CSP), HTML error pages, tr/en.

// Our own static files, read once and versioned by content hash (cached for good).
const ASSETS = assetRegistry('/subscription-assets/', {
  'portal.js': {
    file: new URL('assets/portal.js', import.meta.url),
    contentType: CONTENT_TYPES.js,
  },
  'portal.css': {
    file: new URL('assets/portal.css', import.meta.url),
    contentType: CONTENT_TYPES.css,
  },
})

// This page's words: its own table (subscriptions.messages.ts, `sub_` keys).
const m = wordsWith('sub_')

function intervalLabel(lang: Lang, unit: IntervalUnit, count: number): string {
  return count === 1 ? m(lang, `every_${unit}`) : m(lang, `every_n_${unit}`, { n: count })
}

function statusLabel(lang: Lang, status: SubscriptionStatus, ending: boolean): string {
  if (ending && status !== 'cancelled' && status !== 'expired') return m(lang, 'status_ending')
  return m(lang, `status_${status}`)
}

function initial(name: string): string {
  return Array.from(name.trim())[0]?.toLocaleUpperCase('tr') ?? '•'
}

interface PageInput {
  lang: Lang
  langHrefs: Record<Lang, string>
  sandbox: boolean
  view: PortalView
  /** The buyer is back from the update-card checkout. */
  cardUpdated: boolean
}

function dateRow(lang: Lang, v: PortalView['subscription']): SafeHtml {
  const when = v.nextChargeAt ? formatDate(v.nextChargeAt, lang, 'long') : '—'
  const label = v.cancelAtPeriodEnd
    ? m(lang, 'ends_on')
    : v.status === 'past_due'
      ? m(lang, 'next_retry')
      : v.status === 'trialing'
        ? m(lang, 'first_charge')
        : m(lang, 'next_charge')
  if (v.status === 'cancelled' || v.status === 'expired') return markup``
  return markup`<div>
    <dt id="next-charge-label">${label}</dt>
    <dd id="next-charge">${when}</dd>
  </div>`
}

function notes(lang: Lang, p: PageInput): SafeHtml {
  const s = p.view.subscription
  const ended = s.status === 'cancelled' || s.status === 'expired'
  const text = ended
    ? m(lang, 'ended_note')
    : s.cancelAtPeriodEnd && s.nextChargeAt
      ? m(lang, 'ending_note', { date: formatDate(s.nextChargeAt, lang, 'long') })
      : p.cardUpdated
        ? m(lang, 'card_updated')
        : ''
  return markup`<p class="portal-note" id="portal-status" role="status">${text}</p>`
}

/** A past-due subscription asks for a new card (a static notice, not an alert). */
function warning(lang: Lang, p: PageInput): SafeHtml {
  if (p.view.subscription.status !== 'past_due' || p.cardUpdated) return markup``
  return markup`<p class="portal-warning" id="portal-warning">
    ${icons.alert}<span>${m(lang, 'past_due_note')}</span>
  </p>`
}

export function subscriptionPage(p: PageInput): string {
  const { lang, view } = p
  const s = view.subscription
  const ended = s.status === 'cancelled' || s.status === 'expired'
  const canCancel = !ended && !s.cancelAtPeriodEnd
  const content = markup`<div class="checkout">
      <section class="summary" aria-labelledby="summary-heading">
        <div class="merchant">
          <span class="merchant-mark" aria-hidden="true">${initial(view.merchantName)}</span>
          <div class="merchant-text">
            <p class="eyebrow">${m(lang, 'eyebrow')}</p>
            <p class="merchant-name">${view.merchantName}</p>
          </div>
        </div>
        <h1 id="summary-heading" class="amount-block">
          <span class="amount-label">${intervalLabel(lang, s.intervalUnit, s.intervalCount)}</span
          ><span class="amount">${formatMoney(s.amountMinor, lang)}</span>
        </h1>
        ${s.description ? markup`<p class="description">${s.description}</p>` : ''}
      </section>
      <section class="panel" aria-labelledby="details-heading">
        <h2 id="details-heading" class="panel-title">
          ${icons.card}<span>${m(lang, 'details')}</span>
        </h2>
        <div class="alert" id="portal-alert" role="alert"></div>
        ${warning(lang, p)} ${notes(lang, p)}
        <dl class="facts">
          <div>
            <dt>${m(lang, 'status')}</dt>
            <dd id="status-value">${statusLabel(lang, s.status, s.cancelAtPeriodEnd)}</dd>
          </div>
          ${dateRow(lang, s)}
          <div>
            <dt>${m(lang, 'card')}</dt>
            <dd id="card-value">${s.cardBrand.toUpperCase()} •••• ${s.cardLast4}</dd>
          </div>
        </dl>
        ${
          ended
            ? ''
            : markup`<div class="portal-actions">
                <button type="button" class="primary-button" id="update-card-button">
                  ${icons.card}<span class="button-label">${m(lang, 'update_card')}</span>
                </button>
                ${canCancel ? markup`<button type="button" class="portal-cancel-button" id="cancel-button"><span class="button-label">${m(lang, 'cancel')}</span></button>` : ''}
              </div>`
        }
      </section>
    </div>`
  return layout({
    lang,
    styles: [ASSETS.url('portal.css')],
    scripts: [ASSETS.url('portal.js')],
    title: m(lang, 'title', { merchant: view.merchantName }),
    page: 'subscription',
    langHrefs: p.langHrefs,
    sandbox: p.sandbox,
    content,
    data: {
      publicHash: view.publicHash,
      lang,
      messages: {
        processing: m(lang, 'processing'),
        status_cancelled: m(lang, 'status_cancelled'),
        status_ending: m(lang, 'status_ending'),
        ends_on: m(lang, 'ends_on'),
        ending_note: m(lang, 'ending_note', {
          date: s.nextChargeAt ? formatDate(s.nextChargeAt, lang, 'long') : '—',
        }),
        cancelled_now: m(lang, 'cancelled_now'),
        err_generic: m(lang, 'err_generic'),
        err_network: m(lang, 'err_network'),
        err_rate: m(lang, 'err_rate'),
        err_busy: m(lang, 'err_busy'),
      },
    },
  })
}

export interface SubscriptionPagesOptions {
  /** The per-IP limiter of the public context: the page shares its budget. */
  rateLimiter: RateLimiter
}

/** The subscription page's context: register it on its own (it sets hooks and an error handler). */
export function subscriptionPagesRoutes(
  deps: Deps,
  options: SubscriptionPagesOptions,
): FastifyPluginAsync {
  return async (plain) => {
    const app = plain.withTypeProvider<TypeBoxTypeProvider>()
    await app.register(
      htmlContext,
      buyerContext({
        name: 'subscription',
        env: deps.config.env,
        rateLimiter: options.rateLimiter,
        assets: ASSETS,
        notFound: { title: 'sub_not_found_title', body: 'sub_not_found_body' },
      }),
    )

    app.get(
      '/subscription/:hash',
      { schema: { hide: true, params: PublicHashParams, querystring: ReturnQuery } },
      async (request, reply) => {
        const view = await getPortalView(deps, request.params.hash)
        return sendHtml(
          reply,
          200,
          subscriptionPage({
            lang: langOf(request),
            langHrefs: langHrefs(request),
            sandbox: deps.config.env === 'demo',
            view,
            cardUpdated: request.query.status === 'card_updated',
          }),
        )
      },
    )
  }
}
