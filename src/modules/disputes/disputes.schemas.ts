import { Type } from 'typebox'
import { AMOUNT_MINOR_MAX, StatusEnum, Timestamp } from '../../platform/http/schemas.ts'
import { CHARGEBACKS } from './disputes.table.ts'

export const ChargebackStatus = StatusEnum('ChargebackStatus', CHARGEBACKS)

const ResolutionKind = Type.Union([
  Type.Literal('accepted'),
  Type.Literal('reversed'),
  Type.Literal('won'),
  Type.Literal('lost'),
  Type.Literal('expired'),
  Type.Null(),
])

export const ChargebackSchema = Type.Object(
  {
    id: Type.String(),
    paymentId: Type.String(),
    amount: Type.Integer(),
    status: ChargebackStatus,
    reasonCode: Type.String(),
    bankChargebackId: Type.String(),
    receivedAt: Timestamp,
    resolvedAt: Type.Union([Timestamp, Type.Null()]),
    evidenceDueBy: Timestamp,
    resolution: ResolutionKind,
    evidenceSubmittedAt: Type.Union([Timestamp, Type.Null()]),
  },
  {
    title: 'Chargeback',
    examples: [
      {
        id: 'cbk_01jd9a1b2c3d4e5f6g7h8j9k0m',
        paymentId: 'pay_01jd8x5q2m4k7r9t1v3w5y7z9a',
        amount: 15000,
        status: 'received',
        reasonCode: '4837',
        bankChargebackId: 'CB-2026-000123',
        receivedAt: '2026-11-25T09:00:00Z',
        resolvedAt: null,
        evidenceDueBy: '2026-12-09T09:00:00Z',
        resolution: null,
        evidenceSubmittedAt: null,
      },
    ],
  },
)

export const ChargebackList = Type.Object(
  { items: Type.Array(ChargebackSchema) },
  { title: 'ChargebackList' },
)

export const Resolution = Type.Object({
  chargebackId: Type.String(),
  status: ChargebackStatus,
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
    amount: Type.Optional(Type.Integer({ minimum: 1, maximum: AMOUNT_MINOR_MAX })),
    reasonCode: Type.Optional(Type.String({ minLength: 1, maxLength: 16 })),
  },
  { additionalProperties: false },
)

const EvidenceText = (maxLength: number) => Type.String({ maxLength })

const EvidenceFields = {
  productDescription: Type.Optional(EvidenceText(20_000)),
  customerCommunication: Type.Optional(EvidenceText(20_000)),
  shippingTrackingNumber: Type.Optional(EvidenceText(200)),
  refundPolicy: Type.Optional(EvidenceText(20_000)),
  uncategorizedText: Type.Optional(EvidenceText(20_000)),
  fileIds: Type.Optional(
    Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: 20, uniqueItems: true }),
  ),
}

export const EvidenceBody = Type.Object(
  { ...EvidenceFields, submit: Type.Optional(Type.Boolean()) },
  { additionalProperties: false },
)

export const EvidenceSchema = Type.Object({
  chargebackId: Type.String(),
  paymentId: Type.String(),
  status: ChargebackStatus,
  evidenceDueBy: Timestamp,
  evidence: Type.Object(EvidenceFields, { additionalProperties: false }),
  /** The rendered evidence PDF (GET /v1/files/{id}/contents), once submitted. */
  evidenceFileId: Type.Union([Type.String(), Type.Null()]),
  submittedAt: Type.Union([Timestamp, Type.Null()]),
})
