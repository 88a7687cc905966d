import type {
  FastifyInstance,
  FastifyPluginAsync,
  FastifyReply,
  FastifyRequest,
  RouteHandlerMethod,
} from 'fastify'
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
  DashboardSession,
  IssuedKey,
  LoginBody,
  LoginResponse,
  MeResponse,
  RolledKey,
  StoreKeyParams,
  StoreParams,
  TwoFactorBody,
} from './dashboard.schemas.ts'
import {
  authenticateToken,
  createDashboardSubmerchant,
  issueStoreKey,
  listStoreKeys,
  login,
  loginSecondFactor,
  revokeStoreKey,
  rollStoreKey,
  signOutToken,
} from './dashboard.service.ts'
import { can, type Permission } from './permissions.ts'
import { getAllowedOrigins, setAllowedOrigins } from '../merchants/index.ts'
import { dashboardAuthOf } from '../../platform/http/dashboard-auth.ts'
import { audited } from '../audit/index.ts'

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
  // Anyone may end their own token.
  if (route === '/v1/dashboard/logout') return 'read'
  if (route.startsWith('/v1/stores/:storeId/api-keys')) return 'developers.keys'
  // Which pages may take cards with the store's publishable key: as sensitive as its keys.
  if (route === '/v1/stores/:storeId/allowed-origins') return 'developers.keys'
  if (route.startsWith('/v1/stores/:storeId/webhooks')) return 'developers.webhooks'
  // Submerchants are the marketplace's payees: the people who run payouts decide them.
  if (route === '/v1/dashboard/submerchants') return 'payouts.manage'
  // Anything else that changes state: only those who may do everything.
  return 'team.manage'
}

// The audit log's name for each action of the dashboard API: the same names the web pages
// write for the same actions (developers.pages.ts), so the log reads the same whatever the door.
const API_ACTIONS: Record<string, { action: string; target: string }> = {
  'POST /v1/dashboard/logout': { action: 'session.sign_out', target: '' },
  'POST /v1/stores/:storeId/api-keys': { action: 'api_key.create', target: 'storeId' },
  'POST /v1/stores/:storeId/api-keys/:keyId/roll': { action: 'api_key.roll', target: 'keyId' },
  'DELETE /v1/stores/:storeId/api-keys/:keyId': { action: 'api_key.revoke', target: 'keyId' },
  'POST /v1/dashboard/submerchants': { action: 'submerchant.create', target: '' },
  'PUT /v1/stores/:storeId/allowed-origins': {
    action: 'store.allowed_origins.set',
    target: 'storeId',
  },
  'POST /v1/stores/:storeId/webhooks': { action: 'webhook.create', target: 'storeId' },
  'DELETE /v1/stores/:storeId/webhooks/:id': { action: 'webhook.delete', target: 'id' },
  'POST /v1/stores/:storeId/webhooks/:id/rotate-secret': {
    action: 'webhook.rotate_secret',
    target: 'id',
  },
  'POST /v1/stores/:storeId/webhooks/:id/enable': { action: 'webhook.enable', target: 'id' },
  'POST /v1/stores/:storeId/webhooks/deliveries/:id/redeliver': {
    action: 'webhook.redeliver',
    target: 'id',
  },
  // Reading a signing secret is recorded as an action.
  'GET /v1/stores/:storeId/webhooks/callback-secret': {
    action: 'webhook.callback_secret_read',
    target: 'storeId',
  },
}

/** The audit entry of a route, or undefined for a read. */
function apiAction(method: string, url: string): { action: string; target: string } | undefined {
  const known = API_ACTIONS[`${method} ${url}`]
  if (known) return known
  if (method === 'GET' || method === 'HEAD') return undefined
  // A state-changing route no one named yet is still recorded, under its route.
  return { action: `api:${method} ${url}`, target: '' }
}

/**
 * Wraps a state-changing route's handler so its audit entry commits inside the action's own
 * transaction (audit module's `audited`): an action through a token is never done without its
 * entry, as through the web pages.
 */
function auditedHandler(
  deps: Deps,
  method: string,
  url: string,
  handler: RouteHandlerMethod,
): RouteHandlerMethod {
  const named = apiAction(method, url)
  if (!named) return handler
  return async function (this: FastifyInstance, request: FastifyRequest, reply: FastifyReply) {
    const caller = dashboardAuthOf(request)
    const params = (request.params ?? {}) as Record<string, string | undefined>
    return audited(
      deps,
      {
        merchantId: caller.merchantId,
        actorId: caller.userId,
        action: named.action,
        target: named.target ? (params[named.target] ?? null) : null,
        details: { door: 'dashboard_api' },
      },
      async () => handler.call(this, request, reply) as Promise<unknown>,
    )
  }
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
          summary:
            'Log in to the dashboard: a token (an hour at most, 30 idle minutes), or a two-factor challenge for a user with two-factor on',
          description:
            "With a dashboard user's email and password: `{token, expiresAt}` to send as `Authorization: Bearer`, or `{twoFactorRequired, challengeToken}` for a user with two-factor on (then `POST /v1/dashboard/login/two-factor`). Wrong credentials are 401 SVC-GW-1003; a user who must enrol in two-factor first is 403 SVC-AUTH-3201 (enrol in the web dashboard). Rate-limited per IP (429 SVC-GW-1004); merchant API keys are not accepted on the dashboard API.",
          security: [],
          body: LoginBody,
          response: { 200: LoginResponse, ...errorResponses },
        },
      },
      async (request) => {
        const result = await login(deps, request.body.email, request.body.password)
        if ('twoFactorRequired' in result) {
          return {
            twoFactorRequired: true as const,
            challengeToken: result.challengeToken,
            expiresAt: isoZ(result.expiresAt),
          }
        }
        // The sign-in's audit entry committed with the token's session (sessions.service.ts).
        return { token: result.token, expiresAt: isoZ(result.expiresAt) }
      },
    )
    open.post(
      '/v1/dashboard/login/two-factor',
      {
        schema: {
          operationId: 'dashboard.loginTwoFactor',
          tags: ['dashboard'],
          summary:
            "The login's second step: the challenge and a TOTP code give the token; 5 wrong codes end the challenge",
          description:
            "Sends the login's `challengeToken` and the user's current TOTP code for `{token, expiresAt}`. A wrong code is 401 SVC-GW-1003; the challenge lasts 5 minutes and ends after 5 wrong codes (401 SVC-GW-1003: log in again).",
          security: [],
          body: TwoFactorBody,
          response: { 200: DashboardSession, ...errorResponses },
        },
      },
      async (request) => {
        const { challengeToken, code } = request.body
        const result = await loginSecondFactor(deps, challengeToken, code)
        return { token: result.token, expiresAt: isoZ(result.expiresAt) }
      },
    )
  })

  await app.register(async (guarded) => {
    guarded.addHook('onRoute', (route) => {
      const methods = Array.isArray(route.method) ? route.method : [route.method]
      const method = methods.find((m) => m !== 'HEAD') ?? 'GET'
      route.handler = auditedHandler(deps, method, route.url, route.handler)
    })
    guarded.addHook('onRequest', async (request) => {
      if (request.headers['x-api-key'] !== undefined) throw dashboardError('api_key_not_accepted')
      const token = bearerOf(request)
      if (!token) throw dashboardError('token_missing')
      // The token's server-side session, looked up on every request: ended at sign-out, after
      // 30 idle minutes, at a password change, and when the user leaves the team. The user's
      // role now (not when the token was made) decides, by the web pages' permission table.
      const session = await authenticateToken(deps, token)
      if (!session) throw dashboardError('token_invalid')
      const { member } = session
      if (!can(member.role, apiPermission(request.method, request.routeOptions.url ?? ''))) {
        throw dashboardError('forbidden')
      }
      request.dashboard = {
        userId: member.userId,
        merchantId: member.merchantId,
        email: member.email,
      }
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
          description:
            "The token's user: user id, merchant id and email. Any role; a missing, expired or signed-out token is 401 SVC-GW-1003.",
          security,
          response: { 200: MeResponse, ...errorResponses },
        },
      },
      async (request) => dashboardAuthOf(request),
    )

    app.post(
      '/v1/dashboard/logout',
      {
        schema: {
          operationId: 'dashboard.logout',
          tags: ['dashboard'],
          summary:
            "Sign out: this token ends at once (the user's other tokens and web sessions go on)",
          description:
            "Ends this token's session at once; any role may. The user's other tokens and web sessions are not touched.",
          security,
          response: { 204: Type.Null(), ...errorResponses },
        },
      },
      async (request, reply) => {
        await signOutToken(deps, bearerOf(request) ?? '')
        return reply.code(204).send(null)
      },
    )

    app.get(
      '/v1/stores/:storeId/api-keys',
      {
        schema: {
          operationId: 'dashboard.apiKeys.list',
          tags: ['dashboard'],
          summary: "The store's API keys (public parts only)",
          description:
            "The store's API keys with their public parts, status and dates; secrets are never listed. Any role may read; 404 SVC-RES-3301 for another merchant's store.",
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

    const AllowedOrigins = Type.Object(
      {
        origins: Type.Array(Type.String({ minLength: 1, maxLength: 255 }), {
          maxItems: 20,
          description:
            "the merchant pages that may mount Kuruş.js card fields with this store's " +
            'publishable key: https://host[:port] (http://localhost… in the sandbox)',
        }),
      },
      {
        additionalProperties: false,
        title: 'AllowedOrigins',
        examples: [{ origins: ['https://shop.example', 'https://www.shop.example'] }],
      },
    )

    app.get(
      '/v1/stores/:storeId/allowed-origins',
      {
        schema: {
          operationId: 'dashboard.allowedOrigins.get',
          tags: ['dashboard'],
          summary: 'The pages that may take cards with Kuruş.js',
          description:
            "Origins whose pages may mount Kuruş.js card fields with the store's publishable " +
            'key and make browser card tokens (`POST /v1/public/tokens`). Empty: none may.',
          security,
          params: StoreParams,
          response: { 200: AllowedOrigins, ...errorResponses },
        },
      },
      async (request) => {
        const { merchantId } = dashboardAuthOf(request)
        return { origins: await getAllowedOrigins(deps, merchantId, request.params.storeId) }
      },
    )

    app.put(
      '/v1/stores/:storeId/allowed-origins',
      {
        schema: {
          operationId: 'dashboard.allowedOrigins.set',
          tags: ['dashboard'],
          summary: 'Set the pages that may take cards with Kuruş.js',
          description:
            'Replaces the list. Each entry is an origin as a browser sends it: ' +
            '`https://shop.example` (no path); plain `http://` only for localhost in the ' +
            'sandbox. Example: `{"origins": ["https://shop.example"]}`.',
          security,
          params: StoreParams,
          body: AllowedOrigins,
          response: { 200: AllowedOrigins, ...errorResponses },
        },
      },
      async (request) => {
        const { merchantId } = dashboardAuthOf(request)
        const origins = await setAllowedOrigins(
          deps,
          merchantId,
          request.params.storeId,
          request.body.origins,
        )
        return { origins }
      },
    )

    app.post(
      '/v1/stores/:storeId/api-keys',
      {
        schema: {
          operationId: 'dashboard.apiKeys.create',
          tags: ['dashboard'],
          summary: 'Issue another key pair for the store; the secret is shown once',
          description:
            'A new key pair for the store: the secret key is in this answer only. Owner, admin or developer role (else 403 SVC-AUTH-3201); the action is in the audit log.',
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
          description:
            'A new key pair replaces the key; the old one keeps working for 24 hours, so deployments can switch over. The new secret is in this answer only. Owner, admin or developer role; 404 SVC-RES-3301 for a key not of this store; audited.',
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
          description:
            'The key stops working at once (its requests are 401). Owner, admin or developer role; 404 SVC-RES-3301 for a key not of this store; audited.',
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
          description:
            'A submerchant (a payee of the marketplace, paid out to its TR IBAN — checked, else 400 SVC-VAL-3001) with its own key pair, whose secret is in this answer only. Owner, admin or finance role (else 403 SVC-AUTH-3201); audited.',
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
