import type { FastifyPluginAsync } from 'fastify'
import { Type } from 'typebox'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { Deps } from '../../database.ts'
import { authOf } from '../../platform/http/auth.ts'
import { ErrorEnvelope, errorResponses, isoZ } from '../../platform/http/schemas.ts'
import { cancelFromPortal, getPortalView, mintUpdateCardSession } from './portal.service.ts'
import { advanceSubscription } from './renewals.service.ts'
import { advanceTestClock, deleteTestClock } from './test-clocks.service.ts'
import {
  createTestClock,
  getTestClock,
  listTestClocks,
  type TestClock,
} from '../test-clocks/index.ts'
import {
  CancelBody,
  CancelResponse,
  ChargeList,
  ChargeNowReceipt,
  ChargesQuery,
  CreatedSubscription,
  CreateSubscriptionBody,
  EmptyBody,
  HashParams,
  PortalCancelBody,
  PortalCancelResponse,
  PortalView,
  RetryResponse,
  StatusResponse,
  SubscriptionList,
  SubscriptionListQuery,
  SubscriptionParams,
  SubscriptionSchema,
  UpdateCardSession,
  AdvanceTestClockBody,
  CreateTestClockBody,
  TestClockList,
  TestClockParams,
  TestClockSchema,
} from './subscriptions.schemas.ts'
import {
  cancelSubscription,
  chargeSubscriptionNow,
  createSubscription,
  getSubscription,
  listSubscriptionCharges,
  listSubscriptions,
  pauseSubscription,
  resumeSubscription,
  retrySubscription,
} from './subscriptions.service.ts'
import type { Subscription, SubscriptionCharge } from './subscription-view.ts'

const tags = ['subscriptions']

export function subscriptionJson(s: Subscription) {
  return {
    id: s.id,
    merchantId: s.merchantId,
    storeId: s.storeId,
    customerId: s.customerId,
    status: s.status,
    amountMinor: s.amountMinor,
    currency: s.currency,
    intervalCount: s.intervalCount,
    intervalUnit: s.intervalUnit,
    cycleNumber: s.cycleNumber,
    nextChargeAt: isoZ(s.nextChargeAt),
    cardLast4: s.cardLast4,
    cardBrand: s.cardBrand,
    cancelAtPeriodEnd: s.cancelAtPeriodEnd,
    trialEndAt: isoZ(s.trialEndAt),
    description: s.description,
    generateInvoices: s.generateInvoices,
    metadata: s.metadata,
    failedAttempts: s.failedAttempts,
    cancelledAt: isoZ(s.cancelledAt),
    createdAt: isoZ(s.createdAt),
    testClockId: s.testClockId,
  }
}

function listItemJson(s: Subscription) {
  return {
    id: s.id,
    storeId: s.storeId,
    status: s.status,
    amountMinor: s.amountMinor,
    currency: s.currency,
    intervalCount: s.intervalCount,
    intervalUnit: s.intervalUnit,
    nextChargeAt: isoZ(s.nextChargeAt),
    createdAt: isoZ(s.createdAt),
  }
}

function chargeJson(c: SubscriptionCharge) {
  return {
    cycleNumber: c.cycleNumber,
    paymentId: c.paymentId,
    status: c.status,
    amountMinor: c.amountMinor,
    chargedAt: isoZ(c.chargedAt),
  }
}

function dateOrUndefined(value: string | undefined): Date | undefined {
  return value === undefined ? undefined : new Date(value)
}

/** Signed subscription routes. */
export function subscriptionsRoutes(deps: Deps): FastifyPluginAsync {
  return async (plain) => {
    const app = plain.withTypeProvider<TypeBoxTypeProvider>()

    app.post(
      '/v1/subscriptions',
      {
        config: { requireKyc: true },
        schema: {
          operationId: 'subscriptions.create',
          tags,
          summary: 'Create a subscription on a saved card',
          description:
            'Optional Idempotency-Key. The publicHash (the buyer portal bearer) is returned only here.',
          body: CreateSubscriptionBody,
          response: { 201: CreatedSubscription, ...errorResponses },
        },
      },
      async (request, reply) => {
        const b = request.body
        const { subscription, publicHash } = await createSubscription(
          deps,
          authOf(request).merchantId,
          { ...b, trialEndAt: dateOrUndefined(b.trialEndAt) },
        )
        return reply.code(201).send({ ...subscriptionJson(subscription), publicHash })
      },
    )

    app.get(
      '/v1/subscriptions',
      {
        schema: {
          operationId: 'subscriptions.list',
          tags,
          summary: "List the merchant's subscriptions, newest first",
          querystring: SubscriptionListQuery,
          response: { 200: SubscriptionList, ...errorResponses },
        },
      },
      async (request) => {
        const q = request.query
        const page = await listSubscriptions(deps, authOf(request).merchantId, {
          ...q,
          from: dateOrUndefined(q.from),
          to: dateOrUndefined(q.to),
        })
        return { items: page.items.map(listItemJson), nextCursor: page.nextCursor }
      },
    )

    app.get(
      '/v1/subscriptions/:id',
      {
        schema: {
          operationId: 'subscriptions.get',
          tags,
          summary: 'Retrieve a subscription',
          params: SubscriptionParams,
          response: { 200: SubscriptionSchema, ...errorResponses },
        },
      },
      async (request) =>
        subscriptionJson(
          await getSubscription(deps, authOf(request).merchantId, request.params.id),
        ),
    )

    app.get(
      '/v1/subscriptions/:id/charges',
      {
        schema: {
          operationId: 'subscriptions.listCharges',
          tags,
          summary: 'The charge history of a subscription, newest first',
          params: SubscriptionParams,
          querystring: ChargesQuery,
          response: { 200: ChargeList, ...errorResponses },
        },
      },
      async (request) => {
        const page = await listSubscriptionCharges(
          deps,
          authOf(request).merchantId,
          request.params.id,
          request.query,
        )
        return { items: page.items.map(chargeJson), nextCursor: page.nextCursor }
      },
    )

    app.post(
      '/v1/subscriptions/:id/cancel',
      {
        schema: {
          operationId: 'subscriptions.cancel',
          tags,
          summary: 'Cancel now, or at the end of the paid period',
          params: SubscriptionParams,
          body: CancelBody,
          response: { 200: CancelResponse, ...errorResponses },
        },
      },
      async (request) => {
        const s = await cancelSubscription(
          deps,
          authOf(request).merchantId,
          request.params.id,
          request.body,
        )
        return { id: s.id, status: s.status, cancelAtPeriodEnd: s.cancelAtPeriodEnd }
      },
    )

    app.post(
      '/v1/subscriptions/:id/pause',
      {
        schema: {
          operationId: 'subscriptions.pause',
          tags,
          summary: 'Pause an active or trialing subscription',
          params: SubscriptionParams,
          body: EmptyBody,
          response: { 200: StatusResponse, ...errorResponses },
        },
      },
      async (request) => {
        const s = await pauseSubscription(deps, authOf(request).merchantId, request.params.id)
        return { id: s.id, status: s.status }
      },
    )

    app.post(
      '/v1/subscriptions/:id/resume',
      {
        config: { requireKyc: true },
        schema: {
          operationId: 'subscriptions.resume',
          tags,
          summary: 'Resume a paused subscription (charged at the next tick)',
          params: SubscriptionParams,
          body: EmptyBody,
          response: { 200: StatusResponse, ...errorResponses },
        },
      },
      async (request) => {
        const s = await resumeSubscription(deps, authOf(request).merchantId, request.params.id)
        return { id: s.id, status: s.status }
      },
    )

    app.post(
      '/v1/subscriptions/:id/retry',
      {
        schema: {
          operationId: 'subscriptions.retry',
          tags,
          summary: 'Retry a past_due subscription at the next tick (a dunning attempt)',
          params: SubscriptionParams,
          body: EmptyBody,
          response: { 200: RetryResponse, ...errorResponses },
        },
      },
      async (request) => {
        const s = await retrySubscription(deps, authOf(request).merchantId, request.params.id)
        return { id: s.id, status: s.status, nextChargeAt: isoZ(s.nextChargeAt) }
      },
    )

    app.post(
      '/v1/subscriptions/:id/charge-now',
      {
        config: { requireKyc: true },
        schema: {
          operationId: 'subscriptions.chargeNow',
          tags,
          summary: 'Charge the next cycle now (queued; poll the subscription)',
          params: SubscriptionParams,
          body: EmptyBody,
          response: { 202: ChargeNowReceipt, ...errorResponses },
        },
      },
      async (request, reply) => {
        const r = await chargeSubscriptionNow(deps, authOf(request).merchantId, request.params.id)
        return reply.code(202).send({
          status: 'queuing' as const,
          subscriptionId: r.subscriptionId,
          expectedAt: isoZ(r.expectedAt),
          checkAt: `/v1/subscriptions/${r.subscriptionId}`,
        })
      },
    )
  }
}

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

/** Sandbox helpers, registered only in `demo`. */
export function subscriptionsSandboxRoutes(deps: Deps): FastifyPluginAsync {
  return async (plain) => {
    const app = plain.withTypeProvider<TypeBoxTypeProvider>()
    app.post(
      '/v1/sandbox/subscriptions/:id/advance',
      {
        config: { requireKyc: true },
        schema: {
          operationId: 'sandbox.subscriptions.advance',
          tags: ['sandbox'],
          summary: 'Jump to the next charge time and run it now',
          params: SubscriptionParams,
          body: EmptyBody,
          response: { 200: SubscriptionSchema, ...errorResponses },
        },
      },
      async (request) => {
        return subscriptionJson(
          await advanceSubscription(deps, authOf(request).merchantId, request.params.id),
        )
      },
    )
    await plain.register(testClockRoutes(deps))
  }
}

function testClockJson(c: TestClock) {
  return {
    id: c.id,
    name: c.name,
    frozenTime: isoZ(c.frozenTime),
    status: c.status,
    createdAt: isoZ(c.createdAt),
  }
}

const NoContent = Type.Null({ description: 'No body' })

/** Sandbox test clocks (docs/decisions/0031-test-clocks.md): demo only, like every sandbox route. */
function testClockRoutes(deps: Deps): FastifyPluginAsync {
  return async (plain) => {
    const app = plain.withTypeProvider<TypeBoxTypeProvider>()
    app.post(
      '/v1/sandbox/test-clocks',
      {
        schema: {
          operationId: 'sandbox.testClocks.create',
          tags: ['sandbox'],
          summary: 'Create a test clock at a frozen time',
          description:
            'Subscriptions created with its testClockId live at its time and renew only when it is advanced.',
          body: CreateTestClockBody,
          response: { 201: TestClockSchema, ...errorResponses },
        },
      },
      async (request, reply) => {
        const b = request.body
        const clock = await createTestClock(deps, authOf(request).merchantId, {
          frozenTime: new Date(b.frozenTime),
          name: b.name,
        })
        return reply.code(201).send(testClockJson(clock))
      },
    )

    app.get(
      '/v1/sandbox/test-clocks',
      {
        schema: {
          operationId: 'sandbox.testClocks.list',
          tags: ['sandbox'],
          summary: "List the merchant's test clocks (at most 100), newest first",
          response: { 200: TestClockList, ...errorResponses },
        },
      },
      async (request) => {
        const items = await listTestClocks(deps, authOf(request).merchantId)
        return { items: items.map(testClockJson) }
      },
    )

    app.get(
      '/v1/sandbox/test-clocks/:id',
      {
        schema: {
          operationId: 'sandbox.testClocks.get',
          tags: ['sandbox'],
          summary: 'Get a test clock',
          params: TestClockParams,
          response: { 200: TestClockSchema, ...errorResponses },
        },
      },
      async (request) =>
        testClockJson(await getTestClock(deps, authOf(request).merchantId, request.params.id)),
    )

    app.delete(
      '/v1/sandbox/test-clocks/:id',
      {
        schema: {
          operationId: 'sandbox.testClocks.delete',
          tags: ['sandbox'],
          summary: 'Delete a test clock and cancel the subscriptions on it',
          params: TestClockParams,
          response: { 204: NoContent, ...errorResponses },
        },
      },
      async (request, reply) => {
        await deleteTestClock(deps, authOf(request).merchantId, request.params.id)
        return reply.code(204).send(null)
      },
    )

    app.post(
      '/v1/sandbox/test-clocks/:id/advance',
      {
        config: { requireKyc: true },
        schema: {
          operationId: 'sandbox.testClocks.advance',
          tags: ['sandbox'],
          summary: 'Advance a test clock, running the renewals and retries that fall due',
          description:
            'Runs every renewal and dunning retry of the subscriptions on the clock that falls due by frozenTime, in order, each at its due time; answers when the clock is ready again.',
          params: TestClockParams,
          body: AdvanceTestClockBody,
          response: { 200: TestClockSchema, ...errorResponses },
        },
      },
      async (request) => {
        const clock = await advanceTestClock(
          deps,
          authOf(request).merchantId,
          request.params.id,
          new Date(request.body.frozenTime),
        )
        return testClockJson(clock)
      },
    )
  }
}
