import { Type } from 'typebox'
import { Timestamp } from '../../platform/http/schemas.ts'
import { ChargebackStatusSchema } from '../disputes/index.ts'
import {
  PaymentListQuerySchema,
  PaymentStatusSchema,
  RefundStatusSchema,
} from '../payments/index.ts'

const Currency = Type.Literal('TRY')
const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) =>
  Type.Union([t, Type.Null()])

// Statuses are the owning modules' state machines (payments, disputes), through their index:
// transactions.table.ts does not import this file, so no cycle runs through database.ts.
export const PaymentStatus = PaymentStatusSchema
const Method = Type.Union([Type.Literal('card'), Type.Literal('qr')])
const Id = Type.String({ minLength: 1, maxLength: 128 })
const Kurus = (description: string) =>
  Type.Integer({ minimum: 0, maximum: 10_000_000_000, description })
const From = Type.String({ format: 'date-time', description: 'createdAt lower bound, inclusive' })
const To = Type.String({ format: 'date-time', description: 'createdAt upper bound, exclusive' })

// The same filters as GET /v1/payments: the payments module owns the one list of payments.
export const TransactionsQuery = PaymentListQuerySchema

export const TransactionParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 128 }) })
export const ExportParams = Type.Object({
  exportId: Type.String({ minLength: 1, maxLength: 128 }),
})

export const TransactionListItem = Type.Object(
  {
    id: Type.String(),
    storeId: Type.String(),
    transactionId: Type.String(),
    status: PaymentStatus,
    method: Method,
    amount: Type.Integer(),
    currency: Currency,
    refundsCount: Type.Integer({ description: 'refund records completed or in flight' }),
    chargebacksCount: Type.Integer({
      description: 'chargeback records; 0 until the disputes module supplies them',
    }),
    createdAt: Timestamp,
  },
  {
    title: 'Transaction',
    examples: [
      {
        id: 'pay_01jd8x5q2m4k7r9t1v3w5y7z9a',
        storeId: 'sto_01jd8x0b1c2d3e4f5g6h7j8k9m',
        transactionId: 'SIP-1042',
        status: 'captured',
        method: 'card',
        amount: 15000,
        currency: 'TRY',
        refundsCount: 0,
        chargebacksCount: 0,
        createdAt: '2026-11-22T10:00:00Z',
      },
    ],
  },
)

export const TransactionList = Type.Object(
  {
    items: Type.Array(TransactionListItem),
    nextCursor: Nullable(Type.String()),
  },
  { title: 'TransactionList' },
)

export const TransactionRefund = Type.Object({
  refundId: Type.String(),
  amount: Type.Integer(),
  status: RefundStatusSchema,
  reason: Nullable(Type.String()),
  createdAt: Timestamp,
  completedAt: Nullable(Timestamp),
})

export const TransactionChargeback = Type.Object({
  chargebackId: Type.String(),
  amount: Type.Integer(),
  status: ChargebackStatusSchema,
  reasonCode: Type.String(),
  receivedAt: Timestamp,
})

export const TransactionDetail = Type.Object(
  {
    id: Type.String(),
    storeId: Type.String(),
    transactionId: Type.String(),
    method: Method,
    status: PaymentStatus,
    amount: Type.Integer(),
    currency: Currency,
    commission: Type.Integer(),
    netAmount: Type.Integer(),
    customerId: Nullable(Type.String()),
    refundAmount: Type.Integer({ description: 'completed plus in-flight refunds' }),
    refunds: Type.Array(TransactionRefund),
    refundsCount: Type.Integer(),
    chargebacks: Type.Array(TransactionChargeback, {
      description: 'empty until the disputes module supplies chargeback records',
    }),
    chargebacksCount: Type.Integer(),
    chargebackOpenAmount: Type.Integer(),
    chargebackTotalAmount: Type.Integer(),
    createdAt: Timestamp,
    completedAt: Nullable(Timestamp),
  },
  { title: 'TransactionDetail' },
)

export const LedgerLegList = Type.Object(
  {
    items: Type.Array(
      Type.Object({
        accountType: Type.String({ examples: ['buyer_pending'] }),
        direction: Type.Union([Type.Literal('DEBIT'), Type.Literal('CREDIT')]),
        amount: Type.Integer(),
        currency: Currency,
        ownerType: Type.Union([
          Type.Literal('platform'),
          Type.Literal('merchant'),
          Type.Literal('submerchant'),
        ]),
        ownerId: Type.String(),
      }),
    ),
  },
  { title: 'LedgerLegList' },
)

export const ExportFilters = Type.Object(
  {
    storeId: Type.Optional(Id),
    status: Type.Optional(PaymentStatus),
    from: Type.Optional(From),
    to: Type.Optional(To),
    amountMin: Type.Optional(Kurus('kuruş, inclusive')),
    amountMax: Type.Optional(Kurus('kuruş, inclusive')),
    customerId: Type.Optional(Id),
    paymentId: Type.Optional(Id),
  },
  { additionalProperties: false },
)

export const CreateExportBody = Type.Object(
  {
    format: Type.Union([Type.Literal('csv'), Type.Literal('pdf')]),
    filters: Type.Optional(ExportFilters),
  },
  { additionalProperties: false },
)

export const ExportResponse = Type.Object(
  {
    exportId: Type.String({ examples: ['exp_0123456789abcdefghjkmnpq'] }),
    status: Type.Union([
      Type.Literal('queued'),
      Type.Literal('processing'),
      Type.Literal('ready'),
      Type.Literal('failed'),
      Type.Literal('expired'),
    ]),
    format: Type.Union([Type.Literal('csv'), Type.Literal('pdf')]),
    downloadUrl: Type.String({ description: 'answers 409 until status is ready' }),
    rowCount: Type.Integer({ description: 'rows written so far; final once ready' }),
    filters: ExportFilters,
    createdAt: Timestamp,
    completedAt: Nullable(Timestamp),
    expiresAt: Nullable(Timestamp),
  },
  { title: 'Export' },
)

// Balance transactions and reports (issue 27; docs/reports.md).

const BalanceTransactionType = Type.Union(
  [
    Type.Literal('charge'),
    Type.Literal('refund'),
    Type.Literal('chargeback'),
    Type.Literal('chargeback_reversal'),
    Type.Literal('payout'),
    Type.Literal('payout_failure'),
    Type.Literal('adjustment'),
  ],
  { description: 'what moved the balance' },
)

export const BalanceTransactionsQuery = Type.Object(
  {
    from: Type.Optional(From),
    to: Type.Optional(To),
    type: Type.Optional(BalanceTransactionType),
    payoutId: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 128,
        description: 'only the balance transactions this payout settled (see docs/reports.md)',
      }),
    ),
    limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
    cursor: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 2048,
        description: 'nextCursor of the previous page, sent with the same filters',
      }),
    ),
  },
  { additionalProperties: false },
)

export const BalanceTransaction = Type.Object(
  {
    id: Type.String({ examples: ['btx_0123456789abcdefghjkmnpq'] }),
    type: BalanceTransactionType,
    amount: Type.Integer({ description: 'gross kuruş, signed: net + fee' }),
    fee: Type.Integer({ description: 'platform commission, kuruş (negative when returned)' }),
    net: Type.Integer({ description: 'change of reserve + available balance, kuruş, signed' }),
    currency: Currency,
    status: Type.Union([Type.Literal('pending'), Type.Literal('available')]),
    availableOn: Timestamp,
    sourceId: Type.String({ description: 'the payment, refund, chargeback or payout' }),
    payoutId: Type.Optional(Type.String()),
    createdAt: Timestamp,
  },
  { title: 'BalanceTransaction' },
)

export const BalanceTransactionList = Type.Object(
  { items: Type.Array(BalanceTransaction), nextCursor: Nullable(Type.String()) },
  { title: 'BalanceTransactionList' },
)

const ReportType = Type.Union([
  Type.Literal('balance_summary'),
  Type.Literal('payout_reconciliation'),
])

export const CreateReportBody = Type.Object(
  {
    type: ReportType,
    from: Type.String({ format: 'date-time', description: 'period start, inclusive' }),
    to: Type.String({ format: 'date-time', description: 'period end, exclusive' }),
    format: Type.Union([Type.Literal('csv'), Type.Literal('pdf')]),
  },
  { additionalProperties: false },
)

export const ReportParams = Type.Object({
  reportId: Type.String({ minLength: 1, maxLength: 128 }),
})

export const ReportResponse = Type.Object(
  {
    reportId: Type.String({ examples: ['rpt_0123456789abcdefghjkmnpq'] }),
    type: ReportType,
    status: Type.Union([
      Type.Literal('queued'),
      Type.Literal('processing'),
      Type.Literal('ready'),
      Type.Literal('failed'),
      Type.Literal('expired'),
    ]),
    format: Type.Union([Type.Literal('csv'), Type.Literal('pdf')]),
    from: Timestamp,
    to: Timestamp,
    downloadUrl: Type.String({ description: 'answers 409 until status is ready' }),
    rowCount: Type.Integer({ description: 'rows written so far; final once ready' }),
    createdAt: Timestamp,
    completedAt: Nullable(Timestamp),
    expiresAt: Nullable(Timestamp),
  },
  { title: 'Report' },
)
