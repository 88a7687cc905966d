import { Type } from 'typebox'
import { AMOUNT_MINOR_MAX, StatusEnum, Timestamp } from '../../platform/http/schemas.ts'
import { Metadata } from '../../platform/metadata.ts'
import { KycStatusSchema } from '../merchants/index.ts'
import { PAYMENTS, REFUNDS, SESSIONS } from './payments.table.ts'

const Currency = Type.Literal('TRY', { description: 'The only currency is TRY.' })
const Kurus = (description: string) => Type.Integer({ description })
const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) =>
  Type.Union([t, Type.Null()])

export { Metadata }

export const PaymentStatus = StatusEnum(
  'PaymentStatus',
  PAYMENTS,
  'docs/payments.md: the status table',
)

export const RefundStatus = StatusEnum('RefundStatus', REFUNDS)

export const Split = Type.Object(
  {
    submerchantId: Type.String({ minLength: 1, maxLength: 64 }),
    amountMinor: Type.Integer({
      minimum: 1,
      maximum: AMOUNT_MINOR_MAX,
      description: 'gross share in kuruş',
    }),
  },
  { additionalProperties: false },
)

const Url = Type.String({ format: 'uri', pattern: '^https?://', maxLength: 2048 })

export const CreateSessionBody = Type.Object(
  {
    transactionId: Type.String({ minLength: 1, maxLength: 128 }),
    amount: Type.Optional(
      Type.Integer({ minimum: 1, maximum: AMOUNT_MINOR_MAX, description: 'kuruş' }),
    ),
    currency: Currency,
    description: Type.Optional(Type.String({ maxLength: 500 })),
    returnUrl: Url,
    callbackUrl: Type.Optional(Url),
    installmentEnabled: Type.Optional(Type.Boolean()),
    customerId: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    mode: Type.Optional(
      Type.Union([Type.Literal('payment'), Type.Literal('card_update_only'), Type.Literal('qr')]),
    ),
    splits: Type.Optional(Type.Array(Split, { maxItems: 50 })),
    metadata: Type.Optional(Metadata),
  },
  { additionalProperties: false },
)

export const SessionResponse = Type.Object(
  {
    sessionId: Type.String({ format: 'uuid' }),
    checkoutUrl: Type.String(),
    expiresAt: Timestamp,
    merchantId: Type.String(),
    transactionId: Type.String(),
    mode: Type.String(),
    amount: Nullable(Type.Integer()),
    currency: Currency,
    status: StatusEnum('CheckoutSessionStatus', SESSIONS),
    metadata: Metadata,
  },
  { title: 'CheckoutSession' },
)

export const ChargeBody = Type.Object(
  {
    transactionId: Type.String({ minLength: 1, maxLength: 128 }),
    amount: Type.Integer({
      minimum: 1,
      maximum: AMOUNT_MINOR_MAX,
      description: 'kuruş; must equal the session amount',
    }),
    currency: Currency,
    cardToken: Type.String({ pattern: '^tok_[0-9a-z]+$', maxLength: 64 }),
    installmentCount: Type.Optional(Type.Integer({ minimum: 1, maximum: 12 })),
    threeDSecure: Type.Optional(Type.Boolean()),
    customerId: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    saveCard: Type.Optional(Type.Boolean()),
    capture: Type.Optional(Type.Boolean()),
    metadata: Type.Optional(Metadata),
    ip: Type.Optional(
      Type.String({
        minLength: 2,
        maxLength: 45,
        pattern: '^[0-9A-Fa-f:.]+$',
        description:
          "the buyer's IP address as your site saw it: the risk rules' `ip` fact and the `ip` block list",
      }),
    ),
  },
  { additionalProperties: false },
)

/** card.fingerprint, risk and failureCode on payments (CONTRACT.md "Risk"). */
const RiskFields = {
  card: Nullable(
    Type.Object(
      {
        fingerprint: Type.String({
          description: 'keyed hash of the card number, stable per merchant (not across merchants)',
        }),
      },
      { title: 'PaymentCard' },
    ),
  ),
  risk: Nullable(
    Type.Object(
      {
        decision: Type.Union([
          Type.Literal('allow'),
          Type.Literal('review'),
          Type.Literal('require_3ds'),
          Type.Literal('block'),
        ]),
        score: Type.Integer({
          minimum: 0,
          maximum: 99,
          description: 'signals and weights: docs/risk.md',
        }),
        reasons: Type.Array(Type.String()),
        ruleIds: Type.Array(Type.String()),
      },
      {
        title: 'RiskAssessment',
        description: 'null for payments made before risk checks or without a card',
      },
    ),
  ),
  failureCode: Nullable(
    Type.String({
      description:
        'why a failed payment failed: the decline code, or `blocked` by a risk rule or list',
    }),
  ),
}

export const ChargeResponse = Type.Object(
  {
    paymentId: Type.String(),
    transactionId: Type.String(),
    status: PaymentStatus,
    amount: Kurus('kuruş'),
    currency: Currency,
    commission: Kurus('kuruş'),
    netAmount: Kurus('amount − commission'),
    cardMask: Nullable(Type.String()),
    cardBrand: Nullable(Type.String()),
    cardType: Nullable(Type.String()),
    installmentCount: Type.Integer(),
    threeDSecure: Type.Boolean(),
    authCode: Nullable(Type.String()),
    ...RiskFields,
    correlationId: Type.Optional(Type.String()),
    challengeUrl: Type.Optional(Type.String()),
    metadata: Metadata,
    createdAt: Timestamp,
    completedAt: Nullable(Timestamp),
  },
  { title: 'Charge' },
)

export const UpdatePaymentBody = Type.Object(
  {
    metadata: Type.Unsafe<Record<string, string>>({
      ...Metadata,
      description:
        'Merged into the payment\'s metadata: a key with a value is added or replaced, a key set to "" is removed.',
    }),
  },
  { additionalProperties: false },
)

export const PaymentParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) })

export const ThreeDsBody = Type.Object(
  {
    pares: Type.String({ minLength: 1, maxLength: 4096 }),
    correlationId: Type.String({ minLength: 1, maxLength: 128 }),
  },
  { additionalProperties: false },
)

export const ThreeDsResponse = Type.Object({
  id: Type.String(),
  status: PaymentStatus,
  amount: Type.Integer(),
  currency: Currency,
  commission: Type.Integer(),
  netAmount: Type.Integer(),
  authCode: Nullable(Type.String()),
  completedAt: Nullable(Timestamp),
})

export const EmptyBody = Type.Object({}, { additionalProperties: false })

export const CaptureBody = Type.Object(
  {
    amount: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: AMOUNT_MINOR_MAX,
        description: 'kuruş; omitted = the whole uncaptured remainder; more than it is 400',
      }),
    ),
    final: Type.Optional(
      Type.Boolean({
        default: true,
        description:
          'true: release the rest of the authorization (→ captured); false: keep it open for more captures (→ partially_captured)',
      }),
    ),
  },
  { additionalProperties: false },
)

export const CaptureSummary = Type.Object(
  {
    id: Type.String({ description: 'cap_…' }),
    amount: Kurus('kuruş captured by this capture'),
    createdAt: Timestamp,
  },
  { title: 'Capture' },
)

export const CaptureResponse = Type.Object({
  id: Type.String(),
  status: PaymentStatus,
  amount: Kurus('the authorized amount'),
  capturedAmount: Kurus('sum of the captures'),
  currency: Currency,
  commission: Kurus('pro rata of the captured amount (docs/payments.md)'),
  netAmount: Kurus('capturedAmount − commission'),
  refundableAmount: Type.Integer(),
  captures: Type.Array(CaptureSummary),
  completedAt: Nullable(Timestamp),
})

export const VoidBody = Type.Object(
  { reason: Type.Optional(Type.String({ maxLength: 500 })) },
  { additionalProperties: false },
)

export const VoidResponse = Type.Object({
  id: Type.String(),
  status: PaymentStatus,
  amount: Type.Integer(),
  currency: Currency,
  capturedAmount: Kurus(
    'what stays captured: 0 after a void, the captures after a partially captured payment’s remainder is released',
  ),
})

/** A captured card payment, as GET /v1/payments/{id} shows it (the document's example). */
const PAYMENT_EXAMPLE = {
  id: 'pay_01jd8x5q2m4k7r9t1v3w5y7z9a',
  merchantId: 'mrc_01jd8x0a1b2c3d4e5f6g7h8j9k',
  storeId: 'sto_01jd8x0b1c2d3e4f5g6h7j8k9m',
  transactionId: 'SIP-1042',
  method: 'card',
  status: 'captured',
  amount: 15000,
  capturedAmount: 15000,
  currency: 'TRY',
  commission: 435,
  netAmount: 14565,
  captures: [
    { id: 'cap_01jd8x5s3n5m8s0u2w4x6z8b0c', amount: 15000, createdAt: '2026-11-22T10:00:05Z' },
  ],
  cardMask: '450803******4318',
  cardBrand: 'visa',
  cardType: 'credit',
  bin: '45080300',
  installmentCount: 1,
  threeDSecure: false,
  authCode: '123456',
  declineCode: null,
  card: { fingerprint: 'fp_3b1f0c9e5a7d2b4c' },
  risk: { decision: 'allow', score: 12, reasons: [], ruleIds: [] },
  failureCode: null,
  refundAmount: 0,
  refundableAmount: 15000,
  customerId: null,
  metadata: { orderId: 'SIP-1042' },
  paymentLinkId: null,
  subscriptionId: null,
  subscriptionCycle: null,
  createdAt: '2026-11-22T10:00:00Z',
  completedAt: '2026-11-22T10:00:05Z',
}

export const PaymentResponse = Type.Object(
  {
    acquirer: Type.Optional(
      Type.Object(
        {
          posAccountId: Type.Union([Type.String(), Type.Null()]),
          provider: Type.Union([Type.String(), Type.Null()]),
          bank: Type.Union([Type.String(), Type.Null()]),
          authCode: Type.Union([Type.String(), Type.Null()]),
          hostReference: Type.Union([Type.String(), Type.Null()]),
          attempts: Type.Array(
            Type.Object({
              posAccountId: Type.String(),
              outcome: Type.String(),
              bankCode: Type.Union([Type.String(), Type.Null()]),
            }),
          ),
        },
        { description: 'The bank POS that took the payment (absent on the sandbox bank)' },
      ),
    ),
    id: Type.String(),
    merchantId: Type.String(),
    storeId: Type.String(),
    transactionId: Type.String(),
    method: Type.String(),
    status: PaymentStatus,
    amount: Kurus('the authorized amount'),
    capturedAmount: Kurus('sum of the captures'),
    currency: Currency,
    commission: Kurus('of the captured amount once anything is captured, else of amount'),
    netAmount: Kurus('(capturedAmount, or amount before any capture) − commission'),
    captures: Type.Array(CaptureSummary),
    cardMask: Nullable(Type.String()),
    cardBrand: Nullable(Type.String()),
    cardType: Nullable(Type.String()),
    bin: Nullable(Type.String()),
    installmentCount: Type.Integer(),
    threeDSecure: Type.Boolean(),
    authCode: Nullable(Type.String()),
    declineCode: Nullable(Type.String()),
    ...RiskFields,
    refundAmount: Type.Integer(),
    refundableAmount: Type.Integer(),
    customerId: Nullable(Type.String()),
    metadata: Metadata,
    paymentLinkId: Nullable(
      Type.String({ description: 'the payment link (plink_…) the payment was made through' }),
    ),
    subscriptionId: Nullable(
      Type.String({
        description:
          'the subscription (sub_…) a renewal payment renews; null for any other payment. Metadata stays the merchant’s own',
      }),
    ),
    subscriptionCycle: Nullable(
      Type.Integer({ description: 'the cycle a renewal payment pays (1 for the first)' }),
    ),
    createdAt: Timestamp,
    completedAt: Nullable(Timestamp),
  },
  { title: 'Payment', examples: [PAYMENT_EXAMPLE] },
)

const ListId = Type.String({ minLength: 1, maxLength: 128 })

/**
 * The filters of GET /v1/payments, which GET /v1/transactions shares (transactions.schemas.ts
 * takes this schema): one list of payments, two views of each item.
 */
export const PaymentListQuery = Type.Object(
  {
    status: Type.Optional(PaymentStatus),
    storeId: Type.Optional(ListId),
    customerId: Type.Optional(ListId),
    from: Type.Optional(
      Type.String({ format: 'date-time', description: 'createdAt lower bound, inclusive' }),
    ),
    to: Type.Optional(
      Type.String({ format: 'date-time', description: 'createdAt upper bound, exclusive' }),
    ),
    amountMin: Type.Optional(
      Type.Integer({ minimum: 0, maximum: 10_000_000_000, description: 'kuruş, inclusive' }),
    ),
    amountMax: Type.Optional(
      Type.Integer({ minimum: 0, maximum: 10_000_000_000, description: 'kuruş, inclusive' }),
    ),
    method: Type.Optional(Type.Union([Type.Literal('card'), Type.Literal('qr')])),
    limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
    cursor: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 2048,
        description: 'nextCursor of the previous page, sent with the same filters',
      }),
    ),
  },
  {
    additionalProperties: false,
    // metadata.<key>=<value>: one exact pair of the payment's metadata (docs/payments.md).
    patternProperties: {
      '^metadata\\..{1,40}$': Type.String({ maxLength: 500 }),
    },
  },
)

export const PaymentList = Type.Object(
  {
    items: Type.Array(PaymentResponse),
    nextCursor: Type.Union([Type.String(), Type.Null()], {
      description: 'pass as cursor, with the same filters, for the next page; null on the last',
    }),
  },
  { title: 'PaymentList' },
)

export const PublicStatus = Type.Object({ paymentId: Type.String(), status: Type.String() })

export const InstallmentsQuery = Type.Object(
  {
    bin: Type.String({ pattern: '^[0-9]{6,8}$' }),
    amount: Type.Integer({ minimum: 100, maximum: 10_000_000_000 }),
  },
  { additionalProperties: false },
)

export const InstallmentsResponse = Type.Object({
  bin: Type.String(),
  brand: Type.String(),
  cardType: Type.String(),
  bank: Type.String(),
  options: Type.Array(
    Type.Object({
      installmentCount: Type.Integer(),
      installmentAmount: Type.Integer(),
      firstInstallmentAmount: Type.Integer(),
      totalAmount: Type.Integer(),
      commission: Type.Integer(),
    }),
  ),
})

export const ChallengeBody = Type.Object(
  { otp: Type.String({ minLength: 1, maxLength: 16 }) },
  { additionalProperties: false },
)

export const ChallengeResponse = Type.Object({
  pares: Type.String(),
  correlationId: Type.String(),
})

export const RefundBody = Type.Object(
  {
    amount: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: AMOUNT_MINOR_MAX,
        description: 'kuruş; omitted = the whole refundableAmount',
      }),
    ),
    reason: Type.Optional(
      Type.String({ maxLength: 10_000, description: 'kept up to 500 characters' }),
    ),
    metadata: Type.Optional(Metadata),
  },
  { additionalProperties: false },
)

export const RefundSummary = Type.Object(
  {
    refundId: Type.String(),
    status: RefundStatus,
    amount: Type.Integer(),
    reason: Nullable(Type.String()),
    bankRefundId: Nullable(Type.String()),
    metadata: Metadata,
    createdAt: Timestamp,
    completedAt: Nullable(Timestamp),
  },
  {
    title: 'Refund',
    examples: [
      {
        refundId: 'rfn_01jd9b2c3d4e5f6g7h8j9k0m1n',
        status: 'completed',
        amount: 5000,
        reason: 'customer request',
        bankRefundId: 'RF-778812',
        metadata: {},
        createdAt: '2026-11-23T08:30:00Z',
        completedAt: '2026-11-23T08:30:01Z',
      },
    ],
  },
)

export const RefundResponse = Type.Object({
  paymentId: Type.String(),
  status: PaymentStatus,
  refundAmount: Type.Integer(),
  refundableAmount: Type.Integer(),
  lastRefund: RefundSummary,
})

export const RefundList = Type.Object({ items: Type.Array(RefundSummary) }, { title: 'RefundList' })

export const SandboxKycBody = Type.Object(
  { status: KycStatusSchema },
  { additionalProperties: false },
)

export const SandboxKycResponse = Type.Object({
  merchantId: Type.String(),
  status: KycStatusSchema,
  decidedAt: Nullable(Timestamp),
})

export const ReconcileResponse = Type.Object({
  ran: Type.Record(Type.String(), Type.Integer()),
})
