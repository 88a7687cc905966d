import { Type } from 'typebox'
import { Timestamp } from '../../platform/http/schemas.ts'

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) =>
  Type.Union([t, Type.Null()])

const EventType = Type.String({
  minLength: 3,
  maxLength: 64,
  pattern: '^[a-z][a-z0-9_]*(\\.[a-z][a-z0-9_]*)+$',
  examples: ['payment.captured'],
})

export const CreateEndpointBody = Type.Object(
  {
    url: Type.String({
      minLength: 1,
      maxLength: 2048,
      description: 'http(s) receiver; in live it must resolve to a public address',
    }),
    events: Type.Optional(
      Type.Array(EventType, {
        minItems: 1,
        maxItems: 50,
        description: 'Event types to receive; omit for all',
      }),
    ),
  },
  { additionalProperties: false },
)

const EndpointFields = {
  id: Type.String(),
  storeId: Type.String(),
  url: Type.String(),
  events: Nullable(Type.Array(Type.String())),
  status: Type.Union([Type.Literal('enabled'), Type.Literal('disabled')]),
  disabledAt: Nullable(Timestamp),
  previousSecretExpiresAt: Nullable(Timestamp),
  createdAt: Timestamp,
}

export const EndpointView = Type.Object(EndpointFields, { title: 'WebhookEndpoint' })
export const CreatedEndpoint = Type.Object(
  {
    ...EndpointFields,
    secret: Type.String({ description: 'whsec_…; shown once', pattern: '^whsec_' }),
  },
  { title: 'CreatedWebhookEndpoint' },
)
export const EndpointList = Type.Object({ items: Type.Array(EndpointView) })

export const RotatedSecret = Type.Object({
  id: Type.String(),
  secret: Type.String({ description: 'the new whsec_…; shown once' }),
  previousSecretExpiresAt: Timestamp,
})

export const CallbackSecret = Type.Object({
  secret: Type.String({
    description: "signs deliveries to sessions' callbackUrl for this store",
  }),
})

export const StoreParams = Type.Object({ storeId: Type.String({ minLength: 1, maxLength: 64 }) })
export const EndpointParams = Type.Object({
  storeId: Type.String({ minLength: 1, maxLength: 64 }),
  id: Type.String({ minLength: 1, maxLength: 64 }),
})

const DeliveryStatus = Type.Union([
  Type.Literal('pending'),
  Type.Literal('delivered'),
  Type.Literal('failed'),
])

export const DeliveryView = Type.Object(
  {
    id: Type.String(),
    eventId: Type.String({ description: 'also the webhook-id header' }),
    eventType: Type.String(),
    endpointId: Nullable(Type.String({ description: 'null: sent to the callbackUrl' })),
    url: Type.String(),
    status: DeliveryStatus,
    attemptCount: Type.Integer(),
    nextAttemptAt: Nullable(Timestamp),
    lastAttemptAt: Nullable(Timestamp),
    lastStatusCode: Nullable(Type.Integer()),
    lastError: Nullable(Type.String()),
    deliveredAt: Nullable(Timestamp),
    createdAt: Timestamp,
  },
  { title: 'WebhookDelivery' },
)

export const DeliveryListQuery = Type.Object(
  {
    status: Type.Optional(DeliveryStatus),
    eventType: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    endpointId: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    eventId: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
    cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 2048 })),
  },
  { additionalProperties: false },
)

export const DeliveryList = Type.Object(
  {
    items: Type.Array(DeliveryView),
    nextCursor: Nullable(Type.String()),
  },
  { title: 'WebhookDeliveryList' },
)

export const DeliveryParams = Type.Object({
  storeId: Type.String({ minLength: 1, maxLength: 64 }),
  id: Type.String({ minLength: 1, maxLength: 64 }),
})

export const EmptyBody = Type.Object({}, { additionalProperties: false })
