import type { FastifyPluginAsync } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { Deps } from '../../database.ts'
import { authOf } from '../../platform/http/auth.ts'
import { answerOnce, recordWith } from '../../platform/http/idempotent-answer.ts'
import { errorResponses, isoZ } from '../../platform/http/schemas.ts'
import {
  CancelBody,
  CancelResponse,
  ChargeList,
  ChargeNowReceipt,
  ChargesQuery,
  CreatedSubscription,
  CreateSubscriptionBody,
  EmptyBody,
  RetryResponse,
  StatusResponse,
  SubscriptionList,
  SubscriptionListQuery,
  SubscriptionParams,
  SubscriptionSchema,
} from './subscriptions.schemas.ts'
import { createSubscription } from './create.service.ts'
import { listSubscriptionCharges, listSubscriptions } from './lists.service.ts'
import {
  cancelSubscription,
  chargeSubscriptionNow,
  getSubscription,
  pauseSubscription,
  resumeSubscription,
  retrySubscription,
} from './subscriptions.service.ts'
import type { Subscription, SubscriptionCharge } from './subscription-view.ts'

// The merchant's subscription API (signed). The buyer portal's routes are in portal.http.ts,
// the sandbox's (demo only) in sandbox.http.ts.

const tags = ['subscriptions']

/** The answer of pause and resume (and what their recorded answer holds, decision 0035). */
function statusJson(s: Subscription) {
  return { id: s.id, status: s.status }
}

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
        const port = request.idempotentAnswer
        const json = (made: { subscription: Subscription; publicHash: string }) => ({
          ...subscriptionJson(made.subscription),
          publicHash: made.publicHash,
        })
        return answerOnce(
          reply,
          port,
          () =>
            createSubscription(
              deps,
              authOf(request).merchantId,
              { ...b, trialEndAt: dateOrUndefined(b.trialEndAt) },
              recordWith(port, 201, json),
            ),
          (made) => reply.code(201).send(json(made)),
        )
      },
    )

    app.get(
      '/v1/subscriptions',
      {
        schema: {
          operationId: 'subscriptions.list',
          tags,
          summary: "List the merchant's subscriptions, newest first",
          description:
            "The merchant's subscriptions newest first, in pages of `limit` (at most 100) with a keyset `nextCursor`; filters `storeId`, `customerId`, `status`, `from`/`to` (creation time), sent again with the cursor.",
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
          description:
            "The subscription with its status, amount and interval, current cycle and `nextChargeAt`; 404 SVC-RES-3301 for an unknown or another merchant's subscription.",
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
          description:
            'Every charge attempt of the subscription (renewals and dunning retries, with the payment each made), newest first, in pages of `limit` with a keyset cursor. 404 SVC-RES-3301 for an unknown subscription.',
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
          description:
            '`atPeriodEnd: true` keeps it running to the end of the paid period (`subscription.cancel_scheduled`); otherwise it is `cancelled` now and no further charge is made (`subscription.cancelled`). A cancelled subscription is answered as it is; an expired one, or an immediate cancel while a charge is at the bank, is 409 SVC-STATE-3401.',
          params: SubscriptionParams,
          body: CancelBody,
          response: { 200: CancelResponse, ...errorResponses },
        },
      },
      async (request, reply) => {
        const port = request.idempotentAnswer
        const json = (s: Subscription) => ({
          id: s.id,
          status: s.status,
          cancelAtPeriodEnd: s.cancelAtPeriodEnd,
        })
        return answerOnce(
          reply,
          port,
          () =>
            cancelSubscription(
              deps,
              authOf(request).merchantId,
              request.params.id,
              request.body,
              recordWith(port, 200, json),
            ),
          (s) => reply.send(json(s)),
        )
      },
    )

    app.post(
      '/v1/subscriptions/:id/pause',
      {
        schema: {
          operationId: 'subscriptions.pause',
          tags,
          summary: 'Pause an active or trialing subscription',
          description:
            'An `active` or `trialing` subscription becomes `paused`: no charge is made until it is resumed. Records `subscription.paused`; any other status, or a charge in progress, is 409 SVC-STATE-3401.',
          params: SubscriptionParams,
          body: EmptyBody,
          response: { 200: StatusResponse, ...errorResponses },
        },
      },
      async (request, reply) => {
        const port = request.idempotentAnswer
        return answerOnce(
          reply,
          port,
          () =>
            pauseSubscription(
              deps,
              authOf(request).merchantId,
              request.params.id,
              recordWith(port, 200, statusJson),
            ),
          (s) => reply.send(statusJson(s)),
        )
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
          description:
            'A `paused` subscription becomes active again and is charged at the next renewal tick (`subscription.resumed`); any other status is 409 SVC-STATE-3401. Needs KYC `approved`.',
          params: SubscriptionParams,
          body: EmptyBody,
          response: { 200: StatusResponse, ...errorResponses },
        },
      },
      async (request, reply) => {
        const port = request.idempotentAnswer
        return answerOnce(
          reply,
          port,
          () =>
            resumeSubscription(
              deps,
              authOf(request).merchantId,
              request.params.id,
              recordWith(port, 200, statusJson),
            ),
          (s) => reply.send(statusJson(s)),
        )
      },
    )

    app.post(
      '/v1/subscriptions/:id/retry',
      {
        schema: {
          operationId: 'subscriptions.retry',
          tags,
          summary: 'Retry a past_due subscription at the next tick (a dunning attempt)',
          description:
            "Moves a `past_due` subscription's next attempt to now: the next renewal tick charges its card, and the attempt counts as one of the dunning attempts. Any other status, or a charge in progress, is 409 SVC-STATE-3401.",
          params: SubscriptionParams,
          body: EmptyBody,
          response: { 200: RetryResponse, ...errorResponses },
        },
      },
      async (request, reply) => {
        const port = request.idempotentAnswer
        const json = (s: Subscription) => ({
          id: s.id,
          status: s.status,
          nextChargeAt: isoZ(s.nextChargeAt),
        })
        return answerOnce(
          reply,
          port,
          () =>
            retrySubscription(
              deps,
              authOf(request).merchantId,
              request.params.id,
              recordWith(port, 200, json),
            ),
          (s) => reply.send(json(s)),
        )
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
          description:
            'A retry with the same Idempotency-Key replays the 202 receipt: it never queues a ' +
            'second charge.',
          params: SubscriptionParams,
          body: EmptyBody,
          response: { 202: ChargeNowReceipt, ...errorResponses },
        },
      },
      async (request, reply) => {
        const port = request.idempotentAnswer
        const receiptJson = (r: { subscriptionId: string; expectedAt: Date }) => ({
          status: 'queuing' as const,
          subscriptionId: r.subscriptionId,
          expectedAt: isoZ(r.expectedAt),
          checkAt: `/v1/subscriptions/${r.subscriptionId}`,
        })
        return answerOnce(
          reply,
          port,
          () =>
            chargeSubscriptionNow(
              deps,
              authOf(request).merchantId,
              request.params.id,
              port ? (tx, r) => port.record(tx, 202, receiptJson(r)) : undefined,
            ),
          (r) => reply.code(202).send(receiptJson(r)),
        )
      },
    )
  }
}
