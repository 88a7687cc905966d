import type { FastifyPluginAsync } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { Deps } from '../../database.ts'
import { authOf } from '../../platform/http/auth.ts'
import { ErrorEnvelope, errorResponses, isoZ } from '../../platform/http/schemas.ts'
import { payQrSession } from '../payments/index.ts'
import {
  CardUpdateBody,
  CardUpdateResponse,
  EmptyBody,
  BrowserTokenBody,
  BrowserTokenResponse,
  InstallmentsQuery,
  PayBody,
  PayResponse,
  PublicInstallments,
  PublicSession,
  QrPayResponse,
  SessionParams,
} from './checkout.schemas.ts'
import {
  createBrowserToken,
  getCheckout,
  payCheckout,
  quoteCheckoutInstallments,
  updateCheckoutCard,
  type CheckoutView,
} from './checkout.service.ts'

const tags = ['checkout']
const publicErrors = {
  400: ErrorEnvelope,
  404: ErrorEnvelope,
  409: ErrorEnvelope,
  429: ErrorEnvelope,
}

function publicSessionJson(v: CheckoutView) {
  const s = v.session
  return {
    sessionId: s.id,
    mode: s.mode,
    status: s.status,
    merchantName: v.merchantName,
    amount: s.amount,
    currency: s.currency,
    description: s.description,
    expiresAt: isoZ(s.expiresAt),
    installmentEnabled: s.installmentEnabled,
    saveCardAvailable: s.mode === 'payment' && s.customerId !== null,
    qrPayload: v.qrPayload,
    paymentId: v.payment?.id ?? null,
    paymentStatus: v.payment?.status ?? null,
    redirectUrl: v.redirectUrl,
  }
}

/**
 * The hosted checkout's browser API (public context: no signature, the session id is the
 * bearer, rate-limited per IP). Responses are never cached: they carry live state.
 */
export function checkoutPublicRoutes(deps: Deps): FastifyPluginAsync {
  return async (plain) => {
    const app = plain.withTypeProvider<TypeBoxTypeProvider>()
    app.addHook('onSend', async (_request, reply, payload) => {
      void reply.header('cache-control', 'no-store')
      return payload
    })

    app.get(
      '/v1/public/sessions/:id',
      {
        schema: {
          operationId: 'public.sessions.get',
          tags,
          summary: 'A checkout session as the buyer sees it (no signature; the id is the bearer)',
          description:
            "What the checkout page shows: mode, status, the merchant's name, amount, currency, description, expiry, whether installments are offered, the QR payload of an active `qr` session, and the payment made so far with the `redirectUrl` back to the merchant. No signature; the session id (a UUID) is the bearer. 404 SVC-RES-3301 for an unknown id.",
          security: [],
          params: SessionParams,
          response: { 200: PublicSession, 404: ErrorEnvelope, 429: ErrorEnvelope },
        },
      },
      async (request) => publicSessionJson(await getCheckout(deps, request.params.id)),
    )

    app.get(
      '/v1/public/sessions/:id/installments',
      {
        // The query holds the card's first digits: keep this URL out of the request log.
        logLevel: 'warn',
        schema: {
          operationId: 'public.sessions.installments',
          tags,
          summary: "Installment plans for the card's BIN, in buyer terms",
          description:
            "For the card's `bin` on an active payment session: the installment counts the buyer may choose, each with the amount per installment and the total, in buyer terms. No signature; the session id is the bearer. A session that is not an active payment session is 409 SVC-STATE-3401.",
          security: [],
          params: SessionParams,
          querystring: InstallmentsQuery,
          response: { 200: PublicInstallments, ...publicErrors },
        },
      },
      async (request) => quoteCheckoutInstallments(deps, request.params.id, request.query.bin),
    )

    app.post(
      '/v1/public/sessions/:id/pay',
      {
        schema: {
          operationId: 'public.sessions.pay',
          tags,
          summary: 'Pay a payment session by card (tokenize, charge with 3DS)',
          description:
            '201 captured or pending_3ds (follow challengeUrl); 202 outcome pending; 402 declined ' +
            '(SVC-PAY-3501 with paymentId and declineCode; the session stays open for another card). ' +
            "The merchant's risk rules and block lists apply; a block reads as a plain decline (docs/risk.md).",
          security: [],
          params: SessionParams,
          body: PayBody,
          response: {
            201: PayResponse,
            202: PayResponse,
            ...publicErrors,
            402: ErrorEnvelope,
            403: ErrorEnvelope,
          },
        },
      },
      async (request, reply) => {
        const out = await payCheckout(deps, request.params.id, request.body, request.ip)
        return reply.code(out.status === 'pending' ? 202 : 201).send(out)
      },
    )

    app.post(
      '/v1/public/tokens',
      {
        schema: {
          operationId: 'public.tokens.create',
          tags,
          summary: "A single-use card token from the buyer's browser (Kuruş.js)",
          description:
            "Called by Kuruş.js's card fields (an iframe on the checkout origin, mounted in the " +
            "merchant's page): the publishable key names the store, and the merchant page's " +
            "origin must be one of the store's allowed origins (PUT " +
            "/v1/stores/{id}/allowed-origins). Answers a `tok_…` the merchant's server charges " +
            'once, within 15 minutes, with POST /v1/payments/card (`cardToken`). Limited per ' +
            'client IP like the hosted checkout (429 SVC-GW-1004). No signature: the card never ' +
            "reaches the merchant's page or server.",
          security: [],
          body: BrowserTokenBody,
          response: {
            201: BrowserTokenResponse,
            ...publicErrors,
            401: ErrorEnvelope,
            403: ErrorEnvelope,
          },
        },
      },
      async (request, reply) => {
        const origin = request.headers.origin
        const { token, expiresAt } = await createBrowserToken(deps, request.body, {
          ip: request.ip,
          origin: typeof origin === 'string' ? origin : undefined,
          selfOrigin: `${request.protocol}://${request.host}`,
        })
        return reply.code(201).send({
          token: token.cardToken,
          expiresAt: isoZ(expiresAt),
          card: {
            brand: token.brand,
            last4: token.last4,
            expMonth: token.expMonth,
            expYear: token.expYear,
          },
        })
      },
    )

    app.post(
      '/v1/public/sessions/:id/card',
      {
        schema: {
          operationId: 'public.sessions.saveCard',
          tags,
          summary: "Save the buyer's card as the customer's default (card_update_only sessions)",
          description:
            "On an active `card_update_only` session: tokenizes the card, attaches it as the customer's default and completes the session; answers the card's brand, last 4 digits and expiry and the `redirectUrl` back to the merchant. No signature; the session id is the bearer. Tokenizations are limited per client IP (429 SVC-GW-1004); another mode or a session no longer active is 409 SVC-STATE-3401; invalid card details are 400 SVC-VAL-3001.",
          security: [],
          params: SessionParams,
          body: CardUpdateBody,
          response: { 201: CardUpdateResponse, ...publicErrors },
        },
      },
      async (request, reply) => {
        const out = await updateCheckoutCard(deps, request.params.id, request.body, request.ip)
        return reply.code(201).send({
          sessionId: out.session.id,
          status: 'card_updated' as const,
          redirectUrl: out.redirectUrl,
          card: {
            brand: out.card.brand,
            last4: out.card.last4,
            expMonth: out.card.expMonth,
            expYear: out.card.expYear,
          },
        })
      },
    )
  }
}

/** Sandbox helpers (demo only, signed by the merchant's key). */
export function checkoutSandboxRoutes(deps: Deps): FastifyPluginAsync {
  return async (plain) => {
    const app = plain.withTypeProvider<TypeBoxTypeProvider>()
    app.post(
      '/v1/sandbox/sessions/:id/qr-pay',
      {
        config: { requireKyc: true },
        schema: {
          operationId: 'sandbox.sessions.qrPay',
          tags: ['sandbox'],
          summary: "Play the buyer's bank paying a qr session",
          description:
            "Sandbox only. Plays the buyer's banking app paying an active `qr` session: a captured `qr` payment (201), or the payment it already made (200). A session of another mode or no longer active is 409 SVC-STATE-3401; 404 SVC-RES-3301 for an unknown or another merchant's session. Needs KYC `approved`.",
          params: SessionParams,
          body: EmptyBody,
          response: { 200: QrPayResponse, 201: QrPayResponse, ...errorResponses },
        },
      },
      async (request, reply) => {
        const { payment: p, created } = await payQrSession(
          deps,
          authOf(request).merchantId,
          request.params.id,
        )
        return reply.code(created ? 201 : 200).send({
          paymentId: p.id,
          sessionId: request.params.id,
          method: p.method,
          status: p.status,
          amount: p.amount,
          currency: p.currency,
          commission: p.commission,
          netAmount: p.netAmount,
          completedAt: isoZ(p.completedAt),
        })
      },
    )
  }
}
