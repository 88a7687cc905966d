import type { FastifyPluginAsync } from 'fastify'
import { Type } from 'typebox'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { Deps } from '../../database.ts'
import { authOf } from '../../platform/http/auth.ts'
import { answerOnce, recordWith } from '../../platform/http/idempotent-answer.ts'
import { errorResponses, isoZ } from '../../platform/http/schemas.ts'
import {
  BinParams,
  BinSchema,
  CreatePosAccountBody,
  InstallmentOptionsSchema,
  InstallmentQuery,
  PosAccountList,
  PosAccountParams,
  PosAccountSchema,
  ReconciliationBody,
  ReconciliationQuery,
  ReconciliationSchema,
  RoutingBody,
  RoutingSchema,
  UpdatePosAccountBody,
} from './acquirer.schemas.ts'
import {
  createPosAccount,
  deletePosAccount,
  getPosAccount,
  listPosAccounts,
  updatePosAccount,
  type PosAccount,
  type PosOwner,
} from './pos-accounts.service.ts'
import {
  getReconciliation,
  runReconciliation,
  type Reconciliation,
} from './reconciliation.service.ts'
import {
  getRouting,
  installmentOptions,
  lookupBin,
  putRouting,
  type Routing,
} from './routing.service.ts'

const tags = ['acquiring']

function posJson(a: PosAccount) {
  return { ...a, createdAt: isoZ(a.createdAt) }
}

function reconciliationJson(r: Reconciliation & { bankAnswered?: boolean }) {
  return {
    ...r,
    ranAt: r.ranAt ? isoZ(r.ranAt) : null,
    items: r.items.map((i) => ({ ...i, createdAt: isoZ(i.createdAt) })),
  }
}

/** The POS account routes under a prefix, for an owner (the merchant's or the platform's). */
function posAccountRoutes(
  deps: Deps,
  prefix: '/v1' | '/operator/v1',
  ownerOf: (request: Parameters<typeof authOf>[0]) => PosOwner,
): FastifyPluginAsync {
  const op = prefix === '/v1' ? 'posAccounts' : 'operator.posAccounts'
  const extra = prefix === '/v1' ? {} : { security: [{ operatorToken: [] }] }
  return async (plain) => {
    const app = plain.withTypeProvider<TypeBoxTypeProvider>()
    app.post(
      `${prefix}/pos-accounts`,
      {
        schema: {
          operationId: `${op}.create`,
          tags,
          ...extra,
          summary: 'Add a bank virtual POS account (credentials are write-only)',
          description:
            prefix === '/v1'
              ? 'A POS account of this merchant at its bank (`provider` `est_v3`, `garanti` or `posnet`; `environment` `test` or `production`); the credentials are checked for the provider, encrypted, and never answered back. A provider without a connector yet, bad credentials or an unknown installment program is 400 SVC-VAL-3001 naming the field. Route payments to it with `PUT /v1/routing`.'
              : 'Operator token. A platform POS account: every merchant sees it and may route payments to it. The credentials are checked for the provider, encrypted and never answered back; a provider without a connector yet, bad credentials or an unknown installment program is 400 SVC-VAL-3001 naming the field.',
          body: CreatePosAccountBody,
          response: { 201: PosAccountSchema, ...errorResponses },
        },
      },
      async (request, reply) => {
        // The change and its recorded answer commit together (decision 0035), here and below;
        // the operator's door has no Idempotency-Key.
        const port = request.idempotentAnswer ?? null
        return answerOnce(
          reply,
          port,
          () =>
            createPosAccount(deps, ownerOf(request), request.body, recordWith(port, 201, posJson)),
          (account) => reply.code(201).send(posJson(account)),
        )
      },
    )
    app.get(
      `${prefix}/pos-accounts`,
      {
        schema: {
          operationId: `${op}.list`,
          tags,
          ...extra,
          summary:
            prefix === '/v1'
              ? "The merchant's and the platform's POS accounts"
              : "The platform's POS accounts",
          description:
            prefix === '/v1'
              ? "The merchant's own POS accounts and the platform's it may route to, without credentials; deleted accounts are left out. Not paginated."
              : "Operator token. The platform's POS accounts, without credentials; deleted accounts are left out. Not paginated.",
          response: { 200: PosAccountList, ...errorResponses },
        },
      },
      async (request) => ({
        items: (await listPosAccounts(deps, ownerOf(request))).map(posJson),
      }),
    )
    app.get(
      `${prefix}/pos-accounts/:id`,
      {
        schema: {
          operationId: `${op}.get`,
          tags,
          ...extra,
          summary: 'Retrieve a POS account',
          description:
            prefix === '/v1'
              ? "One of the merchant's own POS accounts or a platform one, without credentials; another merchant's or a deleted account is 404 SVC-RES-3301."
              : "Operator token. One platform POS account, without credentials; a merchant's or a deleted account is 404 SVC-RES-3301.",
          params: PosAccountParams,
          response: { 200: PosAccountSchema, ...errorResponses },
        },
      },
      async (request) => posJson(await getPosAccount(deps, ownerOf(request), request.params.id)),
    )
    app.patch(
      `${prefix}/pos-accounts/:id`,
      {
        schema: {
          operationId: `${op}.update`,
          tags,
          ...extra,
          summary: 'Rename, enable/disable, set programs or replace credentials',
          description:
            prefix === '/v1'
              ? "Only the fields sent change; new credentials are checked for the account's provider and replace the old ones whole (400 SVC-VAL-3001 when invalid). A disabled account takes no new payments. Only the merchant's own accounts: a platform or deleted one is 404 SVC-RES-3301."
              : "Operator token. Only the fields sent change; new credentials are checked for the account's provider and replace the old ones whole (400 SVC-VAL-3001 when invalid). A disabled account takes no new payments; a deleted one is 404 SVC-RES-3301.",
          params: PosAccountParams,
          body: UpdatePosAccountBody,
          response: { 200: PosAccountSchema, ...errorResponses },
        },
      },
      async (request, reply) => {
        const port = request.idempotentAnswer ?? null
        return answerOnce(
          reply,
          port,
          () =>
            updatePosAccount(
              deps,
              ownerOf(request),
              request.params.id,
              request.body,
              recordWith(port, 200, posJson),
            ),
          (account) => reply.send(posJson(account)),
        )
      },
    )
    app.delete(
      `${prefix}/pos-accounts/:id`,
      {
        schema: {
          operationId: `${op}.delete`,
          tags,
          ...extra,
          summary: 'Disable a POS account for good (its payments keep their reference)',
          description:
            prefix === '/v1'
              ? "The account is disabled and hidden for good; payments made through it keep its id. Deleting it again changes nothing. Only the merchant's own accounts (404 SVC-RES-3301 otherwise)."
              : 'Operator token. The platform account is disabled and hidden for good; payments made through it keep its id. Deleting it again changes nothing.',
          params: PosAccountParams,
          response: { 204: Type.Null(), ...errorResponses },
        },
      },
      async (request, reply) => {
        const port = request.idempotentAnswer ?? null
        return answerOnce(
          reply,
          port,
          () =>
            deletePosAccount(
              deps,
              ownerOf(request),
              request.params.id,
              recordWith(port, 204, () => null),
            ),
          () => reply.code(204).send(null),
        )
      },
    )
  }
}

/** Signed merchant routes: POS accounts, routing, BIN facts and installment options. */
export function acquirerRoutes(deps: Deps): FastifyPluginAsync {
  return async (plain) => {
    await plain.register(
      posAccountRoutes(deps, '/v1', (request) => ({ merchantId: authOf(request).merchantId })),
    )
    const app = plain.withTypeProvider<TypeBoxTypeProvider>()
    app.get(
      '/v1/routing',
      {
        schema: {
          operationId: 'routing.get',
          tags,
          summary: "The merchant's POS routing rules and default order",
          description:
            "The merchant's routing rules in order, each a condition and the POS accounts to try in order, and the `default` order used when no rule holds; empty lists (and `updatedAt: null`) before any is set.",
          response: { 200: RoutingSchema, ...errorResponses },
        },
      },
      async (request) => {
        const r = await getRouting(deps, authOf(request).merchantId)
        return { ...r, updatedAt: isoZ(r.updatedAt) }
      },
    )
    app.put(
      '/v1/routing',
      {
        schema: {
          operationId: 'routing.put',
          tags,
          summary: 'Replace the routing: the first rule whose condition holds names the POS order',
          description:
            'Replaces the whole routing. For each charge the first rule whose condition (JSON Logic over the card facts, as docs/acquiring.md lists them) holds names the POS accounts to try, in order; else `default`. Every id must be a POS account the merchant can see, once per list; a bad condition, an unknown id, more than 50 rules or 20 accounts in a list is 400 SVC-VAL-3001 with every issue.',
          body: RoutingBody,
          response: { 200: RoutingSchema, ...errorResponses },
        },
      },
      async (request, reply) => {
        const port = request.idempotentAnswer
        const json = (r: Routing) => ({ ...r, updatedAt: isoZ(r.updatedAt) })
        return answerOnce(
          reply,
          port,
          () =>
            putRouting(deps, authOf(request).merchantId, request.body, recordWith(port, 200, json)),
          (r) => reply.send(json(r)),
        )
      },
    )
    app.get(
      '/v1/bins/:bin',
      {
        schema: {
          operationId: 'bins.get',
          tags,
          summary: 'Brand, funding, issuing bank and card program of a BIN',
          description:
            "What Kuruş knows of the card's BIN (its first 6–8 digits): brand, funding, issuing bank and installment program. Nothing about the request is stored.",
          params: BinParams,
          response: { 200: BinSchema, ...errorResponses },
        },
      },
      async (request) => lookupBin(request.params.bin.slice(0, 6)),
    )
    app.get(
      '/v1/acquirer-reconciliation',
      {
        schema: {
          operationId: 'acquirerReconciliation.get',
          tags,
          summary: 'The differences between a bank POS and Kuruş for one bank day',
          description:
            "For `posAccountId` and `date` (the Istanbul bank day): what the last reconciliation run found — orders the bank does not have (`missing_at_bank`), orders it has that we do not (`missing_at_us`, Garanti's day list only), amounts (`amount_differs`, `field` authorized, captured or refunded) or a void (`status_differs`) that differ — with both sides' facts in kuruş, oldest first in pages of `limit` (at most 500) with a keyset `nextCursor`. Runs daily at 04:30 Istanbul for the day before; `ranAt` null: not run for that day yet. The merchant's own POS accounts, or a platform one (then only the merchant's orders); another merchant's is 404 SVC-RES-3301, a malformed or future date 400 SVC-VAL-3001. Each difference also raised one `reconciliation.mismatch` event.",
          querystring: ReconciliationQuery,
          response: { 200: ReconciliationSchema, ...errorResponses },
        },
      },
      async (request) =>
        reconciliationJson(
          await getReconciliation(deps, { merchantId: authOf(request).merchantId }, request.query),
        ),
    )
    app.post(
      '/v1/acquirer-reconciliation',
      {
        schema: {
          operationId: 'acquirerReconciliation.run',
          tags,
          summary: 'Reconcile a bank POS for one bank day now',
          description:
            "Asks the bank now — Garanti its day list, EST and PosNet an order inquiry per order of ours that day — and records what differs, each difference once (a difference found again is not listed twice nor evented again); answers as the GET does. `bankAnswered: false`: the bank did not answer and nothing was recorded (ask again). Only the merchant's own POS accounts (a platform one or another merchant's is 404 SVC-RES-3301); a malformed or future date is 400 SVC-VAL-3001.",
          body: ReconciliationBody,
          response: { 200: ReconciliationSchema, ...errorResponses },
        },
      },
      async (request) =>
        reconciliationJson(
          await runReconciliation(deps, { merchantId: authOf(request).merchantId }, request.body),
        ),
    )
    app.get(
      '/v1/installment-options',
      {
        schema: {
          operationId: 'installmentOptions.get',
          tags,
          summary: 'The installment counts and totals the merchant can offer for a card',
          description:
            "For `bin` and `amount`: the installment counts the merchant can offer for this card — all up to 12 when one of its usable POS accounts takes the card's program, else a single payment (in the sandbox without POS accounts, the sandbox bank's table) — each with the total and per-installment amount. Buyers pay no installment interest.",
          querystring: InstallmentQuery,
          response: { 200: InstallmentOptionsSchema, ...errorResponses },
        },
      },
      async (request) =>
        installmentOptions(
          deps,
          authOf(request).merchantId,
          request.query.bin.slice(0, 6),
          request.query.amount,
        ),
    )
  }
}

/** The platform's POS accounts; registered inside the operator's bearer-token context. */
export function operatorPosAccountRoutes(deps: Deps): FastifyPluginAsync {
  return posAccountRoutes(deps, '/operator/v1', () => ({ platform: true }))
}
