import { Type } from 'typebox'
import { Timestamp } from '../../platform/http/schemas.ts'

// The shapes only; the card rules (Luhn, length, expiry, CVC per brand) live in the service
// so that every caller of tokenizeCard gets them, and their reasons never echo a value.
export const TokenizeCardBody = Type.Object(
  {
    cardNumber: Type.String({ minLength: 1, maxLength: 32, description: 'digits; spaces allowed' }),
    expMonth: Type.Integer({ examples: [12] }),
    expYear: Type.Integer({ examples: [2030], description: 'four digits' }),
    cvc: Type.String({ maxLength: 8, description: 'checked, never stored' }),
    holderName: Type.String({ maxLength: 200 }),
  },
  { additionalProperties: false, title: 'TokenizeCard' },
)

/** What risk rules and block lists see of a card (CONTRACT.md "Risk"). */
export const CardFacts = Type.Object(
  {
    fingerprint: Type.String({
      description:
        'keyed hash of the card number: equal for the same card within a merchant, not comparable across merchants',
    }),
  },
  { title: 'CardFingerprint' },
)

const Brand = Type.Union([
  Type.Literal('visa'),
  Type.Literal('mastercard'),
  Type.Literal('troy'),
  Type.Literal('amex'),
  Type.Literal('unknown'),
])

// Response schemas are a security control too: only these fields are ever serialised, so
// nothing else about a card can leak from this route.
export const CardTokenResponse = Type.Object(
  {
    cardToken: Type.String({ examples: ['tok_0123456789abcdefghjkmnpq'] }),
    last4: Type.String(),
    bin: Type.String(),
    brand: Brand,
    cardType: Type.Union([Type.Literal('credit'), Type.Literal('debit')]),
    expMonth: Type.Integer(),
    expYear: Type.Integer(),
    card: CardFacts,
  },
  { title: 'CardToken' },
)

export const CardAccessQuery = Type.Object(
  {
    from: Type.Optional(Type.String({ format: 'date-time', description: 'inclusive' })),
    to: Type.Optional(Type.String({ format: 'date-time', description: 'exclusive' })),
    limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
    cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 2048 })),
  },
  { additionalProperties: false },
)

export const CardAccessList = Type.Object(
  {
    items: Type.Array(
      Type.Object({
        op: Type.Literal('detokenize'),
        cardToken: Type.String(),
        callerService: Type.String(),
        result: Type.Union([Type.Literal('ok'), Type.Literal('denied')]),
        createdAt: Timestamp,
      }),
    ),
    nextCursor: Type.Union([Type.String(), Type.Null()]),
  },
  { title: 'CardAccessList' },
)
