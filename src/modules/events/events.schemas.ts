import { Type } from 'typebox'
import { Timestamp } from '../../platform/http/schemas.ts'

export const EventView = Type.Object(
  {
    id: Type.String({ examples: ['evt_3k9x…'] }),
    type: Type.String({ examples: ['payment.captured'] }),
    resourceType: Type.String({ examples: ['payment'] }),
    resourceId: Type.String(),
    sequence: Type.Integer({
      minimum: 1,
      description: 'Per-resource order: 1, 2, 3… for the events of one resourceId.',
    }),
    createdAt: Timestamp,
    data: Type.Record(Type.String(), Type.Unknown()),
  },
  { title: 'WebhookEvent' },
)

export const EventParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) })

export const EventListQuery = Type.Object(
  {
    type: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    resourceId: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
    limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
    cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 2048 })),
  },
  { additionalProperties: false },
)

export const EventList = Type.Object(
  {
    items: Type.Array(EventView),
    nextCursor: Type.Union([Type.String(), Type.Null()]),
  },
  { title: 'EventList' },
)
