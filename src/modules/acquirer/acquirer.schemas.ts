import { Type } from 'typebox'
import { Timestamp } from '../../platform/http/schemas.ts'

// Shapes only; providers' credentials, programs and routing conditions are the services' checks.

const PRINTABLE = '^[^\\u0000-\\u001f\\u007f]+$'
const Name = Type.String({ minLength: 1, maxLength: 100, pattern: PRINTABLE })
const Url = Type.String({ maxLength: 2048, pattern: '^https?://' })
const PosId = Type.String({ minLength: 1, maxLength: 64 })

const Credentials = Type.Record(Type.String({ maxLength: 64 }), Type.String({ maxLength: 256 }), {
  description:
    'As the bank issues them. est_v3: {clientId, username, password, storeKey, bank, ' +
    'storeType? (3d or 3d_pay, as the bank set the store up; 3d by default)}; ' +
    'garanti: {merchantId, terminalId, provisionUser, provisionPassword, storeKey, ' +
    'refundUser?, refundPassword?}; posnet: ' +
    '{merchantId, terminalId, posnetId, encKey}. Write-only: never returned or logged.',
  maxProperties: 16,
})

const Programs = Type.Array(Type.String({ maxLength: 20 }), {
  maxItems: 10,
  description: 'bonus, world, maximum, axess, cardfinans, paraf, advantage, bankkart, saglam, none',
})

export const CreatePosAccountBody = Type.Object(
  {
    provider: Type.String({ maxLength: 20, description: 'est_v3, garanti or posnet' }),
    name: Name,
    environment: Type.Union([Type.Literal('test'), Type.Literal('production')]),
    credentials: Credentials,
    bank: Type.Optional(Type.String({ maxLength: 20, description: 'est_v3: which EST bank' })),
    installmentPrograms: Type.Optional(Programs),
    enabled: Type.Optional(Type.Boolean()),
    endpoints: Type.Optional(
      Type.Object(
        { api: Url, threeDGate: Url },
        { additionalProperties: false, description: 'demo only: a bank simulator' },
      ),
    ),
  },
  { additionalProperties: false },
)

export const UpdatePosAccountBody = Type.Object(
  {
    name: Type.Optional(Name),
    enabled: Type.Optional(Type.Boolean()),
    installmentPrograms: Type.Optional(Programs),
    credentials: Type.Optional(Credentials),
  },
  { additionalProperties: false, minProperties: 1 },
)

export const PosAccountSchema = Type.Object(
  {
    id: Type.String({ examples: ['pos_0h4k8m2q6t9w3y7b1d5f8j2n'] }),
    owner: Type.Union([Type.Literal('merchant'), Type.Literal('platform')]),
    provider: Type.String(),
    bank: Type.String(),
    name: Type.String(),
    environment: Type.String(),
    installmentPrograms: Type.Array(Type.String()),
    enabled: Type.Boolean(),
    createdAt: Timestamp,
  },
  { title: 'PosAccount' },
)

export const PosAccountList = Type.Object({ items: Type.Array(PosAccountSchema) })
export const PosAccountParams = Type.Object({ id: PosId })

const Condition = Type.Unknown({
  description:
    'JSON Logic over card.bin, card.brand, card.bank, card.program, card.funding, ' +
    'installmentCount, amount',
})

const RoutingRule = Type.Object(
  { condition: Condition, posAccountIds: Type.Array(PosId, { maxItems: 20 }) },
  { additionalProperties: false },
)

export const RoutingBody = Type.Object(
  {
    rules: Type.Array(RoutingRule, { maxItems: 50 }),
    default: Type.Array(PosId, { maxItems: 20 }),
  },
  { additionalProperties: false },
)

export const RoutingSchema = Type.Object(
  {
    rules: Type.Array(
      Type.Object({ condition: Condition, posAccountIds: Type.Array(Type.String()) }),
    ),
    default: Type.Array(Type.String()),
    updatedAt: Type.Union([Timestamp, Type.Null()]),
  },
  { title: 'Routing' },
)

export const BinParams = Type.Object({ bin: Type.String({ pattern: '^[0-9]{6,8}$' }) })

export const BinSchema = Type.Object(
  {
    bin: Type.String(),
    brand: Type.String(),
    funding: Type.String(),
    bank: Type.Union([Type.String(), Type.Null()]),
    program: Type.String(),
    country: Type.Union([Type.String(), Type.Null()]),
  },
  { title: 'BinInfo' },
)

export const InstallmentQuery = Type.Object(
  {
    bin: Type.String({ pattern: '^[0-9]{6,8}$' }),
    amount: Type.Integer({ minimum: 100, maximum: 10_000_000_000, description: 'kuruş' }),
  },
  { additionalProperties: false },
)

export const InstallmentOptionsSchema = Type.Object(
  {
    bin: Type.String(),
    program: Type.String(),
    options: Type.Array(
      Type.Object({
        installmentCount: Type.Integer(),
        totalAmount: Type.Integer(),
        installmentAmount: Type.Integer(),
      }),
    ),
  },
  { title: 'InstallmentOptions' },
)

const BankDate = Type.String({
  pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}$',
  description: 'The Istanbul bank day, YYYY-MM-DD',
  examples: ['2026-11-27'],
})

export const ReconciliationQuery = Type.Object(
  {
    date: BankDate,
    posAccountId: PosId,
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 100 })),
    after: Type.Optional(
      Type.String({ maxLength: 64, description: 'nextCursor of the page before' }),
    ),
  },
  { additionalProperties: false },
)

export const ReconciliationBody = Type.Object(
  { date: BankDate, posAccountId: PosId },
  { additionalProperties: false },
)

const OrderFactsSchema = Type.Union([
  Type.Object(
    {
      authorized: Type.Integer({ description: 'kuruş' }),
      captured: Type.Union([Type.Integer(), Type.Null()], {
        description: 'kuruş; null when the bank’s inquiry does not say',
      }),
      refunded: Type.Union([Type.Integer(), Type.Null()], {
        description: 'kuruş; null when the bank’s inquiry does not say',
      }),
      voided: Type.Boolean(),
    },
    { title: 'ReconciliationOrderFacts' },
  ),
  Type.Null(),
])

export const ReconciliationSchema = Type.Object(
  {
    date: Type.String(),
    posAccountId: Type.String(),
    method: Type.Union([Type.Literal('list'), Type.Literal('inquiry'), Type.Null()], {
      description:
        'list: the bank’s own day list (garanti); inquiry: one order inquiry per order of ours (est_v3, posnet); null: not run yet',
    }),
    ranAt: Type.Union([Timestamp, Type.Null()]),
    checkedOrders: Type.Integer(),
    bankAnswered: Type.Optional(Type.Boolean()),
    items: Type.Array(
      Type.Object({
        id: Type.String({ examples: ['rcn_5f1c2b7e9a0d4c3b8e6f1a2d'] }),
        orderId: Type.String(),
        paymentId: Type.Union([Type.String(), Type.Null()]),
        kind: Type.Union([
          Type.Literal('missing_at_bank'),
          Type.Literal('missing_at_us'),
          Type.Literal('amount_differs'),
          Type.Literal('status_differs'),
        ]),
        field: Type.Union([
          Type.Literal('authorized'),
          Type.Literal('captured'),
          Type.Literal('refunded'),
          Type.Literal('voided'),
          Type.Null(),
        ]),
        ours: OrderFactsSchema,
        bank: OrderFactsSchema,
        createdAt: Timestamp,
      }),
    ),
    nextCursor: Type.Union([Type.String(), Type.Null()]),
  },
  { title: 'AcquirerReconciliation' },
)
