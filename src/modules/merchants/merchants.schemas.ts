import { Type } from 'typebox'
import { Timestamp } from '../../platform/http/schemas.ts'

export const Whoami = Type.Object(
  {
    subjectScope: Type.Union([Type.Literal('merchant'), Type.Literal('submerchant')]),
    merchantId: Type.String(),
    apiKeyId: Type.String(),
    storeId: Type.Optional(Type.String()),
    submerchantId: Type.Optional(Type.String()),
  },
  { title: 'Whoami' },
)

export const KycStatusSchema = Type.Union([
  Type.Literal('none'),
  Type.Literal('pending'),
  Type.Literal('approved'),
  Type.Literal('rejected'),
  Type.Literal('suspended'),
  Type.Literal('expired'),
])

export const KycStatusResponse = Type.Object(
  {
    status: KycStatusSchema,
    decidedAt: Type.Union([Timestamp, Type.Null()]),
    sessionId: Type.Union([Type.String(), Type.Null()]),
    subjectId: Type.String(),
  },
  { title: 'KycStatus' },
)
