import { Type } from 'typebox'
import { Timestamp } from '../../platform/http/schemas.ts'

// The browser API of the hosted checkout. Card fields are checked precisely by the vault;
// these bounds only keep absurd input out. No response schema has a card number field.

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) =>
  Type.Union([t, Type.Null()])

export const SessionParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) })

export const PublicSession = Type.Object({
  sessionId: Type.String(),
  mode: Type.String({ examples: ['payment', 'card_update_only', 'qr'] }),
  status: Type.String({ examples: ['active', 'completed', 'expired', 'cancelled'] }),
  merchantName: Type.String(),
  amount: Nullable(Type.Integer({ description: 'kuruş' })),
  currency: Type.Literal('TRY'),
  description: Nullable(Type.String()),
  expiresAt: Timestamp,
  installmentEnabled: Type.Boolean(),
  saveCardAvailable: Type.Boolean({ description: 'the session has a customer' }),
  qrPayload: Nullable(Type.String({ description: 'EMV merchant-presented payload (qr mode)' })),
  paymentId: Nullable(Type.String()),
  paymentStatus: Nullable(Type.String()),
  redirectUrl: Nullable(
    Type.String({ description: 'returnUrl with the outcome, once the session is over' }),
  ),
})

export const InstallmentsQuery = Type.Object(
  { bin: Type.String({ pattern: '^[0-9]{6,8}$', description: 'first 6 to 8 card digits' }) },
  { additionalProperties: false },
)

export const PublicInstallments = Type.Object({
  bin: Type.String(),
  brand: Type.String(),
  cardType: Type.String(),
  bank: Type.String(),
  options: Type.Array(
    Type.Object({
      installmentCount: Type.Integer(),
      installmentAmount: Type.Integer({ description: 'kuruş, each installment' }),
      firstInstallmentAmount: Type.Integer({ description: 'kuruş; carries the remainder' }),
      totalAmount: Type.Integer({ description: 'kuruş' }),
    }),
  ),
})

const BuyerCard = Type.Object(
  {
    number: Type.String({ minLength: 1, maxLength: 32 }),
    expMonth: Type.Integer(),
    expYear: Type.Integer(),
    cvc: Type.String({ maxLength: 8 }),
    holderName: Type.String({ maxLength: 200 }),
  },
  { additionalProperties: false },
)

export const PayBody = Type.Object(
  {
    card: BuyerCard,
    installmentCount: Type.Optional(Type.Integer({ minimum: 1, maximum: 12 })),
    saveCard: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
)

export const PayResponse = Type.Object({
  sessionId: Type.String(),
  paymentId: Type.String(),
  status: Type.String(),
  redirectUrl: Nullable(Type.String()),
  challengeUrl: Nullable(Type.String({ description: 'path of the 3DS page on this origin' })),
})

export const CardUpdateBody = Type.Object({ card: BuyerCard }, { additionalProperties: false })

export const CardUpdateResponse = Type.Object({
  sessionId: Type.String(),
  status: Type.Literal('card_updated'),
  redirectUrl: Type.String(),
  card: Type.Object({
    brand: Type.String(),
    last4: Type.String(),
    expMonth: Type.Integer(),
    expYear: Type.Integer(),
  }),
})

export const QrPayResponse = Type.Object({
  paymentId: Type.String(),
  sessionId: Type.String(),
  method: Type.String(),
  status: Type.String(),
  amount: Type.Integer(),
  currency: Type.Literal('TRY'),
  commission: Type.Integer(),
  netAmount: Type.Integer(),
  completedAt: Nullable(Timestamp),
})

export const EmptyBody = Type.Object({}, { additionalProperties: false })

export const AcsParams = Type.Object({ paymentId: Type.String({ minLength: 1, maxLength: 80 }) })
export const AcsQuery = Type.Object({
  correlationId: Type.String({ minLength: 1, maxLength: 200 }),
})
export const AcsForm = Type.Object({
  correlationId: Type.String({ minLength: 1, maxLength: 200 }),
  otp: Type.String({ maxLength: 32 }),
})
/** A bank's post back from its 3D gate: its own fields, checked by the acquirer. */
export const BankCallbackForm = Type.Record(
  Type.String({ maxLength: 64 }),
  Type.String({ maxLength: 4096 }),
  { maxProperties: 100 },
)
export const ThreeDsCompleteQuery = Type.Object({
  paymentId: Type.String({ minLength: 1, maxLength: 80 }),
  correlationId: Type.String({ minLength: 1, maxLength: 200 }),
  pares: Type.String({ minLength: 1, maxLength: 4096 }),
})
export const SessionPageParams = Type.Object({
  sessionId: Type.String({ minLength: 1, maxLength: 64 }),
})

export const BrowserTokenBody = Type.Object(
  {
    publicKey: Type.String({ minLength: 1, maxLength: 160, description: "the store's pk_…" }),
    origin: Type.Optional(
      Type.String({
        maxLength: 255,
        description:
          "the merchant page's origin, sent by Kuruş.js's card fields (their iframe is on our origin)",
      }),
    ),
    card: BuyerCard,
  },
  {
    additionalProperties: false,
    examples: [
      {
        publicKey: 'pk_demo_ab12cd34ef56gh78',
        origin: 'https://shop.example',
        card: {
          number: '4155650100416111',
          expMonth: 12,
          expYear: 2030,
          cvc: '123',
          holderName: 'Ayşe Yılmaz',
        },
      },
    ],
  },
)

export const BrowserTokenResponse = Type.Object(
  {
    token: Type.String({
      description: 'tok_…: charge it once, within 15 minutes, from your server',
    }),
    expiresAt: Type.String({ format: 'date-time' }),
    card: Type.Object({
      brand: Type.String(),
      last4: Type.String(),
      expMonth: Type.Integer(),
      expYear: Type.Integer(),
    }),
  },
  { title: 'BrowserToken' },
)

export const FieldsQuery = Type.Object({
  key: Type.String({ minLength: 1, maxLength: 160 }),
  lang: Type.Optional(Type.String({ maxLength: 5 })),
  style: Type.Optional(Type.String({ maxLength: 2000 })),
})
