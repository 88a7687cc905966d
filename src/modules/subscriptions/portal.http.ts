import type { FastifyPluginAsync } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { Deps } from '../../database.ts'
import { ErrorEnvelope, isoZ } from '../../platform/http/schemas.ts'
import { cancelFromPortal, getPortalView, mintUpdateCardSession } from './portal.service.ts'
import {
  EmptyBody,
  HashParams,
  PortalCancelBody,
  PortalCancelResponse,
  PortalView,
  UpdateCardSession,
} from './subscriptions.schemas.ts'

// The buyer portal's routes: the public context, beside the merchant's (subscriptions.http.ts).

const tags = ['subscriptions']

const publicErrors = {
  400: ErrorEnvelope,
  404: ErrorEnvelope,
  409: ErrorEnvelope,
  429: ErrorEnvelope,
}

/**
 * The buyer portal's API (public context: no signature, the publicHash is the bearer,
 * rate-limited per IP). Responses carry live state and are never cached.
 */
export function subscriptionsPublicRoutes(deps: Deps): FastifyPluginAsync {
  return async (plain) => {
    const app = plain.withTypeProvider<TypeBoxTypeProvider>()
    app.addHook('onSend', async (_request, reply, payload) => {
      void reply.header('cache-control', 'no-store')
      return payload
    })

    app.get(
      '/v1/public/subscriptions/:hash',
      {
        schema: {
          operationId: 'public.subscriptions.get',
          tags,
          summary: 'The subscription as its buyer sees it (no signature; the hash is the bearer)',
          description:
            "For the buyer's portal page: the merchant's name and the subscription (status, plan, period, card); no signature, the public hash is the bearer. A card update finished on the checkout page is taken in first. 404 SVC-RES-3301 for an unknown hash.",
          security: [],
          params: HashParams,
          response: { 200: PortalView, ...publicErrors },
        },
      },
      async (request) => {
        const v = await getPortalView(deps, request.params.hash)
        const s = v.subscription
        return {
          publicHash: v.publicHash,
          merchantName: v.merchantName,
          status: s.status,
          amountMinor: s.amountMinor,
          currency: s.currency,
          intervalCount: s.intervalCount,
          intervalUnit: s.intervalUnit,
          cardLast4: s.cardLast4,
          cardBrand: s.cardBrand,
          nextChargeAt: isoZ(s.nextChargeAt),
          cancelAtPeriodEnd: s.cancelAtPeriodEnd,
        }
      },
    )

    app.post(
      '/v1/public/subscriptions/:hash/cancel',
      {
        schema: {
          operationId: 'public.subscriptions.cancel',
          tags,
          summary: 'The buyer cancels (at the end of the paid period unless atPeriodEnd is false)',
          description:
            'The buyer cancels from the portal: at the end of the paid period (`subscription.cancel_scheduled`), or now with `atPeriodEnd: false` (`subscription.cancelled`). No signature; the public hash is the bearer. An expired subscription is 409 SVC-STATE-3401.',
          security: [],
          params: HashParams,
          body: PortalCancelBody,
          response: { 200: PortalCancelResponse, ...publicErrors },
        },
      },
      async (request) => {
        const s = await cancelFromPortal(
          deps,
          request.params.hash,
          request.body.atPeriodEnd ?? true,
        )
        return {
          publicHash: request.params.hash,
          status: s.status,
          cancelAtPeriodEnd: s.cancelAtPeriodEnd,
        }
      },
    )

    app.post(
      '/v1/public/subscriptions/:hash/update-card-session',
      {
        schema: {
          operationId: 'public.subscriptions.createCardUpdateSession',
          tags,
          summary: 'A card_update_only checkout session for the buyer to enter a new card',
          description:
            "Returns the `card_update_only` checkout session where the buyer enters a new card for the subscription; while one is active the same session is handed out again, and its card becomes the subscription's when it finishes. No signature; the public hash is the bearer. A cancelled or expired subscription is 409 SVC-STATE-3401.",
          security: [],
          params: HashParams,
          body: EmptyBody,
          response: { 200: UpdateCardSession, ...publicErrors },
        },
      },
      async (request) => {
        const session = await mintUpdateCardSession(deps, request.params.hash)
        return {
          sessionId: session.id,
          checkoutUrl: `${deps.config.checkoutUrl}/s/${session.id}`,
          expiresAt: isoZ(session.expiresAt),
        }
      },
    )
  }
}
