import cookie from '@fastify/cookie'
import csrfProtection from '@fastify/csrf-protection'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { AppError, notFound } from '../errors.ts'
import { toAppError } from '../http/errors.ts'
import { sendAsset, type AssetRegistry } from './assets.ts'
import { LANG_COOKIE, LANGS, pickLang, type Lang } from './i18n.ts'
import { contentSecurityPolicy, pageSecurityHeaders } from './security.ts'

// The one context every HTML page is served in (hosted buyer pages, the payment link, invoice
// and subscription pages, the merchant dashboard): the per-IP rate limit, the CSP and security
// headers, the language (query, cookie, Accept-Language) and its cookie, HTML error pages
// instead of the JSON envelope, the urlencoded form body, and CSRF on every POST where the
// context has forms that change something. Each context used to register its own copy of
// these lines; a rule changed here changes for every page.

/** The part of the gateway's limiter a page context uses (the kit imports no module). */
export interface PageRateLimiter {
  take(key: string): Promise<{ allowed: boolean; retryAfterSeconds: number }>
}

export interface HtmlContextCsrf {
  /** Signs the CSRF secret cookie (and any other signed cookie of the context). */
  cookieSecret: Buffer
  cookieKey: string
  cookieOptions: { path: string; httpOnly: boolean; sameSite: 'lax'; secure: boolean }
  /** What a token is bound to (the session cookie): a token made for another does not verify. */
  userInfo: (request: FastifyRequest) => string
  hmacKey: Buffer
}

export interface HtmlContextOptions {
  /** Names the context in the error log: "<name> page error". */
  name: string
  /** Live adds HSTS, and the language cookie is Secure unless `secureCookies` says otherwise. */
  live: boolean
  secureCookies?: boolean
  /** The per-IP limiter of the public contexts: every page shares its budget. */
  rateLimiter: PageRateLimiter
  /**
   * The context's static files (our own, content-hashed): served here under their prefix
   * (an unknown name is the 404 page), and fetching them does not spend the budget.
   */
  assets?: AssetRegistry
  /** The asset route's config (the dashboard marks it public: no session needed). */
  assetsRouteConfig?: Record<string, unknown>
  /** A plain HTML form posts urlencoded: its text, turned into the body the routes read. */
  form?: { bodyLimit: number; parse: (text: string) => unknown }
  csrf?: HtmlContextCsrf
  /** The HTML page for a refused or failed request (the AppError carries the status). */
  errorPage: (
    request: FastifyRequest,
    reply: FastifyReply,
    error: AppError,
  ) => FastifyReply | Promise<FastifyReply>
}

const CSRF_ERRORS: ReadonlySet<string> = new Set([
  'FST_CSRF_MISSING_SECRET',
  'FST_CSRF_INVALID_TOKEN',
])

const AssetParams = Type.Object({ name: Type.String({ maxLength: 64 }) })
const AssetQuery = Type.Object({ v: Type.Optional(Type.String({ maxLength: 64 })) })

/** A hosted page reached by its public hash: /invoice/{hash}, /l/{hash}, /subscription/{hash}. */
export const PublicHashParams = Type.Object({
  hash: Type.String({ pattern: '^[A-Za-z0-9_-]{16,64}$' }),
})

/** What a hosted page reads from its query: the language, and the checkout's way back. */
export const ReturnQuery = Type.Object({
  lang: Type.Optional(Type.String({ maxLength: 8 })),
  sessionId: Type.Optional(Type.String({ maxLength: 64 })),
  paymentId: Type.Optional(Type.String({ maxLength: 64 })),
  status: Type.Optional(Type.String({ maxLength: 32 })),
})

/** The page's language: ?lang=, then the language cookie, then Accept-Language. */
export function langOf(request: FastifyRequest): Lang {
  const query = request.query as Record<string, unknown> | undefined
  const fromQuery = typeof query?.['lang'] === 'string' ? query['lang'] : undefined
  return pickLang({
    query: fromQuery,
    cookie: request.headers.cookie,
    acceptLanguage: request.headers['accept-language'],
  })
}

/** This same page in each language (its other query parameters kept). */
export function langHrefs(request: FastifyRequest): Record<Lang, string> {
  const url = new URL(request.url, 'http://pages.invalid')
  const out = {} as Record<Lang, string>
  for (const lang of LANGS) {
    url.searchParams.set('lang', lang)
    out[lang] = url.pathname + url.search
  }
  return out
}

export function sendHtml(reply: FastifyReply, status: number, body: string): FastifyReply {
  return reply.code(status).type('text/html; charset=utf-8').send(body)
}

async function htmlContextPlugin(app: FastifyInstance, options: HtmlContextOptions) {
  const secureCookies = options.secureCookies ?? options.live
  const { assets, csrf, form } = options

  if (form) {
    app.addContentTypeParser(
      'application/x-www-form-urlencoded',
      { parseAs: 'string', bodyLimit: form.bodyLimit },
      (_request, body, done) => {
        done(null, form.parse(String(body)))
      },
    )
  }
  if (csrf) {
    await app.register(cookie, { secret: csrf.cookieSecret })
    await app.register(csrfProtection, {
      cookieKey: csrf.cookieKey,
      cookieOpts: { ...csrf.cookieOptions, signed: true },
      getUserInfo: csrf.userInfo,
      csrfOpts: { hmacKey: csrf.hmacKey },
    })
    app.addHook('onRoute', (route) => {
      // Every POST proves it comes from our own form: a missing or wrong token is a 403 before
      // the handler runs, so nothing changes. (preValidation: the token is in the parsed body.)
      const methods = Array.isArray(route.method) ? route.method : [route.method]
      if (!methods.includes('POST')) return
      const existing = route.preValidation
      route.preValidation = [
        app.csrfProtection,
        ...(existing === undefined ? [] : Array.isArray(existing) ? existing : [existing]),
      ]
    })
  }

  app.addHook('onRequest', async (request) => {
    if (assets !== undefined && request.url.startsWith(assets.prefix)) return
    const decision = await options.rateLimiter.take(`ip:${request.ip}`)
    if (!decision.allowed) {
      throw new AppError('SVC-GW-1004', 429, 'rate limit exceeded', undefined, undefined, {
        'retry-after': String(decision.retryAfterSeconds),
      })
    }
  })

  app.addHook('onSend', async (request, reply, payload) => {
    // A route may set its own CSP (the Kuruş.js card fields name the origins that may frame
    // them); X-Frame-Options cannot name framers, so it is left out for such a page.
    if (!reply.hasHeader('content-security-policy')) {
      void reply.header('content-security-policy', contentSecurityPolicy())
    }
    const framed = !String(reply.getHeader('content-security-policy')).includes(
      "frame-ancestors 'none'",
    )
    for (const [name, value] of Object.entries(pageSecurityHeaders({ live: options.live }))) {
      if (!(framed && name === 'x-frame-options')) void reply.header(name, value)
    }
    if (!reply.hasHeader('cache-control')) void reply.header('cache-control', 'no-store')
    // Remember an explicit language choice (the visible switch) across pages and contexts.
    const chosen = (request.query as Record<string, unknown> | undefined)?.['lang']
    if (chosen === 'tr' || chosen === 'en') {
      void reply.header(
        'set-cookie',
        `${LANG_COOKIE}=${chosen}; Path=/; Max-Age=31536000; SameSite=Lax; HttpOnly${secureCookies ? '; Secure' : ''}`,
      )
    }
    return payload
  })

  if (assets) {
    // Routes here are below the context's own prefix (the dashboard's /dashboard).
    const path = assets.prefix.startsWith(app.prefix)
      ? assets.prefix.slice(app.prefix.length)
      : assets.prefix
    app.get<{ Params: { name: string }; Querystring: { v?: string } }>(
      `${path}:name`,
      {
        schema: { hide: true, params: AssetParams, querystring: AssetQuery },
        ...(options.assetsRouteConfig ? { config: options.assetsRouteConfig } : {}),
      },
      async (request, reply) => {
        const asset = assets.get(request.params.name)
        if (!asset) throw notFound('page')
        return sendAsset(reply, asset, request.query.v)
      },
    )
  }

  app.setErrorHandler(async (error: FastifyError, request, reply) => {
    const appError = CSRF_ERRORS.has(error.code)
      ? new AppError('SVC-AUTH-3201', 403, 'the form is missing its CSRF token or it is wrong')
      : toAppError(error)
    if (appError.status >= 500) {
      request.log.error({ err: error, requestId: request.id }, `${options.name} page error`)
    }
    if (appError.headers) void reply.headers(appError.headers)
    return options.errorPage(request, reply, appError)
  })
}

/**
 * Registered with `app.register(htmlContext, options)` inside the context it serves: it does
 * not open a context of its own (Fastify's skip-override, what fastify-plugin sets), so its
 * hooks, parsers and error handler are that context's.
 */
export const htmlContext = Object.assign(htmlContextPlugin, {
  [Symbol.for('skip-override')]: true,
  [Symbol.for('fastify.display-name')]: 'htmlContext',
})
