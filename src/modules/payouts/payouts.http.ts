import type { FastifyPluginAsync, FastifyRequest } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { Deps } from '../../database.ts'
import { authOf } from '../../platform/http/auth.ts'
import { errorResponses, isoZ } from '../../platform/http/schemas.ts'
import { approveDraft, cancelDraft, createDraft, getDraft, type Draft } from './drafts.service.ts'
import {
  ApproveResponse,
  BalanceList,
  CreateDraftBody,
  CreatePayoutBody,
  DraftParams,
  DraftReport,
  DraftResponse,
  EmptyBody,
  ListPayoutsQuery,
  PayoutList,
  PayoutParams,
  PayoutResponse,
} from './payouts.schemas.ts'
import {
  createSubmerchantPayout,
  getBalances,
  getPayout,
  listPayouts,
  type Payout,
  type PayoutCaller,
} from './payouts.service.ts'

const tags = ['payouts']

function callerOf(request: FastifyRequest): PayoutCaller {
  const auth = authOf(request)
  return { merchantId: auth.merchantId, submerchantId: auth.submerchantId }
}

function draftJson(d: Draft) {
  return {
    draftId: d.id,
    storeId: d.storeId,
    status: d.status,
    rowCount: d.rowCount,
    validCount: d.validCount,
    invalidCount: d.invalidCount,
    validTotalMinor: d.validTotalMinor,
    createdAt: isoZ(d.createdAt),
    approvedAt: isoZ(d.approvedAt),
    cancelledAt: isoZ(d.cancelledAt),
  }
}

export function payoutJson(p: Payout) {
  return {
    payoutId: p.id,
    status: p.status,
    submerchantId: p.submerchantId,
    draftId: p.draftId,
    ownerType: p.ownerType,
    ownerId: p.ownerId,
    rail: p.rail,
    amountMinor: p.amountMinor,
    currency: p.currency,
    holderName: p.holderName,
    destMasked: p.destMasked,
    clientReference: p.clientReference,
    failureCode: p.failureCode,
    metadata: p.metadata,
    createdAt: isoZ(p.createdAt),
    processingAt: isoZ(p.processingAt),
    paidAt: isoZ(p.paidAt),
    failedAt: isoZ(p.failedAt),
  }
}

/** Signed payout routes: drafts (merchant keys), payouts and balances (also submerchant keys). */
export function payoutsRoutes(deps: Deps): FastifyPluginAsync {
  return async (plain) => {
    const app = plain.withTypeProvider<TypeBoxTypeProvider>()

    app.post(
      '/v1/payout-drafts',
      {
        schema: {
          operationId: 'payoutDrafts.create',
          tags,
          summary: 'Upload a payout draft (up to 1000 rows, one store); each row is validated',
          body: CreateDraftBody,
          response: { 201: DraftResponse, ...errorResponses },
        },
      },
      async (request, reply) => {
        const draft = await createDraft(deps, authOf(request).merchantId, request.body)
        return reply.code(201).send(draftJson(draft))
      },
    )

    app.get(
      '/v1/payout-drafts/:id',
      {
        schema: {
          operationId: 'payoutDrafts.get',
          tags,
          summary: 'A payout draft with its per-row validation report (destinations masked)',
          params: DraftParams,
          response: { 200: DraftReport, ...errorResponses },
        },
      },
      async (request) => {
        const { draft, rows } = await getDraft(deps, authOf(request).merchantId, request.params.id)
        return { ...draftJson(draft), rows }
      },
    )

    app.post(
      '/v1/payout-drafts/:id/approve',
      {
        config: { requireKyc: true },
        schema: {
          operationId: 'payoutDrafts.approve',
          tags,
          summary: "Fan the draft's valid rows out into payouts (all or nothing; idempotent)",
          params: DraftParams,
          body: EmptyBody,
          response: { 200: ApproveResponse, ...errorResponses },
        },
      },
      async (request) => {
        const out = await approveDraft(deps, authOf(request).merchantId, request.params.id)
        return { ...out, payoutCount: out.payoutIds.length }
      },
    )

    app.post(
      '/v1/payout-drafts/:id/cancel',
      {
        schema: {
          operationId: 'payoutDrafts.cancel',
          tags,
          summary: 'Cancel a payout draft that is not approved',
          params: DraftParams,
          body: EmptyBody,
          response: { 200: DraftResponse, ...errorResponses },
        },
      },
      async (request) =>
        draftJson(await cancelDraft(deps, authOf(request).merchantId, request.params.id)),
    )

    app.post(
      '/v1/payouts',
      {
        config: { requireKyc: true, scopes: ['merchant', 'submerchant'] },
        schema: {
          operationId: 'payouts.create',
          tags,
          summary: 'Pay a submerchant out of its available balance to the IBAN on its record',
          body: CreatePayoutBody,
          response: { 201: PayoutResponse, ...errorResponses },
        },
      },
      async (request, reply) => {
        const { submerchantId, rail, amountMinor, clientReference, metadata } = request.body
        const key = request.headers['idempotency-key']
        const payout = await createSubmerchantPayout(deps, callerOf(request), {
          submerchantId,
          rail,
          amountMinor,
          clientReference,
          metadata,
          idempotencyKey: typeof key === 'string' ? key : undefined,
        })
        return reply.code(201).send(payoutJson(payout))
      },
    )

    app.get(
      '/v1/payouts/:id',
      {
        config: { scopes: ['merchant', 'submerchant'] },
        schema: {
          operationId: 'payouts.get',
          tags,
          summary: 'Retrieve a payout',
          params: PayoutParams,
          response: { 200: PayoutResponse, ...errorResponses },
        },
      },
      async (request) => payoutJson(await getPayout(deps, callerOf(request), request.params.id)),
    )

    app.get(
      '/v1/payouts',
      {
        config: { scopes: ['merchant', 'submerchant'] },
        schema: {
          operationId: 'payouts.list',
          tags,
          summary: 'List payouts, newest first (keyset cursor)',
          querystring: ListPayoutsQuery,
          response: { 200: PayoutList, ...errorResponses },
        },
      },
      async (request) => {
        const q = request.query
        const page = await listPayouts(deps, callerOf(request), {
          status: q.status,
          submerchantId: q.submerchantId,
          from: q.from === undefined ? undefined : new Date(q.from),
          to: q.to === undefined ? undefined : new Date(q.to),
          limit: q.limit,
          cursor: q.cursor,
        })
        return { items: page.items.map(payoutJson), nextCursor: page.nextCursor }
      },
    )

    app.get(
      '/v1/balances',
      {
        config: { scopes: ['merchant', 'submerchant'] },
        schema: {
          operationId: 'balances.get',
          tags,
          summary: 'Reserve, available and payout-pending balance per owner',
          response: { 200: BalanceList, ...errorResponses },
        },
      },
      async (request) => ({
        items: (await getBalances(deps, callerOf(request))).map((b) => ({
          ...b,
          currency: 'TRY' as const,
        })),
      }),
    )
  }
}
