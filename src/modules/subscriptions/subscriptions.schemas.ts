import { Type } from 'typebox'
import { StatusEnum, Timestamp } from '../../platform/http/schemas.ts'
import { Metadata } from '../../platform/metadata.ts'
import { SUBSCRIPTIONS } from './subscriptions.table.ts'

// Shapes only. Amount bounds, interval limits, trial bounds and card ownership are the
// service's rules (subscriptions.service.ts), so every caller gets them.

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) =>
  Type.Union([t, Type.Null()])

const Id = Type.String({ minLength: 1, maxLength: 64 })
const Currency = Type.Literal('TRY')
const IntervalUnit = Type.Union([
  Type.Literal('day'),
  Type.Literal('week'),
  Type.Literal('month'),
  Type.Literal('year'),
])
const Status = StatusEnum(
  'SubscriptionStatus',
  SUBSCRIPTIONS,
  '`charging` is transient: a charge is running; poll until it changes.',
)
const Kurus = Type.Integer({ description: 'kuruş per cycle', examples: [14900] })
// No control characters: PostgreSQL text cannot hold NUL, and none belongs in these fields.
const PRINTABLE = '^[^\\u0000-\\u001f\\u007f]+$'

export const SubscriptionParams = Type.Object({ id: Id })
export const HashParams = Type.Object({
  hash: Type.String({ pattern: '^[A-Za-z0-9_-]{16,64}$' }),
})
export const EmptyBody = Type.Object({}, { additionalProperties: false })

export const CreateSubscriptionBody = Type.Object(
  {
    storeId: Id,
    customerId: Id,
    amountMinor: Type.Integer({ minimum: 100, maximum: 10_000_000_000, description: 'kuruş' }),
    currency: Currency,
    intervalCount: Type.Integer({
      minimum: 1,
      maximum: 365,
      description: 'Units per cycle: up to one year (365 days, 52 weeks, 12 months, 1 year).',
    }),
    intervalUnit: IntervalUnit,
    cardToken: Type.Optional(
      Type.String({
        pattern: '^tok_[0-9a-z]+$',
        maxLength: 64,
        description: "One of the customer's cards; the customer's default card when omitted.",
      }),
    ),
    trialEndAt: Type.Optional(
      Type.String({ format: 'date-time', description: 'trialing until then; the first charge' }),
    ),
    generateInvoices: Type.Optional(Type.Boolean()),
    description: Type.Optional(Type.String({ minLength: 1, maxLength: 500, pattern: PRINTABLE })),
    metadata: Type.Optional(Metadata),
    testClockId: Type.Optional(
      Type.String({
        pattern: '^clk_[0-9a-z]+$',
        maxLength: 64,
        description:
          "Sandbox: a test clock. The subscription lives at the clock's time and renews only when the clock is advanced.",
      }),
    ),
  },
  { additionalProperties: false },
)

const subscriptionFields = {
  id: Type.String(),
  merchantId: Type.String(),
  storeId: Type.String(),
  customerId: Type.String(),
  status: Status,
  amountMinor: Kurus,
  currency: Currency,
  intervalCount: Type.Integer(),
  intervalUnit: IntervalUnit,
  cycleNumber: Type.Integer({ description: 'cycles paid so far; 0 on creation' }),
  nextChargeAt: Nullable(Timestamp),
  cardLast4: Type.String(),
  cardBrand: Type.String(),
  cancelAtPeriodEnd: Type.Boolean(),
  trialEndAt: Nullable(Timestamp),
  description: Nullable(Type.String()),
  generateInvoices: Type.Boolean(),
  metadata: Type.Unsafe<Record<string, string>>({
    ...Metadata,
    description: 'copied to each renewal payment (with subscriptionId and cycle)',
  }),
  failedAttempts: Type.Integer({ description: 'failed attempts at the unpaid cycle (dunning)' }),
  cancelledAt: Nullable(Timestamp),
  createdAt: Timestamp,
  testClockId: Nullable(
    Type.String({ description: 'Sandbox: the test clock it lives on; null for wall time' }),
  ),
}

export const SubscriptionSchema = Type.Object(subscriptionFields, {
  title: 'Subscription',
  examples: [
    {
      id: 'sub_01jd8z1a2b3c4d5e6f7g8h9j0k',
      merchantId: 'mrc_01jd8x0a1b2c3d4e5f6g7h8j9k',
      storeId: 'sto_01jd8x0b1c2d3e4f5g6h7j8k9m',
      customerId: 'cus_01jd8x6a2b3c4d5e6f7g8h9j0k',
      status: 'active',
      amountMinor: 14900,
      currency: 'TRY',
      intervalCount: 1,
      intervalUnit: 'month',
      cycleNumber: 3,
      nextChargeAt: '2026-12-22T10:00:00Z',
      cardLast4: '6111',
      cardBrand: 'visa',
      cancelAtPeriodEnd: false,
      trialEndAt: null,
      description: 'Pro plan',
      generateInvoices: true,
      metadata: { plan: 'pro' },
      failedAttempts: 0,
      cancelledAt: null,
      createdAt: '2026-08-22T10:00:00Z',
      testClockId: null,
    },
  ],
})
export const CreatedSubscription = Type.Object(
  {
    ...subscriptionFields,
    publicHash: Type.String({ description: "the buyer portal's bearer; returned only here" }),
  },
  { title: 'CreatedSubscription' },
)

export const SubscriptionListQuery = Type.Object(
  {
    storeId: Type.Optional(Id),
    customerId: Type.Optional(Id),
    status: Type.Optional(Status),
    from: Type.Optional(
      Type.String({ format: 'date-time', description: 'createdAt lower bound, inclusive' }),
    ),
    to: Type.Optional(
      Type.String({ format: 'date-time', description: 'createdAt upper bound, exclusive' }),
    ),
    limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
    cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 2048 })),
  },
  { additionalProperties: false },
)

export const SubscriptionList = Type.Object(
  {
    items: Type.Array(
      Type.Object({
        id: Type.String(),
        storeId: Type.String(),
        status: Status,
        amountMinor: Kurus,
        currency: Currency,
        intervalCount: Type.Integer(),
        intervalUnit: IntervalUnit,
        nextChargeAt: Nullable(Timestamp),
        createdAt: Timestamp,
      }),
    ),
    nextCursor: Nullable(Type.String()),
  },
  { title: 'SubscriptionList' },
)

export const ChargesQuery = Type.Object(
  {
    limit: Type.Integer({ minimum: 1, maximum: 100, default: 100 }),
    cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 2048 })),
  },
  { additionalProperties: false },
)

export const ChargeList = Type.Object(
  {
    items: Type.Array(
      Type.Object({
        cycleNumber: Type.Integer(),
        paymentId: Nullable(Type.String()),
        status: Type.Union([Type.Literal('captured'), Type.Literal('failed')]),
        amountMinor: Kurus,
        chargedAt: Timestamp,
      }),
      { description: 'Every charge attempt, newest first; dunning retries are separate items.' },
    ),
    nextCursor: Nullable(Type.String()),
  },
  { title: 'SubscriptionChargeList' },
)

export const CancelBody = Type.Object(
  {
    atPeriodEnd: Type.Boolean({ description: 'false = now; true = at nextChargeAt, no charge' }),
    reason: Type.Optional(Type.String({ minLength: 1, maxLength: 500, pattern: PRINTABLE })),
  },
  { additionalProperties: false },
)

export const CancelResponse = Type.Object({
  id: Type.String(),
  status: Status,
  cancelAtPeriodEnd: Type.Boolean(),
})

export const StatusResponse = Type.Object({ id: Type.String(), status: Status })

export const RetryResponse = Type.Object({
  id: Type.String(),
  status: Status,
  nextChargeAt: Nullable(Timestamp),
})

export const ChargeNowReceipt = Type.Object({
  status: Type.Literal('queuing'),
  subscriptionId: Type.String(),
  expectedAt: Timestamp,
  checkAt: Type.String({ description: 'the retrieval path to poll until status leaves charging' }),
})

export const PortalView = Type.Object(
  {
    publicHash: Type.String(),
    merchantName: Type.String(),
    status: Status,
    amountMinor: Kurus,
    currency: Currency,
    intervalCount: Type.Integer(),
    intervalUnit: IntervalUnit,
    cardLast4: Type.String(),
    cardBrand: Type.String(),
    nextChargeAt: Nullable(Timestamp),
    cancelAtPeriodEnd: Type.Boolean(),
  },
  { title: 'SubscriptionPortalView' },
)

export const PortalCancelBody = Type.Object(
  { atPeriodEnd: Type.Optional(Type.Boolean({ default: true })) },
  { additionalProperties: false },
)

export const PortalCancelResponse = Type.Object({
  publicHash: Type.String(),
  status: Status,
  cancelAtPeriodEnd: Type.Boolean(),
})

export const UpdateCardSession = Type.Object({
  sessionId: Type.String(),
  checkoutUrl: Type.String(),
  expiresAt: Timestamp,
})

// Sandbox test clocks (docs/decisions/0031-test-clocks.md).

const TestClockId = Type.String({ pattern: '^clk_[0-9a-z]+$', maxLength: 64 })
export const TestClockParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) })

export const CreateTestClockBody = Type.Object(
  {
    frozenTime: Type.String({
      format: 'date-time',
      description: 'The time the clock starts at (past or future).',
    }),
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200, pattern: PRINTABLE })),
  },
  { additionalProperties: false },
)

export const AdvanceTestClockBody = Type.Object(
  {
    frozenTime: Type.String({
      format: 'date-time',
      description: "The new time: after the clock's frozenTime, at most two years on.",
    }),
  },
  { additionalProperties: false },
)

export const TestClockSchema = Type.Object(
  {
    id: TestClockId,
    name: Nullable(Type.String()),
    frozenTime: Timestamp,
    status: Type.Union([Type.Literal('ready'), Type.Literal('advancing')], {
      description: '`advancing` while an advance runs; another advance or delete is then 409.',
    }),
    createdAt: Timestamp,
  },
  {
    title: 'TestClock',
    examples: [
      {
        id: 'clk_01jd8z1a2b3c4d5e6f7g8h9j0k',
        name: 'yearly renewal test',
        frozenTime: '2027-01-01T00:00:00Z',
        status: 'ready',
        createdAt: '2026-11-27T10:00:00Z',
      },
    ],
  },
)

export const TestClockList = Type.Object(
  { items: Type.Array(TestClockSchema) },
  { title: 'TestClockList' },
)
