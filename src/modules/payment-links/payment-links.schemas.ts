import { Type } from 'typebox'
import { AMOUNT_MINOR_MAX, Timestamp } from '../../platform/http/schemas.ts'
import { Metadata } from '../../platform/metadata.ts'

// Shapes only; the amount range, the store and the expiry bound are the service's checks.

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) =>
  Type.Union([t, Type.Null()])

const Id = Type.String({ minLength: 1, maxLength: 64 })
// No control characters: PostgreSQL text cannot hold NUL, and none belongs in a description.
const PRINTABLE = '^[^\\u0000-\\u001f\\u007f]+$'
const Url = Type.String({ format: 'uri', pattern: '^https?://', maxLength: 2048 })

export const LinkStatus = Type.Union(
  [
    Type.Literal('active'),
    Type.Literal('deactivated'),
    Type.Literal('expired'),
    Type.Literal('completed'),
  ],
  { description: 'completed: maxPayments captured payments were made' },
)

const Collect = Type.Object(
  {
    email: Type.Optional(Type.Boolean()),
    phone: Type.Optional(Type.Boolean()),
    name: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
)

export const CreateLinkBody = Type.Object(
  {
    storeId: Id,
    amount: Type.Integer({
      maximum: AMOUNT_MINOR_MAX,
      description: 'kuruş, 100..10,000,000,000',
      examples: [15000],
    }),
    description: Type.String({ minLength: 1, maxLength: 500, pattern: PRINTABLE }),
    maxPayments: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
    expiresAt: Type.Optional(Type.String({ format: 'date-time' })),
    metadata: Type.Optional(Metadata),
    installments: Type.Optional(
      Type.Boolean({ description: 'offer installments on the checkout (default false)' }),
    ),
    collect: Type.Optional(Collect),
    returnUrl: Type.Optional(Url),
  },
  { additionalProperties: false },
)

export const LinkParams = Type.Object({ id: Id })
export const EmptyBody = Type.Object({}, { additionalProperties: false })

export const LinkSchema = Type.Object({
  id: Type.String({ examples: ['plink_0123456789abcdefghjkmnpq'] }),
  storeId: Type.String(),
  url: Type.String({ description: '{checkout_url}/l/{publicHash}: the public page' }),
  qrUrl: Type.String({ description: 'the url as a QR code (SVG)' }),
  active: Type.Boolean({ description: 'true while the link takes payments (status active)' }),
  status: LinkStatus,
  amount: Type.Integer({ description: 'kuruş' }),
  currency: Type.Literal('TRY'),
  description: Type.String(),
  maxPayments: Nullable(Type.Integer()),
  paymentsCount: Type.Integer({ description: 'payments through the link that captured money' }),
  expiresAt: Nullable(Timestamp),
  metadata: Metadata,
  installments: Type.Boolean(),
  collect: Collect,
  returnUrl: Nullable(Type.String()),
  createdAt: Timestamp,
  deactivatedAt: Nullable(Timestamp),
})

export const LinkListQuery = Type.Object(
  {
    limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
    cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 2048 })),
  },
  { additionalProperties: false },
)

export const LinkList = Type.Object({
  items: Type.Array(LinkSchema),
  nextCursor: Nullable(Type.String()),
})
