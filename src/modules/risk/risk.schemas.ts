import { Type } from 'typebox'
import { Timestamp } from '../../platform/http/schemas.ts'

// Shapes only; list values and rule conditions are checked by the service.

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) =>
  Type.Union([t, Type.Null()])

const Id = Type.String({ minLength: 1, maxLength: 64 })
const PRINTABLE = '^[^\\u0000-\\u001f\\u007f]+$'

export const ListName = Type.Union(
  [
    Type.Literal('card_fingerprint'),
    Type.Literal('email'),
    Type.Literal('ip'),
    Type.Literal('bin'),
    Type.Literal('customer_id'),
  ],
  { description: 'which fact of a charge the list holds' },
)

// The list names a kind, not a row: any other name is 404 (no such list), like an unknown id.
const ListParam = Type.String({
  minLength: 1,
  maxLength: 64,
  description: 'card_fingerprint, email, ip, bin or customer_id',
  examples: ['card_fingerprint'],
})
export const ListParams = Type.Object({ list: ListParam })
export const ListItemParams = Type.Object({ list: ListParam, id: Id })

export const AddListItemBody = Type.Object(
  {
    value: Type.String({
      minLength: 1,
      maxLength: 254,
      pattern: PRINTABLE,
      description:
        'card_fingerprint: a card.fingerprint; email: an address (compared lowercased); ip: IPv4 or IPv6; bin: 6 digits; customer_id: cus_…',
    }),
    note: Type.Optional(Type.String({ maxLength: 500, pattern: PRINTABLE })),
  },
  { additionalProperties: false },
)

export const ListItemSchema = Type.Object(
  {
    id: Type.String({ examples: ['rli_0123456789abcdefghjkmnpq'] }),
    list: ListName,
    value: Type.String(),
    note: Nullable(Type.String()),
    createdAt: Timestamp,
  },
  { title: 'RiskListItem' },
)

export const PageQuery = Type.Object(
  {
    limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
    cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 2048 })),
  },
  { additionalProperties: false },
)

export const ListItemList = Type.Object({
  items: Type.Array(ListItemSchema),
  nextCursor: Nullable(Type.String()),
})

export const RuleAction = Type.Union([
  Type.Literal('block'),
  Type.Literal('review'),
  Type.Literal('require_3ds'),
])

const Condition = Type.Record(Type.String(), Type.Unknown(), {
  description:
    'a JSON Logic operation over the facts of docs/risk.md, e.g. {">": [{"var": "velocity.cardAttempts1h"}, 3]}; ' +
    'an unknown operator or fact is 400',
  examples: [{ '>=': [{ var: 'amount' }, 500000] }],
})

const RuleName = Type.String({ minLength: 1, maxLength: 100, pattern: PRINTABLE })

export const CreateRuleBody = Type.Object(
  {
    name: RuleName,
    action: RuleAction,
    condition: Condition,
    enabled: Type.Optional(Type.Boolean({ default: true })),
  },
  { additionalProperties: false },
)

export const UpdateRuleBody = Type.Object(
  {
    name: Type.Optional(RuleName),
    enabled: Type.Optional(Type.Boolean()),
    condition: Type.Optional(Condition),
  },
  { additionalProperties: false, minProperties: 1 },
)

export const RuleParams = Type.Object({ id: Id })

export const RuleSchema = Type.Object(
  {
    id: Type.String({ examples: ['rule_0123456789abcdefghjkmnpq'] }),
    name: Type.String(),
    action: RuleAction,
    condition: Type.Unknown(),
    enabled: Type.Boolean(),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { title: 'RiskRule' },
)

export const RuleList = Type.Object({ items: Type.Array(RuleSchema) })

export const BacktestBody = Type.Object({ condition: Condition }, { additionalProperties: false })

export const BacktestSchema = Type.Object(
  {
    evaluated: Type.Integer({ description: 'card payments of the last 30 days with stored facts' }),
    matched: Type.Integer(),
    matchedAmount: Type.Integer({ description: 'kuruş: the sum of the matched payments’ amounts' }),
    samplePaymentIds: Type.Array(Type.String(), { description: 'up to 10, newest first' }),
  },
  { title: 'RiskBacktest' },
)

export const ReviewStatus = Type.Union([Type.Literal('open'), Type.Literal('closed')])

export const ReviewSchema = Type.Object(
  {
    id: Type.String({ examples: ['rev_0123456789abcdefghjkmnpq'] }),
    paymentId: Type.String(),
    status: ReviewStatus,
    closedReason: Nullable(
      Type.Union([Type.Literal('approved'), Type.Literal('rejected'), Type.Literal('expired')]),
    ),
    reasons: Type.Array(Type.String()),
    paymentStatus: Type.Optional(Type.String({ description: 'after approve / reject' })),
    createdAt: Timestamp,
    closedAt: Nullable(Timestamp),
  },
  { title: 'Review' },
)

export const ReviewListQuery = Type.Object(
  {
    status: Type.Optional(ReviewStatus),
    limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
    cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 2048 })),
  },
  { additionalProperties: false },
)

export const ReviewList = Type.Object({
  items: Type.Array(ReviewSchema),
  nextCursor: Nullable(Type.String()),
})

export const ReviewParams = Type.Object({ id: Id })
export const EmptyBody = Type.Object({}, { additionalProperties: false })
