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
  {
    title: 'WebhookEvent',
    examples: [
      {
        id: 'evt_01jd8x5r0a1b2c3d4e5f6g7h8j',
        type: 'payment.captured',
        resourceType: 'payment',
        resourceId: 'pay_01jd8x5q2m4k7r9t1v3w5y7z9a',
        sequence: 2,
        createdAt: '2026-11-22T10:00:05Z',
        data: { paymentId: 'pay_01jd8x5q2m4k7r9t1v3w5y7z9a', amount: 15000, currency: 'TRY' },
      },
    ],
  },
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
