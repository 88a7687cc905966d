import type { FastifyInstance, FastifyPluginAsync, FastifyRequest } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import type { Deps } from '../../database.ts'
import { AppError } from '../../platform/errors.ts'
import { errorResponses, isoZ } from '../../platform/http/schemas.ts'
import { dashboardError } from './dashboard.errors.ts'
import {
  ApiKeyList,
  CreateSubmerchantBody,
  CreatedSubmerchant,
  IssuedKey,
  LoginBody,
  LoginResponse,
  MeResponse,
  RolledKey,
  StoreKeyParams,
  StoreParams,
} from './dashboard.schemas.ts'
import {
  createDashboardSubmerchant,
  issueStoreKey,
  listStoreKeys,
  login,
  revokeStoreKey,
  rollStoreKey,
} from './dashboard.service.ts'
import { verifyDashboardToken } from './dashboard.tokens.ts'
import { can, type Permission } from './permissions.ts'
import { getDashboardMember } from '../merchants/index.ts'
import { dashboardAuthOf } from '../../platform/http/dashboard-auth.ts'

export interface DashboardRateLimiter {
  take(bucket: string): Promise<{ allowed: boolean; retryAfterSeconds: number }>
}

export interface DashboardApiOptions {
  deps: Deps
  rateLimiter: DashboardRateLimiter
  /** Other modules' dashboard routes (e.g. webhooks), registered behind the JWT guard. */
  routes: FastifyPluginAsync[]
}

const security = [{ dashboardToken: [] }]
const EmptyBody = Type.Object({}, { additionalProperties: false })

/** What a dashboard API route needs of the caller's role (permissions.ts). */
function apiPermission(method: string, route: string): Permission {
  // Reading the callback signing secret is as sensitive as rotating it.
  if (route === '/v1/stores/:storeId/webhooks/callback-secret') return 'developers.webhooks'
  if (method === 'GET' || method === 'HEAD') return 'read'
  if (route.startsWith('/v1/stores/:storeId/api-keys')) return 'developers.keys'
  if (route.startsWith('/v1/stores/:storeId/webhooks')) return 'developers.webhooks'
  // Submerchants are the marketplace's payees: the people who run payouts decide them.
  if (route === '/v1/dashboard/submerchants') return 'payouts.manage'
  // Anything else that changes state: only those who may do everything.
  return 'team.manage'
}

function bearerOf(request: FastifyRequest): string | undefined {
  const value = request.headers.authorization ?? ''
  // The scheme name is case-insensitive (RFC 9110 §11.1).
  return /^bearer /i.test(value) ? value.slice(7).trim() || undefined : undefined
}

/**
 * The dashboard API's encapsulated context: per-IP rate limit; `POST /v1/dashboard/login`
 * open; everything else behind `Authorization: Bearer <dashboard JWT>`, scoped to the
 * token's merchant. Merchant API keys are refused here, as dashboard tokens are refused by
 * the signed API (which requires X-Api-Key).
 */
export async function dashboardApi(app: FastifyInstance, opts: DashboardApiOptions): Promise<void> {
  const { deps, rateLimiter } = opts
  app.decorateRequest('dashboard', null)
  app.addHook('onRequest', async (request, reply) => {
    void reply.header('cache-control', 'no-store')
    const decision = await rateLimiter.take(`ip:${request.ip}`)
    if (!decision.allowed) {
      throw new AppError('SVC-GW-1004', 429, 'rate limit exceeded', undefined, undefined, {
        'retry-after': String(decision.retryAfterSeconds),
      })
    }
  })
  app.addHook('preValidation', async (request) => {
    if (request.bodyParseFailed) {
      throw new AppError('SVC-VAL-3002', 400, 'request body is not valid JSON')
    }
  })

  await app.register(async (plain) => {
    const open = plain.withTypeProvider<TypeBoxTypeProvider>()
    open.post(
      '/v1/dashboard/login',
      {
        schema: {
          operationId: 'dashboard.login',
          tags: ['dashboard'],
          summary: 'Log in to the dashboard; the token lasts one hour',
          security: [],
          body: LoginBody,
          response: { 200: LoginResponse, ...errorResponses },
        },
      },
      async (request) => {
        const session = await login(deps, request.body.email, request.body.password)
        return { token: session.token, expiresAt: isoZ(session.expiresAt) }
      },
    )
  })

  await app.register(async (guarded) => {
    guarded.addHook('onRequest', async (request) => {
      if (request.headers['x-api-key'] !== undefined) throw dashboardError('api_key_not_accepted')
      const token = bearerOf(request)
      if (!token) throw dashboardError('token_missing')
      const claims = await verifyDashboardToken(deps, token)
      if (!claims) throw dashboardError('token_invalid')
      // The user's role now (not when the token was made): a removed member's token stops
      // working at once, and the web pages' permission table decides here too.
      const member = await getDashboardMember(deps, claims.merchantId, claims.userId)
      if (!member) throw dashboardError('token_invalid')
      if (!can(member.role, apiPermission(request.method, request.routeOptions.url ?? ''))) {
        throw dashboardError('forbidden')
      }
      request.dashboard = claims
    })
    await guarded.register(dashboardRoutes(deps))
    for (const routes of opts.routes) await guarded.register(routes)
  })
}

function dashboardRoutes(deps: Deps): FastifyPluginAsync {
  return async (plain) => {
    const app = plain.withTypeProvider<TypeBoxTypeProvider>()

    app.get(
      '/v1/dashboard/me',
      {
        schema: {
          operationId: 'dashboard.me',
          tags: ['dashboard'],
          summary: 'The logged-in dashboard user',
          security,
          response: { 200: MeResponse, ...errorResponses },
        },
      },
      async (request) => dashboardAuthOf(request),
    )

    app.get(
      '/v1/stores/:storeId/api-keys',
      {
        schema: {
          operationId: 'dashboard.apiKeys.list',
          tags: ['dashboard'],
          summary: "The store's API keys (public parts only)",
          security,
          params: StoreParams,
          response: { 200: ApiKeyList, ...errorResponses },
        },
      },
      async (request) => {
        const { merchantId } = dashboardAuthOf(request)
        const keys = await listStoreKeys(deps, merchantId, request.params.storeId)
        return {
          items: keys.map((k) => ({
            apiKeyId: k.apiKeyId,
            publicKey: k.publicKey,
            storeId: k.storeId,
            subjectScope: k.subjectScope,
            status: k.status,
            expiresAt: isoZ(k.expiresAt),
            createdAt: isoZ(k.createdAt),
          })),
        }
      },
    )

    app.post(
      '/v1/stores/:storeId/api-keys',
      {
        schema: {
          operationId: 'dashboard.apiKeys.create',
          tags: ['dashboard'],
          summary: 'Issue another key pair for the store; the secret is shown once',
          security,
          params: StoreParams,
          body: EmptyBody,
          response: { 201: IssuedKey, ...errorResponses },
        },
      },
      async (request, reply) => {
        const { merchantId } = dashboardAuthOf(request)
        return reply.code(201).send(await issueStoreKey(deps, merchantId, request.params.storeId))
      },
    )

    app.post(
      '/v1/stores/:storeId/api-keys/:keyId/roll',
      {
        schema: {
          operationId: 'dashboard.apiKeys.roll',
          tags: ['dashboard'],
          summary: 'Replace a key; the old one keeps working for the grace period (24 h)',
          security,
          params: StoreKeyParams,
          body: EmptyBody,
          response: { 200: RolledKey, ...errorResponses },
        },
      },
      async (request) => {
        const { merchantId } = dashboardAuthOf(request)
        const { storeId, keyId } = request.params
        const rolled = await rollStoreKey(deps, merchantId, storeId, keyId)
        return {
          apiKeyId: rolled.apiKeyId,
          publicKey: rolled.publicKey,
          secretKey: rolled.secretKey,
          previousKeyExpiresAt: isoZ(rolled.previousExpiresAt),
        }
      },
    )

    app.delete(
      '/v1/stores/:storeId/api-keys/:keyId',
      {
        schema: {
          operationId: 'dashboard.apiKeys.revoke',
          tags: ['dashboard'],
          summary: 'Revoke a key at once',
          security,
          params: StoreKeyParams,
          response: { 204: Type.Null(), ...errorResponses },
        },
      },
      async (request, reply) => {
        const { merchantId } = dashboardAuthOf(request)
        await revokeStoreKey(deps, merchantId, request.params.storeId, request.params.keyId)
        return reply.code(204).send(null)
      },
    )

    app.post(
      '/v1/dashboard/submerchants',
      {
        schema: {
          operationId: 'dashboard.submerchants.create',
          tags: ['dashboard'],
          summary: 'Create a submerchant and its key pair; the secret is shown once',
          security,
          body: CreateSubmerchantBody,
          response: { 201: CreatedSubmerchant, ...errorResponses },
        },
      },
      async (request, reply) => {
        const { merchantId } = dashboardAuthOf(request)
        const { payoutLimits, ...rest } = request.body
        const created = await createDashboardSubmerchant(deps, merchantId, {
          ...rest,
          ...(payoutLimits ? { payoutLimits } : {}),
        })
        return reply.code(201).send({ submerchantId: created.submerchantId, ...created.key })
      },
    )
  }
}
