import { Type } from 'typebox'
import { Timestamp } from '../../platform/http/schemas.ts'

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) =>
  Type.Union([t, Type.Null()])

export const RequestLogSchema = Type.Object(
  {
    id: Type.String({ description: '`req_…`, the log line' }),
    requestId: Type.String({ description: 'X-Request-Id of the answer' }),
    method: Type.String(),
    path: Type.String({ description: 'as requested, ids included; no query string' }),
    route: Nullable(Type.String({ description: 'the route pattern, e.g. /v1/payments/:id' })),
    status: Type.Integer(),
    errorCode: Nullable(Type.String({ description: 'the SVC code of an error answer' })),
    reason: Nullable(
      Type.String({
        description:
          'why the gateway refused the request (401 for one of your keys: a signature that ' +
          'does not match, a clock off by more than 5 minutes, a missing header); never a secret',
      }),
    ),
    durationMs: Type.Integer(),
    apiKeyId: Type.String(),
    keyPrefix: Type.String({ description: 'the public key’s first characters' }),
    mode: Type.Union([Type.Literal('demo'), Type.Literal('live')]),
    submerchantId: Nullable(Type.String()),
    idempotencyKey: Nullable(Type.String()),
    createdAt: Timestamp,
  },
  {
    title: 'RequestLog',
    examples: [
      {
        id: 'req_0123456789abcdefghjkmnpq',
        requestId: '0b6c1e9e-9d1c-4c47-9d0e-2f1f7f0c8a11',
        method: 'POST',
        path: '/v1/payments/pay_0123456789abcdefghjkmnpq/refund',
        route: '/v1/payments/:id/refund',
        status: 409,
        errorCode: 'SVC-PAY-3203',
        reason: null,
        durationMs: 12,
        apiKeyId: 'key_0123456789abcdefghjkmnpq',
        keyPrefix: 'pk_demo_ab12',
        mode: 'demo',
        submerchantId: null,
        idempotencyKey: '4f1c2c0e-5d8f-4e39-9a3a-7a9d2b7f6e10',
        createdAt: '2026-11-27T10:00:00Z',
      },
    ],
  },
)

export const RequestLogQuery = Type.Object(
  {
    limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
    cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 2048 })),
    status: Type.Optional(
      Type.String({
        pattern: '^[1-5](xx|[0-9][0-9])$',
        description: 'a class (`4xx`) or one status (`404`)',
      }),
    ),
    since: Type.Optional(
      Type.String({ format: 'date-time', description: 'requests at or after this time' }),
    ),
    method: Type.Optional(
      Type.Union([
        Type.Literal('GET'),
        Type.Literal('POST'),
        Type.Literal('PUT'),
        Type.Literal('PATCH'),
        Type.Literal('DELETE'),
      ]),
    ),
  },
  { additionalProperties: false },
)

export const RequestLogList = Type.Object(
  { items: Type.Array(RequestLogSchema), nextCursor: Nullable(Type.String()) },
  { title: 'RequestLogList' },
)
