import { Type } from 'typebox'
import { Timestamp } from '../../platform/http/schemas.ts'

const Status = Type.Union([
  Type.Literal('received'),
  Type.Literal('under_review'),
  Type.Literal('accepted'),
  Type.Literal('reversed'),
])

const ResolutionKind = Type.Union([
  Type.Literal('accepted'),
  Type.Literal('reversed'),
  Type.Literal('won'),
  Type.Literal('lost'),
  Type.Literal('expired'),
  Type.Null(),
])

export const ChargebackSchema = Type.Object({
  id: Type.String(),
  paymentId: Type.String(),
  amount: Type.Integer(),
  status: Status,
  reasonCode: Type.String(),
  bankChargebackId: Type.String(),
  receivedAt: Timestamp,
  resolvedAt: Type.Union([Timestamp, Type.Null()]),
  evidenceDueBy: Timestamp,
  resolution: ResolutionKind,
  evidenceSubmittedAt: Type.Union([Timestamp, Type.Null()]),
})

export const ChargebackList = Type.Object({ items: Type.Array(ChargebackSchema) })

export const Resolution = Type.Object({
  chargebackId: Type.String(),
  status: Status,
  resolution: ResolutionKind,
  resolvedAt: Type.Union([Timestamp, Type.Null()]),
})

export const PaymentParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) })
export const ChargebackParams = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 64 }),
  cbid: Type.String({ minLength: 1, maxLength: 64 }),
})

export const EmptyBody = Type.Object({}, { additionalProperties: false })

export const RaiseBody = Type.Object(
  {
    amount: Type.Optional(Type.Integer({ minimum: 1 })),
    reasonCode: Type.Optional(Type.String({ minLength: 1, maxLength: 16 })),
  },
  { additionalProperties: false },
)
