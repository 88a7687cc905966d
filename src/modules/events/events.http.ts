import type { FastifyPluginAsync } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { Deps } from '../../database.ts'
import { authOf } from '../../platform/http/auth.ts'
import { errorResponses } from '../../platform/http/schemas.ts'
import { EventList, EventListQuery, EventParams, EventView } from './events.schemas.ts'
import { getEvent, listEvents, type DomainEvent } from './events.service.ts'

function eventJson(e: DomainEvent) {
  return {
    id: e.id,
    type: e.type,
    resourceType: e.resourceType,
    resourceId: e.resourceId,
    sequence: e.sequence,
    createdAt: e.createdAt.toISOString(),
    data: e.data,
  }
}

/** Signed routes, merchant keys only: the outbox as a feed (catch up after missed webhooks). */
export function eventsRoutes(deps: Deps): FastifyPluginAsync {
  return async (plain) => {
    const app = plain.withTypeProvider<TypeBoxTypeProvider>()

    app.get(
      '/v1/events',
      {
        schema: {
          operationId: 'events.list',
          tags: ['events'],
          summary: "The merchant's events, newest first",
          description:
            'The events recorded for the merchant — the feed webhooks deliver from — newest first, in pages of `limit` (at most 100) with a keyset `nextCursor`; `type` filters on one event type (e.g. `payment.captured`).',
          querystring: EventListQuery,
          response: { 200: EventList, ...errorResponses },
        },
      },
      async (request) => {
        const q = request.query
        const page = await listEvents(deps, authOf(request).merchantId, {
          limit: q.limit,
          ...(q.type !== undefined ? { type: q.type } : {}),
          ...(q.resourceId !== undefined ? { resourceId: q.resourceId } : {}),
          ...(q.cursor !== undefined ? { cursor: q.cursor } : {}),
        })
        return { items: page.items.map(eventJson), nextCursor: page.nextCursor }
      },
    )

    app.get(
      '/v1/events/:id',
      {
        schema: {
          operationId: 'events.get',
          tags: ['events'],
          summary: 'One event',
          description:
            "One event with its `data`, as webhooks deliver it; 404 SVC-RES-3301 for an unknown or another merchant's event.",
          params: EventParams,
          response: { 200: EventView, ...errorResponses },
        },
      },
      async (request) =>
        eventJson(await getEvent(deps, authOf(request).merchantId, request.params.id)),
    )
  }
}
