import { Type } from 'typebox'
import { LIMIT_MINOR_MAX, Timestamp } from '../../platform/http/schemas.ts'
import { DASHBOARD_ROLES } from '../merchants/index.ts'

export const LoginBody = Type.Object(
  {
    email: Type.String({ minLength: 3, maxLength: 320 }),
    password: Type.String({ minLength: 1, maxLength: 200 }),
  },
  { additionalProperties: false },
)

export const DashboardSession = Type.Object(
  {
    token: Type.String({
      description:
        'JWT; send it as Authorization: Bearer <token>. It ends at expiresAt, after 30 minutes without a request, at sign-out (web or API), at a password change and when the user leaves the team',
    }),
    expiresAt: Timestamp,
  },
  { title: 'DashboardSession' },
)

export const TwoFactorChallenge = Type.Object(
  {
    twoFactorRequired: Type.Literal(true),
    challengeToken: Type.String({
      description: 'send it with a TOTP code to POST /v1/dashboard/login/two-factor',
    }),
    expiresAt: Timestamp,
  },
  { title: 'DashboardTwoFactorChallenge' },
)

export const LoginResponse = Type.Union([DashboardSession, TwoFactorChallenge])

export const TwoFactorBody = Type.Object(
  {
    challengeToken: Type.String({ minLength: 1, maxLength: 100 }),
    code: Type.String({
      minLength: 1,
      maxLength: 20,
      description: 'the 6-digit code of the authenticator app',
    }),
  },
  { additionalProperties: false },
)

export const MeResponse = Type.Object({
  userId: Type.String(),
  merchantId: Type.String(),
  email: Type.String(),
})

export const StoreParams = Type.Object({ storeId: Type.String({ minLength: 1, maxLength: 64 }) })
export const StoreKeyParams = Type.Object({
  storeId: Type.String({ minLength: 1, maxLength: 64 }),
  keyId: Type.String({ minLength: 1, maxLength: 64 }),
})

const IssuedKeyFields = {
  apiKeyId: Type.String(),
  publicKey: Type.String(),
  secretKey: Type.String({ description: 'shown once' }),
}

export const IssuedKey = Type.Object(IssuedKeyFields, { title: 'IssuedApiKey' })
export const RolledKey = Type.Object({ ...IssuedKeyFields, previousKeyExpiresAt: Timestamp })

export const ApiKeyView = Type.Object(
  {
    apiKeyId: Type.String(),
    publicKey: Type.String(),
    storeId: Type.Union([Type.String(), Type.Null()]),
    subjectScope: Type.String(),
    status: Type.Union([Type.Literal('active'), Type.Literal('revoked'), Type.Literal('expired')]),
    expiresAt: Type.Union([Timestamp, Type.Null()]),
    createdAt: Timestamp,
  },
  { title: 'ApiKey' },
)
export const ApiKeyList = Type.Object({ items: Type.Array(ApiKeyView) })

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

export const CreatedSubmerchant = Type.Object({ submerchantId: Type.String(), ...IssuedKeyFields })

// The page routes' own input schemas (page-rules.ts), for the use cases no API route offers.
// A button that only names its target (capture, revoke, remove …) sends no input of its own.
export const PageActionBody = Type.Object({}, { additionalProperties: false })

// An evidence file comes as one multipart part (the API's POST /v1/files, then the evidence).
export const EvidenceUploadBody = Type.Object(
  { file: Type.String({ minLength: 1 }) },
  { additionalProperties: false },
)

const Code = Type.String({ minLength: 1, maxLength: 40, pattern: '^[0-9A-Za-z -]*$' })

export const WebLoginBody = Type.Object(
  {
    email: Type.String({ minLength: 3, maxLength: 320 }),
    password: Type.String({ minLength: 1, maxLength: 200 }),
    next: Type.Optional(Type.String({ maxLength: 500 })),
  },
  { additionalProperties: false },
)

export const CodeBody = Type.Object({ code: Code }, { additionalProperties: false })

export const AcceptInviteBody = Type.Object(
  {
    password: Type.String({ minLength: 1, maxLength: 400 }),
    passwordConfirm: Type.String({ minLength: 1, maxLength: 400 }),
  },
  { additionalProperties: false },
)

const Role = Type.Union(DASHBOARD_ROLES.map((role) => Type.Literal(role)))

export const TeamInviteBody = Type.Object(
  { email: Type.String({ format: 'email', maxLength: 320 }), role: Role },
  { additionalProperties: false },
)

export const TeamRoleBody = Type.Object({ role: Role }, { additionalProperties: false })

export const TwoFactorRequiredBody = Type.Object(
  { required: Type.Boolean() },
  { additionalProperties: false },
)

export const StoreActionBody = Type.Object(
  { storeId: Type.String({ minLength: 1, maxLength: 64 }) },
  { additionalProperties: false },
)
