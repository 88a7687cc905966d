import { Type } from 'typebox'
import { AMOUNT_MINOR_MAX, StatusEnum, Timestamp } from '../../platform/http/schemas.ts'
import { Metadata } from '../../platform/metadata.ts'
import { DRAFTS, PAYOUTS } from './payouts.table.ts'

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) =>
  Type.Union([t, Type.Null()])
const Currency = Type.Literal('TRY', { description: 'The only currency is TRY.' })
const Rail = Type.Union([Type.Literal('fast'), Type.Literal('eft'), Type.Literal('card')])
const PayoutStatus = StatusEnum('PayoutStatus', PAYOUTS)
const DraftStatus = StatusEnum('PayoutDraftStatus', DRAFTS)

// A draft row's business rules (rail, dest, holderName, amount, currency) are checked per
// row and reported, so a bad row never rejects the other 999. Only the shape is checked
// here: unknown fields or a wrong JSON type is a 400 for the whole upload.
const DraftRowBody = Type.Object(
  {
    rail: Type.Optional(Type.String({ maxLength: 32, description: '`fast`, `eft` or `card`' })),
    dest: Type.Optional(
      Type.String({
        maxLength: 128,
        description: 'IBAN for fast/eft, card token (`tok_…`) for card; never echoed back',
      }),
    ),
    holderName: Type.Optional(Type.String({ maxLength: 200 })),
    amountMinor: Type.Optional(Type.Number({ description: 'kuruş, an integer > 0' })),
    currency: Type.Optional(Type.String({ maxLength: 8, description: '`TRY`' })),
  },
  { additionalProperties: false },
)

export const CreateDraftBody = Type.Object(
  {
    storeId: Type.String({ minLength: 1, maxLength: 64 }),
    rows: Type.Array(DraftRowBody, { minItems: 1, maxItems: 1000 }),
  },
  { additionalProperties: false },
)

export const DraftResponse = Type.Object({
  draftId: Type.String(),
  storeId: Type.String(),
  status: DraftStatus,
  rowCount: Type.Integer(),
  validCount: Type.Integer(),
  invalidCount: Type.Integer(),
  validTotalMinor: Type.Integer({ description: 'sum of the valid rows, kuruş' }),
  createdAt: Timestamp,
  approvedAt: Nullable(Timestamp),
  cancelledAt: Nullable(Timestamp),
})

export const DraftReport = Type.Object({
  ...DraftResponse.properties,
  rows: Type.Array(
    Type.Object({
      index: Type.Integer({ description: '0-based position in the uploaded rows' }),
      valid: Type.Boolean(),
      errors: Type.Array(Type.String()),
      rail: Nullable(Type.String()),
      holderName: Nullable(Type.String()),
      amountMinor: Nullable(Type.Integer()),
      destMasked: Nullable(Type.String()),
    }),
  ),
})

export const DraftParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) })

export const EmptyBody = Type.Object({}, { additionalProperties: false })

export const ApproveResponse = Type.Object({
  draftId: Type.String(),
  status: Type.Literal('approved'),
  payoutIds: Type.Array(Type.String({ format: 'uuid' })),
  payoutCount: Type.Integer(),
})

export const CreatePayoutBody = Type.Object(
  {
    submerchantId: Type.String({ minLength: 1, maxLength: 64 }),
    rail: Rail,
    amountMinor: Type.Integer({ minimum: 1, maximum: AMOUNT_MINOR_MAX, description: 'kuruş' }),
    currency: Currency,
    clientReference: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
    metadata: Type.Optional(Metadata),
  },
  { additionalProperties: false },
)

export const PayoutResponse = Type.Object(
  {
    payoutId: Type.String({ format: 'uuid' }),
    status: PayoutStatus,
    submerchantId: Nullable(Type.String()),
    draftId: Nullable(Type.String()),
    ownerType: Type.Union([Type.Literal('merchant'), Type.Literal('submerchant')]),
    ownerId: Type.String(),
    kind: Type.Union(
      [Type.Literal('settlement'), Type.Literal('submerchant'), Type.Literal('draft')],
      {
        description:
          "`settlement`: the merchant's available balance to its own bank account on its schedule; `submerchant`: POST /v1/payouts; `draft`: a payout draft's row",
      },
    ),
    rail: Rail,
    arrivalDate: Nullable(
      Type.String({
        format: 'date',
        description: 'Istanbul date the money reaches the bank (settlement payouts)',
      }),
    ),
    bankAccountLast4: Nullable(
      Type.String({ description: 'last four digits of the destination IBAN (null for a card)' }),
    ),
    amountMinor: Type.Integer(),
    currency: Currency,
    holderName: Type.String(),
    destMasked: Type.String(),
    clientReference: Nullable(Type.String()),
    failureCode: Nullable(Type.String()),
    metadata: Metadata,
    createdAt: Timestamp,
    processingAt: Nullable(Timestamp),
    paidAt: Nullable(Timestamp),
    failedAt: Nullable(Timestamp),
  },
  {
    title: 'Payout',
    examples: [
      {
        payoutId: '0b7e5a52-9c1d-4f3e-8a6b-2d4c6e8f0a1b',
        status: 'paid',
        submerchantId: 'sbj_01jd8y1a2b3c4d5e6f7g8h9j0k',
        draftId: null,
        ownerType: 'submerchant',
        ownerId: 'sbj_01jd8y1a2b3c4d5e6f7g8h9j0k',
        kind: 'submerchant',
        rail: 'fast',
        arrivalDate: null,
        bankAccountLast4: '1326',
        amountMinor: 250000,
        currency: 'TRY',
        holderName: 'Mehmet Kaya',
        destMasked: 'TR33 **** **** **** **** 1326',
        clientReference: 'HAKEDIS-2026-11',
        failureCode: null,
        metadata: {},
        createdAt: '2026-11-26T07:00:00Z',
        processingAt: '2026-11-26T07:00:02Z',
        paidAt: '2026-11-26T07:00:09Z',
        failedAt: null,
      },
    ],
  },
)

export const PayoutParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) })

export const ListPayoutsQuery = Type.Object(
  {
    status: Type.Optional(PayoutStatus),
    kind: Type.Optional(
      Type.Union([Type.Literal('settlement'), Type.Literal('submerchant'), Type.Literal('draft')]),
    ),
    submerchantId: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    from: Type.Optional(Type.String({ format: 'date-time', description: 'inclusive' })),
    to: Type.Optional(Type.String({ format: 'date-time', description: 'exclusive' })),
    limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
    cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 2048 })),
  },
  { additionalProperties: false },
)

export const PayoutList = Type.Object(
  {
    items: Type.Array(PayoutResponse),
    nextCursor: Nullable(Type.String()),
  },
  { title: 'PayoutList' },
)

export const BalanceList = Type.Object({
  items: Type.Array(
    Type.Object({
      ownerType: Type.Union([Type.Literal('merchant'), Type.Literal('submerchant')]),
      ownerId: Type.String(),
      reserveMinor: Type.Integer({ description: 'captured, inside the settlement delay' }),
      availableMinor: Type.Integer({ description: 'payable now' }),
      payoutPendingMinor: Type.Integer({ description: 'in payouts not yet paid or failed' }),
      currency: Currency,
    }),
  ),
})

export const BankAccountBody = Type.Object(
  {
    iban: Type.String({
      minLength: 1,
      maxLength: 64,
      description: 'a Turkish IBAN (TR, 26 characters, mod-97 check digits; spaces allowed)',
    }),
    holderName: Type.String({
      minLength: 1,
      maxLength: 200,
      description:
        "the account holder as the bank knows it: 2–140 characters, letters, digits, spaces and . , ' & ( ) / -",
    }),
  },
  { additionalProperties: false },
)

export const BankAccountResponse = Type.Object(
  {
    ibanMasked: Type.String({
      description: 'first and last four characters; the IBAN is never echoed',
    }),
    last4: Type.String(),
    holderName: Type.String(),
    payoutsHeldUntil: Nullable(Timestamp),
    updatedAt: Timestamp,
  },
  { title: 'BankAccount' },
)

const Interval = Type.Union(
  [Type.Literal('daily'), Type.Literal('weekly'), Type.Literal('monthly'), Type.Literal('manual')],
  { description: '`manual`: no automatic payouts (the balance accrues)' },
)

export const PayoutScheduleBody = Type.Object(
  {
    interval: Interval,
    anchor: Type.Optional(
      Nullable(
        Type.Union([Type.String({ maxLength: 16 }), Type.Integer()], {
          description:
            'weekly: monday…sunday (default monday); monthly: day of month 1–31 (default 1; a shorter month pays on its last day)',
        }),
      ),
    ),
    minimumMinor: Type.Optional(
      Type.Integer({ minimum: 0, description: 'pay only when the available balance reaches it' }),
    ),
  },
  { additionalProperties: false },
)

export const PayoutScheduleResponse = Type.Object(
  {
    interval: Interval,
    anchor: Nullable(Type.String()),
    minimumMinor: Type.Integer(),
    nextRunDate: Nullable(Type.String({ format: 'date', description: 'Istanbul date' })),
    updatedAt: Nullable(Timestamp),
  },
  { title: 'PayoutSchedule' },
)

export const PayoutBalanceTransactionsQuery = Type.Object(
  {
    limit: Type.Integer({ minimum: 1, maximum: 100, default: 100 }),
    cursor: Type.Optional(Type.String({ maxLength: 512 })),
  },
  { additionalProperties: false },
)

export const PayoutBalanceTransactionList = Type.Object(
  {
    items: Type.Array(
      Type.Object({
        balanceTransactionId: Type.String(),
        type: Type.String({
          description:
            'charge, refund, chargeback, chargeback_reversal, payout, payout_failure, adjustment',
        }),
        sourceId: Type.String({ description: 'the payment, refund, chargeback or payout' }),
        amountMinor: Type.Integer({ description: 'gross: net + fee' }),
        feeMinor: Type.Integer(),
        netMinor: Type.Integer(),
        settledMinor: Type.Integer({
          description:
            'the part of it this payout carried; the items of a payout sum to its amount',
        }),
        createdAt: Timestamp,
      }),
    ),
    nextCursor: Nullable(Type.String()),
  },
  { title: 'PayoutBalanceTransactionList' },
)
