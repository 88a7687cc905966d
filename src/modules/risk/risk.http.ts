import type { FastifyPluginAsync } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import type { Deps } from '../../database.ts'
import { authOf } from '../../platform/http/auth.ts'
import { answerOnce, recordWith } from '../../platform/http/idempotent-answer.ts'
import { errorResponses, isoZ } from '../../platform/http/schemas.ts'
import type { Payment } from '../payments/index.ts'
import {
  AddListItemBody,
  BacktestBody,
  BacktestSchema,
  CreateRuleBody,
  EmptyBody,
  ListItemList,
  ListItemParams,
  ListItemSchema,
  ListParams,
  PageQuery,
  ReviewList,
  ReviewListQuery,
  ReviewParams,
  ReviewSchema,
  RuleList,
  RuleParams,
  RuleSchema,
  UpdateRuleBody,
} from './risk.schemas.ts'
import {
  addListItem,
  backtestRule,
  createRule,
  deleteRule,
  getRule,
  listListItems,
  listNamed,
  listRules,
  removeListItem,
  updateRule,
  type ListItem,
  type Rule,
} from './risk.service.ts'
import {
  approveReview,
  getReview,
  listReviews,
  rejectReview,
  type Review,
} from './reviews.service.ts'

const tags = ['risk']
const NoContent = Type.Null({ description: 'No body' })

function itemJson(i: ListItem) {
  return { id: i.id, list: i.list, value: i.value, note: i.note, createdAt: isoZ(i.createdAt) }
}

function ruleJson(r: Rule) {
  return {
    id: r.id,
    name: r.name,
    action: r.action,
    condition: r.condition,
    enabled: r.enabled,
    createdAt: isoZ(r.createdAt),
    updatedAt: isoZ(r.updatedAt),
  }
}

function reviewJson(r: Review, payment?: Payment) {
  return {
    id: r.id,
    paymentId: r.paymentId,
    status: r.status,
    closedReason: r.closedReason,
    reasons: r.reasons,
    ...(payment ? { paymentStatus: payment.status } : {}),
    createdAt: isoZ(r.createdAt),
    closedAt: isoZ(r.closedAt),
  }
}

/** Signed risk routes (merchant keys): block lists, rules, backtests and reviews. */
export function riskRoutes(deps: Deps): FastifyPluginAsync {
  return async (plain) => {
    const app = plain.withTypeProvider<TypeBoxTypeProvider>()

    app.post(
      '/v1/risk/lists/:list/items',
      {
        schema: {
          operationId: 'risk.listItems.add',
          tags,
          summary: 'Add a value to a block list',
          description:
            'A charge or hosted-page payment whose fact is on a list is blocked (402 SVC-RISK-3701).',
          params: ListParams,
          body: AddListItemBody,
          response: { 201: ListItemSchema, ...errorResponses },
        },
      },
      async (request, reply) => {
        // The change and its recorded answer commit together (decision 0035), here and below.
        const port = request.idempotentAnswer
        return answerOnce(
          reply,
          port,
          () =>
            addListItem(
              deps,
              authOf(request).merchantId,
              listNamed(request.params.list),
              request.body,
              recordWith(port, 201, itemJson),
            ),
          (item) => reply.code(201).send(itemJson(item)),
        )
      },
    )

    app.get(
      '/v1/risk/lists/:list/items',
      {
        schema: {
          operationId: 'risk.listItems.list',
          tags,
          summary: "A block list's values, newest first",
          description:
            'The values on one block list (`card_fingerprint`, `email`, `ip`, `bin` or `customer_id`), newest first, in pages of `limit` with a keyset `nextCursor`. Another list name is 404 SVC-RES-3301.',
          params: ListParams,
          querystring: PageQuery,
          response: { 200: ListItemList, ...errorResponses },
        },
      },
      async (request) => {
        const page = await listListItems(
          deps,
          authOf(request).merchantId,
          listNamed(request.params.list),
          request.query,
        )
        return { items: page.items.map(itemJson), nextCursor: page.nextCursor }
      },
    )

    app.delete(
      '/v1/risk/lists/:list/items/:id',
      {
        schema: {
          operationId: 'risk.listItems.remove',
          tags,
          summary: 'Remove a value from a block list',
          description:
            'Takes the value off the list: charges are no longer blocked by it. 404 SVC-RES-3301 for an unknown list or item.',
          params: ListItemParams,
          response: { 204: NoContent, ...errorResponses },
        },
      },
      async (request, reply) => {
        const { list, id } = request.params
        const port = request.idempotentAnswer
        return answerOnce(
          reply,
          port,
          () =>
            removeListItem(
              deps,
              authOf(request).merchantId,
              listNamed(list),
              id,
              recordWith(port, 204, () => null),
            ),
          () => reply.code(204).send(null),
        )
      },
    )

    app.post(
      '/v1/risk/rules',
      {
        schema: {
          operationId: 'risk.rules.create',
          tags,
          summary: 'Create a risk rule (at most 100 per merchant)',
          description:
            'When `condition` (JSON Logic over the facts of docs/risk.md) holds for a charge, ' +
            '`action` applies: block > require_3ds > review > allow.',
          body: CreateRuleBody,
          response: { 201: RuleSchema, ...errorResponses },
        },
      },
      async (request, reply) => {
        const port = request.idempotentAnswer
        return answerOnce(
          reply,
          port,
          () =>
            createRule(
              deps,
              authOf(request).merchantId,
              request.body,
              recordWith(port, 201, ruleJson),
            ),
          (rule) => reply.code(201).send(ruleJson(rule)),
        )
      },
    )

    app.get(
      '/v1/risk/rules',
      {
        schema: {
          operationId: 'risk.rules.list',
          tags,
          summary: "The merchant's rules, oldest first",
          description:
            "All of the merchant's rules (at most 100), oldest first, enabled or not; not paginated.",
          response: { 200: RuleList, ...errorResponses },
        },
      },
      async (request) => ({
        items: (await listRules(deps, authOf(request).merchantId)).map(ruleJson),
      }),
    )

    app.post(
      '/v1/risk/rules/backtest',
      {
        schema: {
          operationId: 'risk.rules.backtest',
          tags,
          summary: 'Replay a condition over the last 30 days of card payments',
          description:
            "Evaluates `condition` (JSON Logic, checked as at creation: 400 SVC-VAL-3001 when invalid) against the risk facts stored with the merchant's card payments of the last 30 days, changing nothing: how many were evaluated and matched, the matched amount, and a sample of matching payment ids.",
          body: BacktestBody,
          response: { 200: BacktestSchema, ...errorResponses },
        },
      },
      async (request) => backtestRule(deps, authOf(request).merchantId, request.body.condition),
    )

    app.get(
      '/v1/risk/rules/:id',
      {
        schema: {
          operationId: 'risk.rules.get',
          tags,
          summary: 'Retrieve a rule',
          description: "404 SVC-RES-3301 for an unknown or another merchant's rule.",
          params: RuleParams,
          response: { 200: RuleSchema, ...errorResponses },
        },
      },
      async (request) =>
        ruleJson(await getRule(deps, authOf(request).merchantId, request.params.id)),
    )

    app.patch(
      '/v1/risk/rules/:id',
      {
        schema: {
          operationId: 'risk.rules.update',
          tags,
          summary: "Change a rule's name, condition or enabled flag",
          description:
            'Only the fields sent change; a new `condition` is checked as at creation (400 SVC-VAL-3001). Takes effect on the next charge; 404 SVC-RES-3301 for an unknown rule.',
          params: RuleParams,
          body: UpdateRuleBody,
          response: { 200: RuleSchema, ...errorResponses },
        },
      },
      async (request, reply) => {
        const port = request.idempotentAnswer
        return answerOnce(
          reply,
          port,
          () =>
            updateRule(
              deps,
              authOf(request).merchantId,
              request.params.id,
              request.body,
              recordWith(port, 200, ruleJson),
            ),
          (rule) => reply.send(ruleJson(rule)),
        )
      },
    )

    app.delete(
      '/v1/risk/rules/:id',
      {
        schema: {
          operationId: 'risk.rules.delete',
          tags,
          summary: 'Delete a rule',
          description:
            'The rule no longer applies to new charges; payments it already judged keep their risk outcome. 404 SVC-RES-3301 for an unknown rule.',
          params: RuleParams,
          response: { 204: NoContent, ...errorResponses },
        },
      },
      async (request, reply) => {
        const port = request.idempotentAnswer
        return answerOnce(
          reply,
          port,
          () =>
            deleteRule(
              deps,
              authOf(request).merchantId,
              request.params.id,
              recordWith(port, 204, () => null),
            ),
          () => reply.code(204).send(null),
        )
      },
    )

    app.get(
      '/v1/reviews',
      {
        schema: {
          operationId: 'reviews.list',
          tags,
          summary: 'Reviews, newest first',
          description:
            'Reviews opened by `review` rules, newest first, in pages of `limit` with a keyset `nextCursor`; `status` filters open or closed ones.',
          querystring: ReviewListQuery,
          response: { 200: ReviewList, ...errorResponses },
        },
      },
      async (request) => {
        const page = await listReviews(deps, authOf(request).merchantId, request.query)
        return { items: page.items.map((r) => reviewJson(r)), nextCursor: page.nextCursor }
      },
    )

    app.get(
      '/v1/reviews/:id',
      {
        schema: {
          operationId: 'reviews.get',
          tags,
          summary: 'Retrieve a review',
          description:
            'The review with its payment id and status, the reasons (rules) that opened it and, once closed, `closedReason`; 404 SVC-RES-3301 for an unknown review.',
          params: ReviewParams,
          response: { 200: ReviewSchema, ...errorResponses },
        },
      },
      async (request) =>
        reviewJson(await getReview(deps, authOf(request).merchantId, request.params.id)),
    )

    app.post(
      '/v1/reviews/:id/approve',
      {
        config: { requireKyc: true },
        schema: {
          operationId: 'reviews.approve',
          tags,
          summary: 'Approve: captures the payment when its charge asked for capture',
          description:
            'Closes the open review as `approved` (`review.closed`) and, when the charge asked for capture, captures the held authorization. The payment must still be `authorized` (else 409 SVC-STATE-3401); a review closed another way is 409 SVC-STATE-3401, one already approved is answered as it is. Needs KYC `approved`.',
          params: ReviewParams,
          body: EmptyBody,
          response: { 200: ReviewSchema, ...errorResponses },
        },
      },
      async (request, reply) => {
        const port = request.idempotentAnswer
        return answerOnce(
          reply,
          port,
          () =>
            approveReview(
              deps,
              authOf(request).merchantId,
              request.params.id,
              port
                ? (tx, review, payment) => port.record(tx, 200, reviewJson(review, payment))
                : undefined,
            ),
          (out) => reply.send(reviewJson(out.review, out.payment)),
        )
      },
    )

    app.post(
      '/v1/reviews/:id/reject',
      {
        schema: {
          operationId: 'reviews.reject',
          tags,
          summary: 'Reject: voids the authorization',
          description:
            'Voids the held authorization (void reason `review_rejected`) and closes the review as `rejected` (`review.closed`). The payment must still be `authorized` (else 409 SVC-STATE-3401); a review closed another way is 409 SVC-STATE-3401, one already rejected is answered as it is.',
          params: ReviewParams,
          body: EmptyBody,
          response: { 200: ReviewSchema, ...errorResponses },
        },
      },
      async (request, reply) => {
        const port = request.idempotentAnswer
        return answerOnce(
          reply,
          port,
          () =>
            rejectReview(
              deps,
              authOf(request).merchantId,
              request.params.id,
              port
                ? (tx, review, payment) => port.record(tx, 200, reviewJson(review, payment))
                : undefined,
            ),
          (out) => reply.send(reviewJson(out.review, out.payment)),
        )
      },
    )
  }
}
