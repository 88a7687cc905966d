import { Type } from 'typebox'
import { StatusEnum, Timestamp } from '../../platform/http/schemas.ts'
import { Metadata } from '../../platform/metadata.ts'
import { INVOICES } from './invoices.table.ts'

// Shapes only. The money rules (each line total is qty × unit price, the amount is their
// sum), the store and customer checks and the expiry bound are the service's
// (invoices.service.ts), so they answer with field-level details.

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) =>
  Type.Union([t, Type.Null()])

const Id = Type.String({ minLength: 1, maxLength: 64 })
const Currency = Type.Literal('TRY')
const Kurus = Type.Integer({ description: 'kuruş', examples: [123456] })
// No control characters: PostgreSQL text cannot hold NUL, and none belongs in these fields.
const PRINTABLE = '^[^\\u0000-\\u001f\\u007f]+$'
// Notes may span lines: tab and line breaks are allowed there.
const PRINTABLE_MULTILINE = '^[^\\u0000-\\u0008\\u000b\\u000c\\u000e-\\u001f\\u007f]+$'

export const InvoiceStatus = StatusEnum('InvoiceStatus', INVOICES)

export const InvoiceParams = Type.Object({ id: Id })
export const HashParams = Type.Object({
  hash: Type.String({ pattern: '^[A-Za-z0-9_-]{16,64}$' }),
})
export const EmptyBody = Type.Object({}, { additionalProperties: false })

const LineItemIn = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200, pattern: PRINTABLE }),
    qty: Type.Integer({ minimum: 1, maximum: 100_000 }),
    unitPriceMinor: Type.Integer({ minimum: 0, maximum: 10_000_000_000, description: 'kuruş' }),
    lineTotalMinor: Type.Integer({
      minimum: 0,
      maximum: 10_000_000_000,
      description: 'kuruş; must equal qty × unitPriceMinor',
    }),
  },
  { additionalProperties: false },
)

const LineItemOut = Type.Object({
  name: Type.String(),
  qty: Type.Integer(),
  unitPriceMinor: Kurus,
  lineTotalMinor: Kurus,
})

export const CreateInvoiceBody = Type.Object(
  {
    storeId: Id,
    customerId: Type.Optional(Id),
    amountMinor: Type.Integer({
      minimum: 100,
      maximum: 10_000_000_000,
      description: 'kuruş; must equal the sum of the line totals',
    }),
    currency: Currency,
    lineItems: Type.Array(LineItemIn, { minItems: 1, maxItems: 100 }),
    buyerEmail: Type.Optional(Type.String({ format: 'email', maxLength: 254 })),
    buyerName: Type.Optional(Type.String({ minLength: 1, maxLength: 200, pattern: PRINTABLE })),
    dueDate: Type.Optional(Type.String({ format: 'date-time' })),
    expiresAt: Type.Optional(
      Type.String({ format: 'date-time', description: 'link expiry; must be in the future' }),
    ),
    notes: Type.Optional(
      Type.String({ minLength: 1, maxLength: 2000, pattern: PRINTABLE_MULTILINE }),
    ),
    metadata: Type.Optional(Metadata),
  },
  { additionalProperties: false },
)

const invoiceFields = {
  id: Type.String(),
  merchantId: Type.String(),
  storeId: Type.String(),
  customerId: Nullable(Type.String()),
  publicHash: Type.String({ description: "the public link's bearer" }),
  url: Type.String({ description: '{checkout_url}/invoice/<publicHash>' }),
  status: InvoiceStatus,
  amountMinor: Kurus,
  currency: Currency,
  lineItems: Type.Array(LineItemOut),
  buyerEmail: Nullable(Type.String()),
  buyerName: Nullable(Type.String()),
  dueDate: Nullable(Timestamp),
  expiresAt: Nullable(Timestamp),
  notes: Nullable(Type.String()),
  metadata: Type.Unsafe<Record<string, string>>({
    ...Metadata,
    description: "copied to its pay link's checkout session (with invoiceId), so to the payment",
  }),
  paymentId: Nullable(Type.String({ description: 'the captured payment that paid it' })),
  subscriptionId: Nullable(Type.String()),
  cycleNumber: Nullable(Type.Integer()),
  createdAt: Timestamp,
  sentAt: Nullable(Timestamp),
  activatedAt: Nullable(Timestamp),
  viewedAt: Nullable(Timestamp),
  paidAt: Nullable(Timestamp),
  expiredAt: Nullable(Timestamp),
  cancelledAt: Nullable(Timestamp),
}

export const InvoiceSchema = Type.Object(invoiceFields, {
  title: 'Invoice',
  examples: [
    {
      id: 'inv_01jd8z2b3c4d5e6f7g8h9j0k1m',
      merchantId: 'mrc_01jd8x0a1b2c3d4e5f6g7h8j9k',
      storeId: 'sto_01jd8x0b1c2d3e4f5g6h7j8k9m',
      customerId: null,
      publicHash: 'q3Zt8Kp1Xw7Lm4Rb9Vn2',
      url: 'http://localhost:3000/invoice/q3Zt8Kp1Xw7Lm4Rb9Vn2',
      status: 'sent',
      amountMinor: 123456,
      currency: 'TRY',
      lineItems: [
        { name: 'Danışmanlık (saat)', qty: 4, unitPriceMinor: 30864, lineTotalMinor: 123456 },
      ],
      buyerEmail: 'muhasebe@example.com',
      buyerName: 'Örnek Ltd. Şti.',
      dueDate: '2026-12-05T00:00:00Z',
      expiresAt: '2026-12-22T00:00:00Z',
      notes: null,
      metadata: {},
      paymentId: null,
      subscriptionId: null,
      cycleNumber: null,
      createdAt: '2026-11-22T10:00:00Z',
      sentAt: '2026-11-22T10:01:00Z',
      activatedAt: null,
      viewedAt: null,
      paidAt: null,
      expiredAt: null,
      cancelledAt: null,
    },
  ],
})

export const InvoiceListQuery = Type.Object(
  {
    storeId: Type.Optional(Id),
    status: Type.Optional(InvoiceStatus),
    limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
    cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 2048 })),
  },
  { additionalProperties: false },
)

export const InvoiceList = Type.Object(
  {
    items: Type.Array(
      Type.Object({
        id: Type.String(),
        storeId: Type.String(),
        status: InvoiceStatus,
        amountMinor: Kurus,
        currency: Currency,
        createdAt: Timestamp,
      }),
    ),
    nextCursor: Nullable(Type.String()),
  },
  { title: 'InvoiceList' },
)

export const SendResponse = Type.Object({
  id: Type.String(),
  status: InvoiceStatus,
  sentAt: Nullable(Timestamp),
})
export const ActivateResponse = Type.Object({
  id: Type.String(),
  status: InvoiceStatus,
  activatedAt: Nullable(Timestamp),
})
export const CancelResponse = Type.Object({
  id: Type.String(),
  status: InvoiceStatus,
  cancelledAt: Nullable(Timestamp),
})

export const PublicInvoiceView = Type.Object(
  {
    publicHash: Type.String(),
    merchantName: Type.String(),
    status: InvoiceStatus,
    amountMinor: Kurus,
    currency: Currency,
    lineItems: Type.Array(LineItemOut),
    buyerName: Nullable(Type.String()),
    dueDate: Nullable(Timestamp),
    expiresAt: Nullable(Timestamp),
    notes: Nullable(Type.String()),
    paidAt: Nullable(Timestamp),
  },
  { title: 'PublicInvoiceView' },
)

export const PaySession = Type.Object({
  sessionId: Type.String(),
  checkoutUrl: Type.String(),
  expiresAt: Timestamp,
})

export const PdfResponse = {
  description: 'The invoice as a PDF',
  content: { 'application/pdf': { schema: { type: 'string', format: 'binary' } } },
}
