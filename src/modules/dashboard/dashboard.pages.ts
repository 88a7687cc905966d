import formbody from '@fastify/formbody'
import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import type { Deps } from '../../database.ts'
import type { AppError } from '../../platform/errors.ts'
import { errorContent, type ErrorStatus } from '../../platform/web/shell.ts'
import { csrfInput, field } from '../../platform/web/components.ts'
import { htmlContext, langOf } from '../../platform/web/html-context.ts'
import { markup } from '../../platform/web/html.ts'
import { t } from '../../platform/web/i18n.ts'
import type { RateLimiter } from '../gateway/index.ts'
import {
  ASSETS,
  BASE,
  CSRF_COOKIE,
  attempt,
  clearSessionCookie,
  cookieOptions,
  cookieSigningKey,
  csrfHmacKey,
  csrfToken,
  newPasswordFields,
  csrfUserInfo,
  redirect,
  refusalText,
  renderPage,
  renderPublicPage,
  sessionCookieValue,
  setFlash,
  setSessionCookie,
  signedInContext,
} from './dashboard.web.ts'
import { formFields } from './forms.ts'
import { AcceptInviteBody, CodeBody, PageActionBody, WebLoginBody } from './dashboard.schemas.ts'
import { enforcePageRule, notePageRoute } from './page-rules.ts'
import { SECTIONS } from './sections.ts'
import {
  resolveSession,
  signIn,
  signOut,
  verifySecondFactor,
  type WebSession,
} from './sessions.service.ts'
import { accountPages } from './account.pages.ts'
import { acceptInvitation, findInvitation } from './team.service.ts'

// The merchant dashboard's web pages, server-rendered under /dashboard in their own
// encapsulated context: cookies, urlencoded forms, CSRF on every POST, a server-side session
// looked up on every request, the kit's CSP and headers, HTML error pages. This file holds
// the context and the sign-in pages; each section's pages are in sections.ts's list.

const FORM_BODY_BYTES_MAX = 64 * 1024

/** Where a route may be reached: before sign-in, at a sign-in step, or signed in (default). */
type Access = 'public' | 'second_factor' | 'enrol' | 'active'

declare module 'fastify' {
  interface FastifyContextConfig {
    dashboardAccess?: Access
  }
}

export interface DashboardPagesOptions {
  /** The per-IP limiter of the public contexts: the dashboard pages share its budget. */
  rateLimiter: RateLimiter
}

/** Registers the dashboard under /dashboard as its own context (hooks, error pages). */
export function dashboardPagesRoutes(
  deps: Deps,
  options: DashboardPagesOptions,
): FastifyPluginAsync {
  return async (app) => {
    await app.register(
      async (ctx) => {
        await dashboardContext(ctx, deps, options)
      },
      { prefix: BASE },
    )
  }
}

function accessOf(request: FastifyRequest): Access {
  return request.routeOptions.config.dashboardAccess ?? 'active'
}

/** Where a session at this stage belongs (undefined: it may go where it asked). */
function stageHome(session: WebSession | null, access: Access): string | undefined {
  if (access === 'public') return undefined
  if (!session) return `${BASE}/login`
  if (session.stage === 'second_factor') {
    return access === 'second_factor' ? undefined : `${BASE}/login/two-factor`
  }
  if (session.stage === 'enrol') {
    return access === 'enrol' ? undefined : `${BASE}/settings/two-factor`
  }
  return access === 'second_factor' ? BASE : undefined
}

async function dashboardContext(app: FastifyInstance, deps: Deps, options: DashboardPagesOptions) {
  await app.register(htmlContext, {
    name: 'dashboard',
    live: deps.config.env === 'live',
    secureCookies: cookieOptions(deps).secure,
    rateLimiter: options.rateLimiter,
    assets: ASSETS,
    assetsRouteConfig: { dashboardAccess: 'public' },
    csrf: {
      cookieSecret: cookieSigningKey(deps),
      cookieKey: CSRF_COOKIE,
      cookieOptions: cookieOptions(deps),
      // A token is good only with the session cookie it was made for (dashboard.web.ts).
      userInfo: csrfUserInfo,
      hmacKey: csrfHmacKey(deps),
    },
    // A refused KYC gate (a page rule's, as the API's) says why, not just "not allowed".
    errorPage: (request, reply, error) =>
      errorPage(
        deps,
        request,
        reply,
        error.status,
        error.code === 'SVC-KYC-3101' ? error : undefined,
      ),
  })
  await app.register(formbody, { bodyLimit: FORM_BODY_BYTES_MAX })
  app.decorateRequest('dashSession', null)
  app.decorateRequest('dashNav', { getter: () => SECTIONS })
  app.addHook('onRoute', (route) => {
    route.schema = { ...route.schema, hide: true }
    notePageRoute(route, BASE)
  })

  // After the context's rate limit: the session behind the cookie, looked up on every request.
  app.addHook('onRequest', async (request) => {
    if (request.url.startsWith(`${BASE}/assets/`)) return
    const token = sessionCookieValue(request)
    request.dashSession = token ? ((await resolveSession(deps, token)) ?? null) : null
  })
  // Then every route checks that the session may be there (sign-in steps, enrolment).
  app.addHook('preHandler', async (request, reply) => {
    const home = stageHome(request.dashSession, accessOf(request))
    // The route's declared permission and KYC gate (page-rules.ts), before its handler.
    if (!home) return enforcePageRule(deps, request)
    // An htmx request (a swap in place) is told to load the whole page instead.
    if (request.headers['hx-request'] === 'true') {
      return reply.code(200).header('hx-redirect', home).send('')
    }
    return redirect(reply, home)
  })
  app.setNotFoundHandler(async (request, reply) => errorPage(deps, request, reply, 404))

  signInRoutes(app, deps)
  invitationRoutes(app, deps)
  await app.register(accountPages(deps))
  for (const section of SECTIONS) await app.register(section.pages(deps))
}

/** The error page: inside the signed-in shell when there is a session, else the bare one. */
async function errorPage(
  deps: Deps,
  request: FastifyRequest,
  reply: FastifyReply,
  status: number,
  why?: AppError,
): Promise<FastifyReply> {
  const lang = langOf(request)
  const shown: ErrorStatus =
    status === 403 || status === 404 || status === 429 || status === 409 || status === 400
      ? status
      : // A body over a route's limit (an evidence upload): the bad-request page, not a 500.
        status === 413
        ? 400
        : 500
  const { heading, content } = errorContent(lang, shown, request.id, BASE)
  const session = request.dashSession
  if (session?.stage === 'active') {
    return renderPage(signedInContext(deps, request, reply, session), {
      heading,
      content,
      section: '',
      status,
      ...(why ? { flash: { kind: 'error' as const, text: refusalText(lang, why) } } : {}),
    })
  }
  return renderPublicPage(deps, request, reply, { heading, content, status })
}

function loginForm(
  request: FastifyRequest,
  reply: FastifyReply,
  values: { email?: string; next?: string },
) {
  const lang = langOf(request)
  return markup`<form method="post" action="${BASE}/login" class="panel form-stack" novalidate>
    ${csrfInput(csrfToken(request, reply))}
    ${values.next ? markup`<input type="hidden" name="next" value="${values.next}" />` : ''}
    ${field({
      name: 'email',
      label: t(lang, 'dash_login_email'),
      type: 'email',
      autocomplete: 'username',
      value: values.email,
      required: true,
      maxlength: 320,
    })}
    ${field({
      name: 'password',
      label: t(lang, 'dash_login_password'),
      type: 'password',
      autocomplete: 'current-password',
      required: true,
      maxlength: 200,
    })}
    <button type="submit" class="button button-primary button-full">
      ${t(lang, 'dash_login_submit')}
    </button>
    <p><a href="${BASE}/password/forgot" id="forgot-link">${t(lang, 'dash_forgot_link')}</a></p>
  </form>`
}

/** Only our own pages are a place to return to after sign-in. */
function safeNext(value: string | undefined): string | undefined {
  if (!value || !value.startsWith(`${BASE}/`) || value.startsWith(`${BASE}/login`)) return undefined
  return /^[\w\-/?=&%.]+$/.test(value) ? value : undefined
}

// The sign-in steps need no permission and say so (`public`), with the schema of what their
// forms send (page-rules.ts); dashboardAccess says which half-session may reach each.
const SIGN_IN = {
  login: { permission: 'public', schema: WebLoginBody },
  code: { permission: 'public', schema: CodeBody },
  logout: { permission: 'public', schema: PageActionBody },
  accept: { permission: 'public', schema: AcceptInviteBody },
} as const

function signInRoutes(app: FastifyInstance, deps: Deps): void {
  app.get('/login', { config: { dashboardAccess: 'public' } }, async (request, reply) => {
    if (request.dashSession?.stage === 'active') return redirect(reply, BASE)
    const lang = langOf(request)
    const next = safeNext((request.query as Record<string, string | undefined>)['next'])
    return renderPublicPage(deps, request, reply, {
      heading: t(lang, 'dash_login_title'),
      content: loginForm(request, reply, next ? { next } : {}),
    })
  })

  const login = { config: { dashboardAccess: 'public', page: SIGN_IN.login } } as const
  app.post('/login', login, async (request, reply) => {
    const lang = langOf(request)
    const form = formFields(request)
    const email = form.text('email', 320)
    const next = safeNext(form.text('next', 500))
    const signedIn = await signIn(deps, email, form.text('password', 200))
    if (!signedIn) {
      // One message whatever was wrong (email, password, or a locked email).
      return renderPublicPage(deps, request, reply, {
        heading: t(lang, 'dash_login_title'),
        status: 401,
        flash: { kind: 'error', text: t(lang, 'dash_login_failed') },
        content: loginForm(request, reply, { email, ...(next ? { next } : {}) }),
      })
    }
    // A fully signed-in session committed with its audit entry (sessions.service.ts).
    setSessionCookie(deps, reply, signedIn.token)
    const home =
      signedIn.stage === 'second_factor'
        ? `${BASE}/login/two-factor`
        : signedIn.stage === 'enrol'
          ? `${BASE}/settings/two-factor`
          : (next ?? BASE)
    return redirect(reply, home)
  })

  const codeForm = (request: FastifyRequest, reply: FastifyReply) => {
    const lang = langOf(request)
    return markup`<form method="post" action="${BASE}/login/two-factor" class="panel form-stack">
      <p>${t(lang, 'dash_2fa_prompt')}</p>
      ${csrfInput(csrfToken(request, reply))}
      ${field({
        name: 'code',
        label: t(lang, 'dash_2fa_code'),
        autocomplete: 'one-time-code',
        maxlength: 24,
        required: true,
        autofocus: true,
        hint: t(lang, 'dash_2fa_recovery_hint'),
      })}
      <button type="submit" class="button button-primary button-full">
        ${t(lang, 'dash_2fa_submit')}
      </button>
    </form>`
  }

  app.get(
    '/login/two-factor',
    { config: { dashboardAccess: 'second_factor' } },
    async (request, reply) =>
      renderPublicPage(deps, request, reply, {
        heading: t(langOf(request), 'dash_2fa_title'),
        content: codeForm(request, reply),
      }),
  )

  app.post(
    '/login/two-factor',
    { config: { dashboardAccess: 'second_factor', page: SIGN_IN.code } },
    async (request, reply) => {
      const lang = langOf(request)
      const session = request.dashSession
      if (!session) return redirect(reply, `${BASE}/login`)
      // A TOTP code or a recovery code, in the one field.
      const outcome = await verifySecondFactor(deps, session, formFields(request).text('code', 40))
      if (outcome.ok) {
        setSessionCookie(deps, reply, outcome.token)
        return redirect(reply, BASE)
      }
      if (outcome.ended) {
        clearSessionCookie(deps, reply)
        setFlash(deps, reply, 'error', 'dash_2fa_ended')
        return redirect(reply, `${BASE}/login`)
      }
      return renderPublicPage(deps, request, reply, {
        heading: t(lang, 'dash_2fa_title'),
        status: 400,
        flash: { kind: 'error', text: t(lang, 'dash_2fa_wrong') },
        content: codeForm(request, reply),
      })
    },
  )

  const logout = { config: { dashboardAccess: 'public', page: SIGN_IN.logout } } as const
  app.post('/logout', logout, async (request, reply) => {
    const session = request.dashSession
    // The sign-out's audit entry commits with it (sessions.service.ts).
    if (session) await signOut(deps, session)
    clearSessionCookie(deps, reply)
    setFlash(deps, reply, 'info', 'dash_signed_out')
    return redirect(reply, `${BASE}/login`)
  })
}

function invitationRoutes(app: FastifyInstance, deps: Deps): void {
  const page = async (
    request: FastifyRequest,
    reply: FastifyReply,
    error?: AppError,
  ): Promise<FastifyReply> => {
    const lang = langOf(request)
    const { token } = request.params as { token: string }
    const invitation = await findInvitation(deps, token)
    if (!invitation) {
      return renderPublicPage(deps, request, reply, {
        heading: t(lang, 'dash_invite_invalid_title'),
        status: 404,
        content: markup`<div class="panel">
          <p>${t(lang, 'dash_invite_invalid_body')}</p>
          <p><a href="${BASE}/login">${t(lang, 'dash_login_title')}</a></p>
        </div>`,
      })
    }
    return renderPublicPage(deps, request, reply, {
      heading: t(lang, 'dash_invite_title', { merchant: invitation.merchantName }),
      status: error ? error.status : 200,
      ...(error ? { flash: { kind: 'error' as const, text: refusalText(lang, error) } } : {}),
      content: markup`<form method="post" action="${BASE}/invite/${token}" class="panel form-stack">
        <p>${t(lang, 'dash_invite_intro')}</p>
        ${csrfInput(csrfToken(request, reply))}
        ${field({
          name: 'email',
          label: t(lang, 'dash_login_email'),
          type: 'email',
          autocomplete: 'username',
          value: invitation.email,
        })}
        ${newPasswordFields(lang)}
        <button type="submit" class="button button-primary button-full">
          ${t(lang, 'dash_invite_submit')}
        </button>
      </form>`,
    })
  }

  // The link's token is its only bearer: keep these URLs out of the request log.
  const route = { config: { dashboardAccess: 'public' as const }, logLevel: 'warn' as const }
  app.get('/invite/:token', route, async (request, reply) => page(request, reply))

  const accept = { ...route, config: { ...route.config, page: SIGN_IN.accept } }
  app.post('/invite/:token', accept, async (request, reply) => {
    const { token } = request.params as { token: string }
    const form = formFields(request)
    // The join's audit entry commits with the new member (team.service.ts).
    const result = await attempt(() =>
      acceptInvitation(deps, token, form.text('password', 400), form.text('passwordConfirm', 400)),
    )
    if (!result.ok) return page(request, reply, result.error)
    setFlash(deps, reply, 'success', 'dash_invite_done')
    return redirect(reply, `${BASE}/login`)
  })
}
