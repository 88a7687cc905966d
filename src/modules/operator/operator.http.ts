import type { FastifyPluginAsync, FastifyRequest, RouteHandlerMethod } from 'fastify'
import { Type } from 'typebox'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { Deps } from '../../database.ts'
import { safeEqual } from '../../platform/crypto.ts'
import { AppError } from '../../platform/errors.ts'
import { ErrorEnvelope, isoZ } from '../../platform/http/schemas.ts'
import { newId } from '../../platform/ids.ts'
import { operatorPosAccountRoutes } from '../acquirer/index.ts'
import { audited, AUDIT_PAGE_MAX, listAuditEntries } from '../audit/index.ts'
import * as merchants from '../merchants/index.ts'
import {
  ApiKeyView,
  AuditLogPage,
  AuditLogQuery,
  CreateMerchantBody,
  CreateStoreBody,
  CreateSubmerchantBody,
  CreatedMerchant,
  CreatedStore,
  CreatedSubmerchant,
  DemoCredentials,
  KeyParams,
  MerchantParams,
  MerchantView,
  RolledKey,
  SetKycBody,
} from './operator.schemas.ts'

const errors = { 400: ErrorEnvelope, 401: ErrorEnvelope, 404: ErrorEnvelope, 409: ErrorEnvelope }
const security = [{ operatorToken: [] }]

// The operator's actions are audited as the dashboard's are (decision 0036): the entry commits
// in the action's own transaction, actor `operator`, `details.door = 'operator'`; under the
// merchant concerned (its dashboard's audit log shows it), or under PLATFORM_LOG for what no
// merchant owns (the platform's POS accounts), read at GET /operator/v1/audit-log.
const OPERATOR_ACTOR = 'operator'
const PLATFORM_LOG = 'platform'

function asOperator<T>(
  deps: Deps,
  entry: { merchantId: string; action: string; target: string | null; details?: AuditFacts },
  action: () => Promise<T>,
): Promise<T> {
  return audited(
    deps,
    {
      merchantId: entry.merchantId,
      actorId: OPERATOR_ACTOR,
      action: entry.action,
      target: entry.target,
      details: { ...entry.details, door: 'operator' },
    },
    action,
  )
}
type AuditFacts = Record<string, string | number | boolean | null>

/** The platform's POS account routes (acquirer module), each change audited in the log. */
function auditedPosRoute(deps: Deps, method: string, handler: RouteHandlerMethod) {
  if (method === 'GET' || method === 'HEAD') return handler
  const verb = method === 'POST' ? 'create' : method === 'PATCH' ? 'update' : 'delete'
  return function (
    this: unknown,
    request: FastifyRequest,
    reply: Parameters<RouteHandlerMethod>[1],
  ) {
    const { id } = (request.params ?? {}) as { id?: string }
    return asOperator(
      deps,
      { merchantId: PLATFORM_LOG, action: `pos_account.${verb}`, target: id ?? null },
      async () => handler.call(this as never, request, reply) as Promise<unknown>,
    )
  } as RouteHandlerMethod
}

/** Platform staff's API (bearer KURUS_OPERATOR_TOKEN); the `kurus` CLI is its client. */
export function operatorRoutes(deps: Deps): FastifyPluginAsync {
  return async (plain) => {
    const app = plain.withTypeProvider<TypeBoxTypeProvider>()
    app.addHook('onRequest', async (request, reply) => {
      void reply.header('cache-control', 'no-store')
      const value = request.headers.authorization ?? ''
      // The scheme name is case-insensitive (RFC 9110 §11.1).
      const token = /^bearer /i.test(value) ? value.slice(7).trim() : ''
      if (!token || !safeEqual(token, deps.config.operatorToken)) {
        throw new AppError('SVC-GW-1003', 401, 'operator bearer token is missing or wrong')
      }
    })
    // The platform's bank POS contracts, behind the same bearer token.
    await app.register(async (pos) => {
      pos.addHook('onRoute', (route) => {
        const methods = Array.isArray(route.method) ? route.method : [route.method]
        route.handler = auditedPosRoute(deps, methods[0] ?? 'GET', route.handler)
      })
      await pos.register(operatorPosAccountRoutes(deps))
    })

    app.post(
      '/operator/v1/merchants',
      {
        schema: {
          operationId: 'operator.merchants.create',
          summary: 'Create a merchant with its first store and key pair (the secret is shown once)',
          description:
            'Operator token. A merchant with its first store, a dashboard login (`{email, password}`; the password is in this answer only) and a store key pair whose secret is in this answer only. `kycStatus` defaults to `none`: it cannot take money in until `approved`. In live, settlements wait 24 hours; in the sandbox none.',
          tags: ['operator'],
          security,
          body: CreateMerchantBody,
          response: { 201: CreatedMerchant, ...errors },
        },
      },
      async (request, reply) => {
        // Its id chosen here, so that its creation is recorded in its own log.
        const merchantId = newId('mrc')
        const created = await asOperator(
          deps,
          {
            merchantId,
            action: 'operator.merchant_create',
            target: merchantId,
            details: { kycStatus: request.body.kycStatus ?? 'none' },
          },
          () => merchants.createMerchant(deps, request.body, merchantId),
        )
        return reply.code(201).send({
          merchantId: created.merchantId,
          storeId: created.storeId,
          ...created.key,
          dashboard: created.dashboard,
        })
      },
    )

    app.get(
      '/operator/v1/merchants/:id',
      {
        schema: {
          operationId: 'operator.merchants.get',
          summary: 'Retrieve a merchant',
          description:
            "Operator token. The merchant's name, KYC status and decision time, pricing and settlement delay; 404 SVC-RES-3301 for an unknown id.",
          tags: ['operator'],
          security,
          params: MerchantParams,
          response: { 200: MerchantView, ...errors },
        },
      },
      async (request) => {
        const m = await merchants.getMerchant(deps, request.params.id)
        return {
          merchantId: m.id,
          name: m.name,
          kycStatus: m.kycStatus,
          kycDecidedAt: isoZ(m.kycDecidedAt),
          pricing: m.pricing,
          settlementDelaySeconds: m.settlementDelaySeconds,
          createdAt: isoZ(m.createdAt),
        }
      },
    )

    app.post(
      '/operator/v1/merchants/:id/stores',
      {
        schema: {
          operationId: 'operator.stores.create',
          summary: 'Add a store to a merchant, with its own key pair',
          description:
            'Operator token. Another store of the merchant with its own key pair (the secret is in this answer only); payments and keys are per store. 404 SVC-RES-3301 for an unknown merchant.',
          tags: ['operator'],
          security,
          params: MerchantParams,
          body: Type.Optional(CreateStoreBody),
          response: { 201: CreatedStore, ...errors },
        },
      },
      async (request, reply) => {
        const created = await asOperator(
          deps,
          { merchantId: request.params.id, action: 'operator.store_create', target: null },
          () => merchants.createStore(deps, request.params.id, request.body ?? {}),
        )
        return reply.code(201).send({ storeId: created.storeId, ...created.key })
      },
    )

    app.post(
      '/operator/v1/merchants/:id/submerchants',
      {
        schema: {
          operationId: 'operator.submerchants.create',
          summary: 'Create a submerchant under a merchant',
          description:
            'Operator token. A submerchant (a payee paid out to its TR IBAN, checked: 400 SVC-VAL-3001) with optional payout limits and its own key pair, whose secret is in this answer only. 404 SVC-RES-3301 for an unknown merchant.',
          tags: ['operator'],
          security,
          params: MerchantParams,
          body: CreateSubmerchantBody,
          response: { 201: CreatedSubmerchant, ...errors },
        },
      },
      async (request, reply) => {
        const { payoutLimits, ...rest } = request.body
        const created = await asOperator(
          deps,
          { merchantId: request.params.id, action: 'submerchant.create', target: null },
          () =>
            merchants.createSubmerchant(deps, request.params.id, {
              ...rest,
              ...(payoutLimits ? { payoutLimits } : {}),
            }),
        )
        return reply.code(201).send({ submerchantId: created.submerchantId, ...created.key })
      },
    )

    app.put(
      '/operator/v1/merchants/:id/kyc',
      {
        schema: {
          operationId: 'operator.merchants.setKyc',
          summary: 'Set a merchant’s KYC status',
          description:
            "Operator token. Sets the KYC status (`none`, `pending`, `approved`, `rejected`, `suspended`, `expired`); a settled status records its decision time. Takes effect on the merchant's next request: only `approved` may take money in (else 403 SVC-KYC-3101). 404 SVC-RES-3301 for an unknown merchant.",
          tags: ['operator'],
          security,
          params: MerchantParams,
          body: SetKycBody,
          response: {
            200: Type.Object({
              merchantId: Type.String(),
              status: Type.String(),
              decidedAt: Type.Union([Type.String(), Type.Null()]),
            }),
            ...errors,
          },
        },
      },
      async (request) => {
        const { id } = request.params
        const m = await asOperator(
          deps,
          {
            merchantId: id,
            action: 'operator.kyc_set',
            target: id,
            details: { status: request.body.status },
          },
          () => merchants.setKycStatus(deps, id, request.body.status),
        )
        return { merchantId: m.id, status: m.kycStatus, decidedAt: isoZ(m.kycDecidedAt) }
      },
    )

    app.get(
      '/operator/v1/merchants/:id/api-keys',
      {
        schema: {
          operationId: 'operator.apiKeys.list',
          summary: 'A merchant’s API keys (public parts only)',
          description:
            'Operator token. Every key of the merchant, its stores and submerchants: public key, scope, status (`active`, `revoked`, `expired`) and expiry; secrets are never listed. 404 SVC-RES-3301 for an unknown merchant.',
          tags: ['operator'],
          security,
          params: MerchantParams,
          response: { 200: Type.Object({ items: Type.Array(ApiKeyView) }), ...errors },
        },
      },
      async (request) => {
        await merchants.getMerchant(deps, request.params.id)
        const keys = await merchants.listApiKeys(deps, request.params.id)
        return {
          items: keys.map((k) => ({
            ...k,
            expiresAt: isoZ(k.expiresAt),
            createdAt: isoZ(k.createdAt),
          })),
        }
      },
    )

    app.post(
      '/operator/v1/merchants/:id/api-keys/:keyId/roll',
      {
        schema: {
          operationId: 'operator.apiKeys.roll',
          summary: 'Replace an API key; the old one keeps working for the grace period',
          description:
            'Operator token. A new key pair replaces the key (the secret is in this answer only); the old one keeps working until `previousKeyExpiresAt` (24 hours by default, `KURUS_KEY_ROLL_GRACE_SECONDS`). A revoked or already rolled key is 409 SVC-STATE-3401; 404 SVC-RES-3301 for an unknown key.',
          tags: ['operator'],
          security,
          params: KeyParams,
          response: { 201: RolledKey, ...errors },
        },
      },
      async (request, reply) => {
        const { id, keyId } = request.params
        const { previousExpiresAt, ...key } = await asOperator(
          deps,
          { merchantId: id, action: 'api_key.roll', target: keyId },
          () => merchants.rollApiKey(deps, id, keyId),
        )
        return reply.code(201).send({ ...key, previousKeyExpiresAt: isoZ(previousExpiresAt) })
      },
    )

    // Sandbox only: the seeded demo merchant's current key pair, which `npm start` prints anyway.
    // `kurus sign` asks the running server for it instead of opening the server's embedded
    // database from a second process (PGlite is single-process).
    if (deps.config.env === 'demo') {
      app.get(
        '/operator/v1/demo/credentials',
        {
          schema: {
            operationId: 'operator.demo.credentials',
            tags: ['operator'],
            security,
            summary: 'Sandbox only: the demo merchant’s current key pair',
            description:
              "Sandbox only, operator token. The seeded demo merchant's current public and secret key — play money only; `npm start` prints them too and `kurus sign` reads them here. 404 SVC-RES-3301 before the seed has made the demo merchant.",
            response: { 200: DemoCredentials, ...errors },
          },
        },
        async () => {
          const creds = await merchants.revealDemoCredentials(deps)
          if (!creds) throw new AppError('SVC-RES-3301', 404, 'no demo merchant yet')
          return creds
        },
      )
    }

    app.get(
      '/operator/v1/audit-log',
      {
        schema: {
          operationId: 'operator.auditLog.list',
          summary:
            'An audit log, newest first: a merchant’s (its people’s and the operator’s actions), or the platform’s',
          description:
            'Operator token only. With `merchantId`, that merchant’s log: what its dashboard ' +
            'users did on the web and through the dashboard API, and what the operator API did ' +
            'to it (actor `operator`, `details.door: "operator"`); without it, the platform’s ' +
            'own log (the platform’s POS accounts). Each entry committed with its action. ' +
            'Newest first, `limit` (1–100, default 20) per page, `nextCursor` for the next page; ' +
            'a tampered cursor is 400 `SVC-VAL-3001`.',
          tags: ['operator'],
          security,
          querystring: AuditLogQuery,
          response: { 200: AuditLogPage, ...errors },
        },
      },
      async (request) => {
        const { merchantId, limit, cursor } = request.query
        const page = await listAuditEntries(deps, merchantId ?? PLATFORM_LOG, {
          limit: Math.min(limit, AUDIT_PAGE_MAX),
          cursor,
        })
        return {
          items: page.items.map((e) => ({ ...e, at: isoZ(e.at) })),
          nextCursor: page.nextCursor,
        }
      },
    )

    app.post(
      '/operator/v1/merchants/:id/api-keys/:keyId/revoke',
      {
        schema: {
          operationId: 'operator.apiKeys.revoke',
          summary: 'Revoke an API key at once',
          description:
            'Operator token. The key stops working at once: its next request is 401. 404 SVC-RES-3301 for an unknown key.',
          tags: ['operator'],
          security,
          params: KeyParams,
          response: { 204: Type.Null(), ...errors },
        },
      },
      async (request, reply) => {
        const { id, keyId } = request.params
        await asOperator(deps, { merchantId: id, action: 'api_key.revoke', target: keyId }, () =>
          merchants.revokeApiKey(deps, id, keyId),
        )
        return reply.code(204).send(null)
      },
    )
  }
}
