import type { FastifyPluginAsync, FastifyRequest } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { Deps } from '../../database.ts'
import { authOf } from '../../platform/http/auth.ts'
import { answerOnce, recordWith } from '../../platform/http/idempotent-answer.ts'
import { errorResponses, isoZ } from '../../platform/http/schemas.ts'
import {
  approveDraft,
  cancelDraft,
  createDraft,
  getDraft,
  type ApprovedDraft,
  type Draft,
} from './drafts.service.ts'
import { getBankAccount, putBankAccount, type BankAccount } from './bank-account.service.ts'
import { listPayoutLines, type PayoutLine } from './payout-lines.service.ts'
import { getSchedule, putSchedule, type PayoutSchedule } from './schedule.service.ts'
import { istanbulDate, nextRunDate } from './settlement-calendar.ts'
import {
  ApproveResponse,
  BalanceList,
  BankAccountBody,
  BankAccountResponse,
  PayoutBalanceTransactionList,
  PayoutBalanceTransactionsQuery,
  PayoutScheduleBody,
  PayoutScheduleResponse,
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
  NO_PAYOUT_ANSWER,
  type PayoutAnswer,
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
    kind: p.kind,
    rail: p.rail,
    arrivalDate: p.arrivalDate,
    bankAccountLast4: p.bankAccountLast4,
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

function bankAccountJson(a: BankAccount) {
  return {
    ibanMasked: a.ibanMasked,
    last4: a.last4,
    holderName: a.holderName,
    payoutsHeldUntil: isoZ(a.payoutsHeldUntil),
    updatedAt: isoZ(a.updatedAt),
  }
}

export function scheduleJson(s: PayoutSchedule, now: Date) {
  return {
    interval: s.interval,
    anchor: s.anchor,
    minimumMinor: s.minimumMinor,
    nextRunDate: nextRunDate(s, istanbulDate(now)) ?? null,
    updatedAt: isoZ(s.updatedAt),
  }
}

function approvedJson(out: ApprovedDraft) {
  return { ...out, payoutCount: out.payoutIds.length }
}

function lineJson(l: PayoutLine) {
  return { ...l, createdAt: isoZ(l.createdAt) }
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
          description:
            "Stores the rows (1 to 1000, each `rail`, `dest`, `holderName`, `amountMinor`) for one of the merchant's stores (404 SVC-RES-3301 for another's) as a `draft`, validating each row; nothing is paid until the draft is approved. The answer counts valid and invalid rows and totals the valid ones; `GET /v1/payout-drafts/{id}` gives each row's reason.",
          body: CreateDraftBody,
          response: { 201: DraftResponse, ...errorResponses },
        },
      },
      async (request, reply) => {
        // The draft (its approval, its cancellation) and its recorded answer commit together
        // (decision 0035), here and in the two routes below.
        const port = request.idempotentAnswer
        return answerOnce(
          reply,
          port,
          () =>
            createDraft(
              deps,
              authOf(request).merchantId,
              request.body,
              recordWith(port, 201, draftJson),
            ),
          (draft) => reply.code(201).send(draftJson(draft)),
        )
      },
    )

    app.get(
      '/v1/payout-drafts/:id',
      {
        schema: {
          operationId: 'payoutDrafts.get',
          tags,
          summary: 'A payout draft with its per-row validation report (destinations masked)',
          description:
            "The draft's status and totals with each row's validation result; destinations are masked. 404 SVC-RES-3301 for an unknown or another merchant's draft.",
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
          description:
            'Turns every valid row into a `pending` payout, debiting the balance, in one transaction: all rows or none. Approving an approved draft again answers the same payouts. A draft that is cancelled is 409 SVC-STATE-3401, as is one with no valid rows; a balance that cannot cover the rows is 409 SVC-PAY-3502. Needs KYC `approved`.',
          params: DraftParams,
          body: EmptyBody,
          response: { 200: ApproveResponse, ...errorResponses },
        },
      },
      async (request, reply) => {
        const port = request.idempotentAnswer
        return answerOnce(
          reply,
          port,
          () =>
            approveDraft(
              deps,
              authOf(request).merchantId,
              request.params.id,
              recordWith(port, 200, approvedJson),
            ),
          (out) => reply.send(approvedJson(out)),
        )
      },
    )

    app.post(
      '/v1/payout-drafts/:id/cancel',
      {
        schema: {
          operationId: 'payoutDrafts.cancel',
          tags,
          summary: 'Cancel a payout draft that is not approved',
          description:
            'A `draft` becomes `cancelled` (a cancelled one is answered as it is); an approved draft is 409 SVC-STATE-3401.',
          params: DraftParams,
          body: EmptyBody,
          response: { 200: DraftResponse, ...errorResponses },
        },
      },
      async (request, reply) => {
        const port = request.idempotentAnswer
        return answerOnce(
          reply,
          port,
          () =>
            cancelDraft(
              deps,
              authOf(request).merchantId,
              request.params.id,
              recordWith(port, 200, draftJson),
            ),
          (draft) => reply.send(draftJson(draft)),
        )
      },
    )

    app.post(
      '/v1/payouts',
      {
        // The gateway claims the key (a duplicate in flight is 409 SVC-GW-2002); the payout's
        // creating transaction records the answer (decision 0035).
        config: { requireKyc: true, scopes: ['merchant', 'submerchant'] },
        schema: {
          operationId: 'payouts.create',
          tags,
          summary: 'Pay a submerchant out of its available balance to the IBAN on its record',
          description:
            "Debits `amountMinor` from the submerchant's available balance and makes a `pending` payout to the IBAN on its record over `fast` or `eft` (`card` is 400 SVC-VAL-3001). Outside the submerchant's payout limits: 400 SVC-PAY-3503; more than the available balance: 409 SVC-PAY-3502. Merchant keys, or a submerchant key for its own submerchant only (else 403 SVC-AUTH-3201); needs KYC `approved`. The Idempotency-Key also names the payout: the same key with another body is 409 SVC-GW-2001.",
          body: CreatePayoutBody,
          response: { 201: PayoutResponse, ...errorResponses },
        },
      },
      async (request, reply) => {
        const { submerchantId, rail, amountMinor, clientReference, metadata } = request.body
        const key = request.headers['idempotency-key']
        const port = request.idempotentAnswer
        const answer: PayoutAnswer = port
          ? { record: (tx, payout) => port.record(tx, 201, payoutJson(payout)) }
          : NO_PAYOUT_ANSWER
        return answerOnce(
          reply,
          port,
          () =>
            createSubmerchantPayout(
              deps,
              callerOf(request),
              {
                submerchantId,
                rail,
                amountMinor,
                clientReference,
                metadata,
                idempotencyKey: typeof key === 'string' ? key : undefined,
              },
              answer,
            ),
          (payout) => reply.code(201).send(payoutJson(payout)),
        )
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
          description:
            'The payout with its status, rail, masked destination and amounts; a submerchant key sees only its own (404 SVC-RES-3301 otherwise).',
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
          description:
            'Payouts newest first, in pages of `limit` with a keyset `nextCursor`; filters `status`, `kind`, `submerchantId`, `from`/`to`. A submerchant key sees only its own.',
          querystring: ListPayoutsQuery,
          response: { 200: PayoutList, ...errorResponses },
        },
      },
      async (request) => {
        const q = request.query
        const page = await listPayouts(deps, callerOf(request), {
          status: q.status,
          kind: q.kind,
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
      '/v1/payouts/:id/balance-transactions',
      {
        config: { scopes: ['merchant', 'submerchant'] },
        schema: {
          operationId: 'payouts.balanceTransactions',
          tags,
          summary:
            'What a payout settled, line by line (sales, refunds, fees, chargebacks); the settled parts sum to its amount',
          description:
            "The balance transactions a settlement payout paid out, in pages with a keyset cursor; the settled lines sum to the payout's amount. A submerchant key sees only its own payouts; 404 SVC-RES-3301 for another's.",
          params: PayoutParams,
          querystring: PayoutBalanceTransactionsQuery,
          response: { 200: PayoutBalanceTransactionList, ...errorResponses },
        },
      },
      async (request) => {
        const page = await listPayoutLines(deps, callerOf(request), request.params.id, {
          limit: request.query.limit,
          cursor: request.query.cursor,
        })
        return { items: page.items.map(lineJson), nextCursor: page.nextCursor }
      },
    )

    app.get(
      '/v1/bank-account',
      {
        schema: {
          operationId: 'bankAccount.get',
          tags,
          summary: "The merchant's bank account for settlement payouts (IBAN masked)",
          description:
            "The masked IBAN, its last 4 digits, the holder's name and, after a change in live, `payoutsHeldUntil`. 404 SVC-RES-3301 before one is set.",
          response: { 200: BankAccountResponse, ...errorResponses },
        },
      },
      async (request) => bankAccountJson(await getBankAccount(deps, authOf(request).merchantId)),
    )

    app.put(
      '/v1/bank-account',
      {
        schema: {
          operationId: 'bankAccount.put',
          tags,
          summary:
            'Set the bank account settlement payouts go to (TR IBAN); a change is emailed to the owners and, in live, holds payouts for 24 hours',
          description:
            "Sets the TR IBAN (checksum checked, else 400 SVC-VAL-3001) and holder name. The same account again changes nothing; a change emails the merchant's owners in the same transaction and, in live, holds settlement payouts for 24 hours.",
          body: BankAccountBody,
          response: { 200: BankAccountResponse, ...errorResponses },
        },
      },
      async (request, reply) => {
        const port = request.idempotentAnswer
        return answerOnce(
          reply,
          port,
          async () =>
            (
              await putBankAccount(
                deps,
                authOf(request).merchantId,
                request.body,
                recordWith(port, 200, bankAccountJson),
              )
            ).account,
          (account) => reply.send(bankAccountJson(account)),
        )
      },
    )

    app.get(
      '/v1/payout-schedule',
      {
        schema: {
          operationId: 'payoutSchedule.get',
          tags,
          summary: 'When settlement payouts are made (default: daily)',
          description:
            'The interval (`daily`, `weekly`, `monthly`, `manual`), its anchor (a weekday, or a day of the month), the minimum amount below which nothing is paid out, and the next payout date.',
          response: { 200: PayoutScheduleResponse, ...errorResponses },
        },
      },
      async (request) =>
        scheduleJson(await getSchedule(deps, authOf(request).merchantId), deps.clock.now()),
    )

    app.put(
      '/v1/payout-schedule',
      {
        schema: {
          operationId: 'payoutSchedule.put',
          tags,
          summary: 'Set the settlement payout schedule: daily, weekly, monthly or manual',
          description:
            '`weekly` takes a weekday anchor (default `monday`), `monthly` a day 1–31 (default 1; a shorter month pays on its last day), `daily` and `manual` none; `minimumMinor` keeps smaller balances for the next run. Anything else is 400 SVC-VAL-3001.',
          body: PayoutScheduleBody,
          response: { 200: PayoutScheduleResponse, ...errorResponses },
        },
      },
      async (request, reply) => {
        const body = request.body
        const port = request.idempotentAnswer
        return answerOnce(
          reply,
          port,
          () =>
            putSchedule(
              deps,
              authOf(request).merchantId,
              {
                interval: body.interval,
                ...(body.anchor !== undefined ? { anchor: body.anchor } : {}),
                ...(body.minimumMinor !== undefined ? { minimumMinor: body.minimumMinor } : {}),
              },
              recordWith(port, 200, (s: PayoutSchedule) => scheduleJson(s, deps.clock.now())),
            ),
          (schedule) => reply.send(scheduleJson(schedule, deps.clock.now())),
        )
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
          description:
            'One entry per balance owner of the merchant (a submerchant key: its own only), each with its reserve, available and payout-pending amounts in kuruş; payouts draw on `available`.',
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
