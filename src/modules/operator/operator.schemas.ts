import { Type } from 'typebox'
import { LIMIT_MINOR_MAX, Timestamp } from '../../platform/http/schemas.ts'
import { KycStatusSchema } from '../merchants/index.ts'

const IssuedKey = {
  apiKeyId: Type.String(),
  publicKey: Type.String(),
  secretKey: Type.String({ description: 'Shown once. Store it in your secret manager.' }),
}

export const CreateMerchantBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    kycStatus: Type.Optional(KycStatusSchema),
    ownerEmail: Type.Optional(
      Type.String({
        format: 'email',
        maxLength: 254,
        description:
          "The owner's dashboard sign-in email (one account per email: 409 when taken). Without it, a synthetic address of the merchant's id.",
      }),
    ),
    commission: Type.Optional(
      Type.Object(
        {
          rateBps: Type.Optional(Type.Integer({ minimum: 0, maximum: 5000 })),
          fixedMinor: Type.Optional(Type.Integer({ minimum: 0, maximum: 100_000 })),
          perExtraInstallmentBps: Type.Optional(Type.Integer({ minimum: 0, maximum: 1000 })),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
)

export const CreatedMerchant = Type.Object({
  merchantId: Type.String(),
  storeId: Type.String(),
  ...IssuedKey,
  dashboard: Type.Object({ email: Type.String(), password: Type.String() }),
})

export const CreateStoreBody = Type.Object(
  { name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })) },
  { additionalProperties: false },
)

export const CreatedStore = Type.Object({ storeId: Type.String(), ...IssuedKey })

export const CreateSubmerchantBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    iban: Type.String({ minLength: 1, maxLength: 64 }),
    holderName: Type.String({ minLength: 1, maxLength: 200 }),
    payoutLimits: Type.Optional(
      Type.Object(
        {
          minMinor: Type.Optional(Type.Integer({ minimum: 1, maximum: LIMIT_MINOR_MAX })),
          maxMinor: Type.Optional(Type.Integer({ minimum: 1, maximum: LIMIT_MINOR_MAX })),
          dailyMaxMinor: Type.Optional(Type.Integer({ minimum: 1, maximum: LIMIT_MINOR_MAX })),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
)

export const CreatedSubmerchant = Type.Object({ submerchantId: Type.String(), ...IssuedKey })

export const SetKycBody = Type.Object({ status: KycStatusSchema }, { additionalProperties: false })

export const MerchantView = Type.Object({
  merchantId: Type.String(),
  name: Type.String(),
  kycStatus: KycStatusSchema,
  kycDecidedAt: Type.Union([Timestamp, Type.Null()]),
  pricing: Type.Object({
    rateBpsByInstallment: Type.Array(Type.Integer()),
    fixedMinor: Type.Integer(),
  }),
  settlementDelaySeconds: Type.Integer(),
  createdAt: Timestamp,
})

export const ApiKeyView = Type.Object({
  apiKeyId: Type.String(),
  publicKey: Type.String(),
  storeId: Type.Union([Type.String(), Type.Null()]),
  submerchantId: Type.Union([Type.String(), Type.Null()]),
  subjectScope: Type.String(),
  status: Type.String(),
  expiresAt: Type.Union([Timestamp, Type.Null()]),
  createdAt: Timestamp,
})

export const DemoCredentials = Type.Object({
  merchantId: Type.String(),
  storeId: Type.String(),
  publicKey: Type.String(),
  secretKey: Type.String(),
})

export const RolledKey = Type.Object({ ...IssuedKey, previousKeyExpiresAt: Timestamp })

export const MerchantParams = Type.Object({ id: Type.String({ maxLength: 64 }) })
export const KeyParams = Type.Object({
  id: Type.String({ maxLength: 64 }),
  keyId: Type.String({ maxLength: 64 }),
})

export const AuditLogQuery = Type.Object(
  {
    merchantId: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        description: 'The merchant whose log to read; without it, the platform’s own',
      }),
    ),
    limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
    cursor: Type.Optional(Type.String({ maxLength: 2048 })),
  },
  { additionalProperties: false },
)

export const AuditLogPage = Type.Object({
  items: Type.Array(
    Type.Object({
      id: Type.String(),
      actorId: Type.String({ description: 'A dashboard user’s id, or `operator`' }),
      action: Type.String(),
      target: Type.Union([Type.String(), Type.Null()]),
      details: Type.Record(
        Type.String(),
        Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Null()]),
      ),
      at: Timestamp,
    }),
  ),
  nextCursor: Type.Union([Type.String(), Type.Null()]),
})
