import { Type } from 'typebox'
import { Timestamp } from '../../platform/http/schemas.ts'

// Shapes only. Phone parsing, extraData's byte and depth bounds and uniqueness are the
// service's rules (customers.service.ts), so other callers get them too.

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) =>
  Type.Union([t, Type.Null()])

// No control characters: PostgreSQL text cannot hold NUL, and none belongs in these fields.
const PRINTABLE = '^[^\\u0000-\\u001f\\u007f]+$'

const ExternalId = Type.String({
  minLength: 1,
  maxLength: 128,
  pattern: PRINTABLE,
  description: "The merchant's own id for this customer; unique among its live customers.",
})
const Email = Type.String({
  format: 'email',
  maxLength: 254,
  description: 'Unique among the live customers of the merchant, compared case-insensitively.',
})
const Phone = Type.String({
  minLength: 1,
  maxLength: 32,
  description: 'International form starting +90; stored and returned as E.164 (+905321234567).',
  examples: ['+90 532 123 45 67'],
})
const Name = Type.String({ minLength: 1, maxLength: 200, pattern: PRINTABLE })

export const ExtraData = Type.Unsafe<Record<string, unknown>>({
  type: 'object',
  maxProperties: 50,
  propertyNames: { minLength: 1, maxLength: 100 },
  description:
    'Arbitrary JSON object of the merchant: at most 50 keys, 16 KB as JSON, 8 levels deep. ' +
    'PUT replaces it whole.',
})

export const CreateCustomerBody = Type.Object(
  {
    externalId: ExternalId,
    email: Type.Optional(Nullable(Email)),
    phone: Type.Optional(Nullable(Phone)),
    name: Type.Optional(Nullable(Name)),
    extraData: Type.Optional(ExtraData),
    testClockId: Type.Optional(
      Type.String({
        pattern: '^clk_[0-9a-z]+$',
        maxLength: 64,
        description:
          "Sandbox: a test clock. The customer's card charges live at the clock's time: an authorization expires only when the clock is advanced past it. Fixed for the customer's life.",
      }),
    ),
  },
  { additionalProperties: false, title: 'CreateCustomer' },
)

export const UpdateCustomerBody = Type.Object(
  {
    email: Type.Optional(Nullable(Email)),
    phone: Type.Optional(Nullable(Phone)),
    name: Type.Optional(Nullable(Name)),
    extraData: Type.Optional(ExtraData),
  },
  {
    additionalProperties: false,
    title: 'UpdateCustomer',
    description: 'Only the fields sent change; null clears email, phone or name.',
  },
)

export const CustomerResponse = Type.Object(
  {
    id: Type.String({ examples: ['cus_0123456789abcdefghjkmnpq'] }),
    merchantId: Type.String(),
    externalId: Type.String(),
    email: Nullable(Type.String()),
    phone: Nullable(Type.String()),
    name: Nullable(Type.String()),
    extraData: Type.Unsafe<Record<string, unknown>>({ type: 'object', additionalProperties: true }),
    createdAt: Timestamp,
    updatedAt: Timestamp,
    testClockId: Nullable(
      Type.String({
        description: 'Sandbox: the test clock its charges live on; null for wall time',
      }),
    ),
  },
  {
    title: 'Customer',
    examples: [
      {
        id: 'cus_01jd8x6a2b3c4d5e6f7g8h9j0k',
        merchantId: 'mrc_01jd8x0a1b2c3d4e5f6g7h8j9k',
        externalId: 'user-1042',
        email: 'ayse@example.com',
        phone: '+905321234567',
        name: 'Ayşe Yılmaz',
        extraData: { segment: 'gold' },
        createdAt: '2026-11-22T10:00:00Z',
        updatedAt: '2026-11-22T10:00:00Z',
        testClockId: null,
      },
    ],
  },
)

export const CustomerParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) })
export const CardParams = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 64 }),
  cardId: Type.String({ minLength: 1, maxLength: 64 }),
})

export const CustomerListQuery = Type.Object(
  {
    email: Type.Optional(Email),
    phone: Type.Optional(Phone),
    limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
    cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 2048 })),
  },
  { additionalProperties: false },
)

export const CustomerList = Type.Object(
  {
    items: Type.Array(
      Type.Object({
        id: Type.String(),
        externalId: Type.String(),
        email: Nullable(Type.String()),
        name: Nullable(Type.String()),
        createdAt: Timestamp,
      }),
    ),
    nextCursor: Nullable(Type.String()),
  },
  { title: 'CustomerList' },
)

export const AttachCardBody = Type.Object(
  {
    cardToken: Type.String({ pattern: '^tok_[0-9a-z]+$', maxLength: 64 }),
    isDefault: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false, title: 'AttachCard' },
)

// Response schemas are a security control: only these fields of a card are ever serialised.
const cardFields = {
  id: Type.String({ examples: ['cuc_0123456789abcdefghjkmnpq'] }),
  customerId: Type.String(),
  cardToken: Type.String(),
  last4: Type.String(),
  brand: Type.String(),
  expMonth: Type.Integer(),
  expYear: Type.Integer(),
  isDefault: Type.Boolean(),
  card: Type.Object(
    { fingerprint: Type.Union([Type.String(), Type.Null()]) },
    { description: "the vault token's fingerprint (keyed per merchant)" },
  ),
  expired: Type.Boolean({ description: 'past its expiry month by the service clock' }),
  createdAt: Timestamp,
}

export const CustomerCardResponse = Type.Object(
  { ...cardFields, bin: Type.String() },
  { title: 'CustomerCard' },
)

export const CustomerCardList = Type.Object(
  { items: Type.Array(Type.Object(cardFields, { title: 'CustomerCardReference' })) },
  { title: 'CustomerCardList' },
)

export const DefaultCardResponse = Type.Object(
  {
    cardToken: Type.String(),
    customerId: Type.String(),
    last4: Type.String(),
    brand: Type.String(),
    expMonth: Type.Integer(),
    expYear: Type.Integer(),
  },
  { title: 'DefaultCard' },
)
