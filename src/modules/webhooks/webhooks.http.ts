import type { FastifyPluginAsync } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import type { Deps } from '../../database.ts'
import { errorResponses, isoZ } from '../../platform/http/schemas.ts'
import { dashboardAuthOf } from '../../platform/http/dashboard-auth.ts'
import {
  CallbackSecret,
  CreateEndpointBody,
  CreatedEndpoint,
  DeliveryList,
  DeliveryListQuery,
  DeliveryParams,
  DeliveryView,
  EmptyBody,
  EndpointList,
  EndpointParams,
  EndpointView,
  RotatedSecret,
  StoreParams,
} from './webhooks.schemas.ts'
import {
  createEndpoint,
  deleteEndpoint,
  enableEndpoint,
  getCallbackSecret,
  listDeliveries,
  listEndpoints,
  redeliver,
  rotateEndpointSecret,
  type Delivery,
  type Endpoint,
} from './webhooks.service.ts'

const security = [{ dashboardToken: [] }]
const tags = ['webhooks']

function endpointJson(e: Endpoint) {
  return {
    id: e.id,
    storeId: e.storeId,
    url: e.url,
    events: e.events,
    // A deleted endpoint is never listed or returned.
    status: e.status === 'enabled' ? ('enabled' as const) : ('disabled' as const),
    disabledAt: isoZ(e.disabledAt),
    previousSecretExpiresAt: isoZ(e.previousSecretExpiresAt),
    createdAt: isoZ(e.createdAt),
  }
}

function deliveryJson(d: Delivery) {
  return {
    id: d.id,
    eventId: d.eventId,
    eventType: d.eventType,
    endpointId: d.endpointId,
    url: d.url,
    status: d.status,
    attemptCount: d.attemptCount,
    nextAttemptAt: isoZ(d.nextAttemptAt),
    lastAttemptAt: isoZ(d.lastAttemptAt),
    lastStatusCode: d.lastStatusCode,
    lastError: d.lastError,
    deliveredAt: isoZ(d.deliveredAt),
    createdAt: isoZ(d.createdAt),
  }
}

/** Dashboard routes (JWT): a store's webhook endpoints and its delivery log. */
export function webhooksDashboardRoutes(deps: Deps): FastifyPluginAsync {
  return async (plain) => {
    const app = plain.withTypeProvider<TypeBoxTypeProvider>()

    app.post(
      '/v1/stores/:storeId/webhooks',
      {
        schema: {
          operationId: 'webhooks.endpoints.create',
          tags,
          summary: 'Add a webhook endpoint; its signing secret is shown once',
          description:
            'An endpoint of the store for `events` (exact types; all events when left out); its `whsec_…` signing secret is in this answer only. The URL must be `http(s)` and every address its host resolves to public (in the sandbox a loopback receiver such as `http://127.0.0.1` is allowed): anything else is 400 SVC-VAL-3001, as are unknown event types and a 17th endpoint. Owner, admin or developer role.',
          security,
          params: StoreParams,
          body: CreateEndpointBody,
          response: { 201: CreatedEndpoint, ...errorResponses },
        },
      },
      async (request, reply) => {
        const { merchantId } = dashboardAuthOf(request)
        const { url, events } = request.body
        const created = await createEndpoint(deps, merchantId, request.params.storeId, {
          url,
          ...(events !== undefined ? { events } : {}),
        })
        return reply.code(201).send({ ...endpointJson(created), secret: created.secret })
      },
    )

    app.get(
      '/v1/stores/:storeId/webhooks',
      {
        schema: {
          operationId: 'webhooks.endpoints.list',
          tags,
          summary: "The store's webhook endpoints (secrets are never listed)",
          description:
            "The store's endpoints that are not deleted, with their URL, event types, status (`enabled` or `disabled` after 3 days of failures) and, during a rotation, when the previous secret stops signing. Any role may read; 404 SVC-RES-3301 for another merchant's store.",
          security,
          params: StoreParams,
          response: { 200: EndpointList, ...errorResponses },
        },
      },
      async (request) => {
        const { merchantId } = dashboardAuthOf(request)
        const items = await listEndpoints(deps, merchantId, request.params.storeId)
        return { items: items.map(endpointJson) }
      },
    )

    app.get(
      '/v1/stores/:storeId/webhooks/callback-secret',
      {
        schema: {
          operationId: 'webhooks.callbackSecret.get',
          tags,
          summary: "The secret that signs deliveries to sessions' callbackUrl",
          description:
            "The store's secret that signs deliveries to a checkout session's `callbackUrl` (Standard Webhooks headers, as endpoint deliveries). As sensitive as rotating it: owner, admin or developer role (else 403 SVC-AUTH-3201).",
          security,
          params: StoreParams,
          response: { 200: CallbackSecret, ...errorResponses },
        },
      },
      async (request) => {
        const { merchantId } = dashboardAuthOf(request)
        return { secret: await getCallbackSecret(deps, merchantId, request.params.storeId) }
      },
    )

    app.delete(
      '/v1/stores/:storeId/webhooks/:id',
      {
        schema: {
          operationId: 'webhooks.endpoints.delete',
          tags,
          summary: 'Delete an endpoint; its pending deliveries end failed',
          description:
            'The endpoint gets no more deliveries and its pending ones end `failed`; it is no longer listed. 404 SVC-RES-3301 for an unknown endpoint. Owner, admin or developer role.',
          security,
          params: EndpointParams,
          response: { 204: Type.Null(), ...errorResponses },
        },
      },
      async (request, reply) => {
        const { merchantId } = dashboardAuthOf(request)
        await deleteEndpoint(deps, merchantId, request.params.storeId, request.params.id)
        return reply.code(204).send(null)
      },
    )

    app.post(
      '/v1/stores/:storeId/webhooks/:id/rotate-secret',
      {
        schema: {
          operationId: 'webhooks.endpoints.rotateSecret',
          tags,
          summary: 'New signing secret (shown once); the old one also signs for 24 h',
          description:
            'A new signing secret, in this answer only. For 24 hours each delivery carries signatures with both the new and the previous secret, so the receiver can switch without rejecting anything; a second rotation within that window drops the oldest. 404 SVC-RES-3301 for an unknown endpoint.',
          security,
          params: EndpointParams,
          body: EmptyBody,
          response: { 200: RotatedSecret, ...errorResponses },
        },
      },
      async (request) => {
        const { merchantId } = dashboardAuthOf(request)
        const { storeId, id } = request.params
        const rotated = await rotateEndpointSecret(deps, merchantId, storeId, id)
        return { ...rotated, previousSecretExpiresAt: isoZ(rotated.previousSecretExpiresAt) }
      },
    )

    app.post(
      '/v1/stores/:storeId/webhooks/:id/enable',
      {
        schema: {
          operationId: 'webhooks.endpoints.enable',
          tags,
          summary: 'Re-enable an endpoint disabled after 3 days of failures',
          description:
            'An endpoint disabled after 3 days of failed deliveries becomes `enabled` again with a fresh failure streak; new events are delivered to it (redeliver older ones with `POST …/deliveries/{id}/redeliver`). 404 SVC-RES-3301 for an unknown endpoint.',
          security,
          params: EndpointParams,
          body: EmptyBody,
          response: { 200: EndpointView, ...errorResponses },
        },
      },
      async (request) => {
        const { merchantId } = dashboardAuthOf(request)
        const { storeId, id } = request.params
        return endpointJson(await enableEndpoint(deps, merchantId, storeId, id))
      },
    )

    app.get(
      '/v1/stores/:storeId/webhooks/deliveries',
      {
        schema: {
          operationId: 'webhooks.deliveries.list',
          tags,
          summary: "The store's webhook deliveries, newest first",
          description:
            "Each delivery's event, endpoint, URL, status, attempts and the receiver's last answer, newest first, in pages of `limit` (at most 100) with a keyset `nextCursor`; filters `status`, `eventType`, `endpointId`, `eventId`. Any role may read.",
          security,
          params: StoreParams,
          querystring: DeliveryListQuery,
          response: { 200: DeliveryList, ...errorResponses },
        },
      },
      async (request) => {
        const { merchantId } = dashboardAuthOf(request)
        const q = request.query
        const page = await listDeliveries(deps, merchantId, request.params.storeId, {
          limit: q.limit,
          ...(q.status !== undefined ? { status: q.status } : {}),
          ...(q.eventType !== undefined ? { eventType: q.eventType } : {}),
          ...(q.endpointId !== undefined ? { endpointId: q.endpointId } : {}),
          ...(q.eventId !== undefined ? { eventId: q.eventId } : {}),
          ...(q.cursor !== undefined ? { cursor: q.cursor } : {}),
        })
        return { items: page.items.map(deliveryJson), nextCursor: page.nextCursor }
      },
    )

    app.post(
      '/v1/stores/:storeId/webhooks/deliveries/:id/redeliver',
      {
        schema: {
          operationId: 'webhooks.deliveries.redeliver',
          tags,
          summary: 'Send a delivery again now (same webhook-id), with a fresh retry window',
          description:
            'Queues the delivery to be sent again now (202), with the same `webhook-id` so a receiver that deduplicates sees a repeat, and a fresh retry window. Its endpoint must be enabled (409 SVC-STATE-3401 when disabled or deleted); 404 SVC-RES-3301 for an unknown delivery.',
          security,
          params: DeliveryParams,
          body: EmptyBody,
          response: { 202: DeliveryView, ...errorResponses },
        },
      },
      async (request, reply) => {
        const { merchantId } = dashboardAuthOf(request)
        const { storeId, id } = request.params
        // The dashboard API keeps no idempotency records: the delivery keeps the key.
        const key = request.headers['idempotency-key']
        const delivery = await redeliver(
          deps,
          merchantId,
          storeId,
          id,
          typeof key === 'string' ? key : undefined,
        )
        return reply.code(202).send(deliveryJson(delivery))
      },
    )
  }
}
