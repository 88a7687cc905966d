import type { FastifyPluginAsync, FastifyRequest } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { Deps } from '../../database.ts'
import { notFound } from '../../platform/errors.ts'
import type { RateLimiter } from '../gateway/index.ts'
import { hostedAssets } from '../../pages/assets.ts'
import { cardUpdatePage, payPage, qrPage } from '../../pages/checkout.pages.ts'
import { htmlContext, langHrefs, langOf, sendHtml } from '../../platform/web/html-context.ts'
import { t } from '../../platform/web/i18n.ts'
import { acsPage, buyerContext, noticePage } from '../../pages/status.pages.ts'
import { bankGatePage } from '../../pages/bank-gate.pages.ts'
import { contentSecurityPolicy } from '../../platform/web/security.ts'
import {
  AcsForm,
  AcsParams,
  AcsQuery,
  BankCallbackForm,
  FieldsQuery,
  SessionPageParams,
  ThreeDsCompleteQuery,
} from './checkout.schemas.ts'
import { browserFieldOrigins } from './checkout.service.ts'
import {
  cardFieldsPage,
  fieldsUnavailablePage,
  kurusJsAsset,
} from '../../pages/kurus-js/kurus-js.pages.ts'
import {
  finishChallenge,
  getChallenge,
  getBankGate,
  getCheckout,
  submitBankCallback,
  submitChallenge,
  type CheckoutView,
} from './checkout.service.ts'

// The hosted pages: HTML from our own origin under a strict CSP (no inline script or
// style, nothing from another origin, no framing, forms post only to us), HTML error
// pages instead of the JSON envelope, and the language chosen per request.

const FORM_BODY_BYTES_MAX = 16 * 1024

/**
 * Where the bank posts back: the origin the buyer's browser reached this page on, as the
 * configured checkout URL spells it when it names the same host (its https behind a proxy).
 */
function publicOrigin(deps: Deps, request: FastifyRequest): string {
  try {
    const configured = new URL(deps.config.checkoutUrl)
    if (configured.host === request.host) return configured.origin
  } catch {
    // not an absolute URL: this request's origin
  }
  return `${request.protocol}://${request.host}`
}
/** How long an outcome page shows before it sends the buyer back to the merchant. */
const RETURN_DELAY_MS = { success: 1200, failure: 2500 } as const

function sessionPage(deps: Deps, request: FastifyRequest, v: CheckoutView): [number, string] {
  const lang = langOf(request)
  const base = {
    lang,
    langHrefs: langHrefs(request),
    sandbox: deps.config.env === 'demo',
    sessionId: v.session.id,
    merchantName: v.merchantName,
  }
  const s = v.session
  if (s.status === 'active' && s.mode === 'card_update_only') return [200, cardUpdatePage(base)]
  if (s.status === 'active' && s.mode === 'qr' && s.amount !== null && v.qrPayload) {
    return [
      200,
      qrPage({
        ...base,
        amount: s.amount,
        description: s.description,
        qrPayload: v.qrPayload,
        qrImageUrl: `/s/${s.id}/qr.svg`,
      }),
    ]
  }
  if (s.status === 'active' && s.amount !== null) {
    return [
      200,
      payPage({
        ...base,
        amount: s.amount,
        description: s.description,
        installmentEnabled: s.installmentEnabled,
        saveCardAvailable: s.customerId !== null,
      }),
    ]
  }
  const kind =
    s.status === 'completed'
      ? s.mode === 'card_update_only'
        ? 'card_updated'
        : 'completed'
      : s.status === 'cancelled'
        ? 'cancelled'
        : 'expired'
  const action = v.redirectUrl
    ? { href: v.redirectUrl, label: t(lang, 'return_to', { merchant: v.merchantName }) }
    : undefined
  return [
    s.status === 'completed' ? 200 : 410,
    noticePage({
      lang,
      langHrefs: base.langHrefs,
      sandbox: base.sandbox,
      tone: s.status === 'completed' ? 'success' : 'info',
      title: t(lang, `${kind}_title`),
      body: t(lang, `${kind}_body`, { merchant: v.merchantName }),
      ...(action ? { action } : {}),
    }),
  ]
}

export interface CheckoutPagesOptions {
  /** The per-IP limiter of the public context: the pages share its budget. */
  rateLimiter: RateLimiter
}

/** The hosted pages' context: register it on its own (it sets hooks and an error handler). */
export function checkoutPagesRoutes(deps: Deps, options: CheckoutPagesOptions): FastifyPluginAsync {
  return async (plain) => {
    const app = plain.withTypeProvider<TypeBoxTypeProvider>()
    await app.register(
      htmlContext,
      buyerContext({
        name: 'checkout',
        env: deps.config.env,
        rateLimiter: options.rateLimiter,
        assets: hostedAssets,
        // The ACS form posts urlencoded (a plain HTML form, so it works without our script).
        form: {
          bodyLimit: FORM_BODY_BYTES_MAX,
          parse: (text) => Object.fromEntries(new URLSearchParams(text)),
        },
        conflict: { title: 'acs_done_title', body: 'acs_done_body' },
      }),
    )

    app.get(
      '/s/:sessionId',
      { schema: { hide: true, params: SessionPageParams } },
      async (request, reply) => {
        const view = await getCheckout(deps, request.params.sessionId)
        const [status, body] = sessionPage(deps, request, view)
        return sendHtml(reply, status, body)
      },
    )

    app.get(
      '/s/:sessionId/qr.svg',
      { schema: { hide: true, params: SessionPageParams } },
      async (request, reply) => {
        const view = await getCheckout(deps, request.params.sessionId)
        if (!view.qrPayload) {
          throw notFound('page')
        }
        // Loaded at the first QR code drawn (docs/performance.md, "Round 3, part 3: memory").
        const { default: QRCode } = await import('qrcode')
        const svg = await QRCode.toString(view.qrPayload, {
          type: 'svg',
          errorCorrectionLevel: 'M',
          margin: 2,
          color: { dark: '#0f172a', light: '#ffffff' },
        })
        return reply.type('image/svg+xml').send(svg)
      },
    )

    app.get(
      '/s/:sessionId/3ds-complete',
      {
        // The query carries the ACS's signed pares: keep this URL out of the request log.
        logLevel: 'warn',
        schema: { hide: true, params: SessionPageParams, querystring: ThreeDsCompleteQuery },
      },
      async (request, reply) => {
        const r = await finishChallenge(deps, request.params.sessionId, request.query)
        const lang = langOf(request)
        const tone =
          r.status === 'captured' ? 'success' : r.status === 'failed' ? 'failure' : 'pending'
        const title =
          tone === 'success'
            ? t(lang, 'success_title')
            : tone === 'failure'
              ? t(lang, 'result_failed_title')
              : t(lang, 'result_pending_title')
        const body =
          tone === 'failure'
            ? t(
                lang,
                r.declineCode === 'authentication_failed'
                  ? 'decline_authentication_failed'
                  : 'decline_generic',
              )
            : t(lang, 'redirecting', { merchant: r.merchantName })
        return sendHtml(
          reply,
          200,
          noticePage({
            lang,
            langHrefs: langHrefs(request),
            sandbox: deps.config.env === 'demo',
            tone,
            title,
            body,
            merchantName: r.merchantName,
            ...(r.session.amount === null ? {} : { amount: r.session.amount }),
            action: {
              href: r.redirectUrl,
              label: t(lang, 'return_to', { merchant: r.merchantName }),
            },
            autoRedirectMs: tone === 'failure' ? RETURN_DELAY_MS.failure : RETURN_DELAY_MS.success,
          }),
        )
      },
    )

    // Kuruş.js (docs/kurus-js.md): the script the merchant's page loads, and the card fields
    // page it frames, which only the store's allowed origins may frame.
    for (const [file, type] of [
      ['kurus.js', 'application/javascript; charset=utf-8'],
      ['fields.js', 'application/javascript; charset=utf-8'],
      ['fields.css', 'text/css; charset=utf-8'],
    ] as const) {
      app.get(`/js/v1/${file}`, { schema: { hide: true } }, async (_request, reply) =>
        reply
          .type(type)
          // Loaded by pages of other origins (<script src>): not same-origin only.
          .header('cross-origin-resource-policy', 'cross-origin')
          .header('cache-control', 'public, max-age=300')
          .send(kurusJsAsset(file)),
      )
    }

    app.get(
      '/js/v1/fields',
      { schema: { hide: true, querystring: FieldsQuery } },
      async (request, reply) => {
        const lang = langOf(request)
        const origins = await browserFieldOrigins(deps, request.query.key)
        if (origins.length === 0) {
          return sendHtml(reply, 403, fieldsUnavailablePage(lang))
        }
        void reply.header(
          'content-security-policy',
          contentSecurityPolicy({ frameAncestors: origins }),
        )
        return sendHtml(reply, 200, cardFieldsPage(lang))
      },
    )

    app.get(
      '/3ds/:paymentId',
      { schema: { hide: true, params: AcsParams, querystring: AcsQuery } },
      async (request, reply) => {
        const c = await getChallenge(deps, request.params.paymentId, request.query.correlationId)
        const lang = langOf(request)
        const common = { lang, langHrefs: langHrefs(request), sandbox: deps.config.env === 'demo' }
        if (!c.open) {
          return sendHtml(
            reply,
            409,
            noticePage({
              ...common,
              tone: 'info',
              title: t(lang, 'acs_done_title'),
              body: t(lang, 'acs_done_body'),
              variant: 'bank',
            }),
          )
        }
        // The challenge is at a bank POS: its 3D gate, posted to by the buyer's browser; the
        // bank posts back to our callback below (on success and on failure alike).
        const callbackUrl = `${publicOrigin(deps, request)}/3ds/${encodeURIComponent(c.paymentId)}/bank?correlationId=${encodeURIComponent(c.correlationId)}`
        const gate = await getBankGate(deps, c.paymentId, c.correlationId, callbackUrl)
        if (gate) {
          void reply.header(
            'content-security-policy',
            contentSecurityPolicy({
              formActionExtra: new URL(gate.action).origin,
              ...(c.returnOrigin ? { frameAncestors: [c.returnOrigin] } : {}),
            }),
          )
          return sendHtml(
            reply,
            200,
            bankGatePage({
              ...common,
              action: gate.action,
              fields: gate.fields,
              merchantName: c.merchantName,
              amount: c.amount,
            }),
          )
        }
        if (c.returnOrigin) {
          // A direct API charge's challenge may open in Kuruş.js's modal on the merchant's
          // page: the origin of the session's returnUrl (set by the merchant's server), where
          // the bank sends the buyer back, may frame it.
          void reply.header(
            'content-security-policy',
            contentSecurityPolicy({
              formActionExtra: c.returnOrigin,
              frameAncestors: [c.returnOrigin],
            }),
          )
        }
        return sendHtml(
          reply,
          200,
          acsPage({
            ...common,
            action: `/3ds/${encodeURIComponent(c.paymentId)}`,
            correlationId: c.correlationId,
            merchantName: c.merchantName,
            amount: c.amount,
            cardMask: c.cardMask,
          }),
        )
      },
    )

    app.post(
      '/3ds/:paymentId/bank',
      {
        // The bank's post back carries its authentication data: kept out of the request log.
        logLevel: 'warn',
        schema: { hide: true, params: AcsParams, querystring: AcsQuery, body: BankCallbackForm },
      },
      async (request, reply) => {
        const { redirectUrl } = await submitBankCallback(
          deps,
          request.params.paymentId,
          request.query.correlationId,
          request.body,
        )
        return reply.code(303).header('location', redirectUrl).send()
      },
    )

    app.post(
      '/3ds/:paymentId',
      { schema: { hide: true, params: AcsParams, body: AcsForm } },
      async (request, reply) => {
        const { redirectUrl } = await submitChallenge(deps, request.params.paymentId, request.body)
        return reply.code(303).header('location', redirectUrl).send()
      },
    )
  }
}
