import { hkdfSync } from 'node:crypto'
import type { FastifyReply, FastifyRequest } from 'fastify'
// The cookie and CSRF plugins' request and reply decorations (registered by the html context).
import type {} from '@fastify/cookie'
import type {} from '@fastify/csrf-protection'
import type { Deps } from '../../database.ts'
import { AppError } from '../../platform/errors.ts'
import { appAssets, merchantShell, type NavLink } from '../../platform/web/shell.ts'
import { field, type Flash } from '../../platform/web/components.ts'
import { jsonForScript, markup, type SafeHtml } from '../../platform/web/html.ts'
import { langHrefs, langOf, sendHtml } from '../../platform/web/html-context.ts'
import { t, type Lang, type MessageKey } from '../../platform/web/i18n.ts'
import { audited, type AuditInput } from '../audit/index.ts'
import { getMerchant, type DashboardMember } from '../merchants/index.ts'
import { dashboardError } from './dashboard.errors.ts'
import { can, type Permission } from './permissions.ts'
import type { WebSession } from './sessions.service.ts'

// What every dashboard page handler shares: cookies, the language, the signed-in context
// (`allow` checks the role against permissions.ts, in the handler), rendering in the kit's
// shell, flash messages, and the words for a refused action.

export const BASE = '/dashboard'
export const SESSION_COOKIE = 'kurus_dash'
export const CSRF_COOKIE = 'kurus_dash_csrf'
const FLASH_COOKIE = 'kurus_dash_flash'

export const ASSETS = appAssets(`${BASE}/assets/`)

declare module 'fastify' {
  interface FastifyRequest {
    /** The live session behind the cookie, if any (set by the dashboard's onRequest hook). */
    dashSession: WebSession | null
    /** The navigation for this user (set with the session). */
    dashNav: readonly DashboardNavItem[]
  }
}

export interface DashboardNavItem {
  id: string
  label: MessageKey
  href: string
}

function derivedKey(deps: Deps, purpose: string): Buffer {
  return Buffer.from(hkdfSync('sha256', deps.config.masterKey, Buffer.alloc(0), purpose, 32))
}

/** Signs our cookies (CSRF secret, flash): derived from the master key for this use only. */
export function cookieSigningKey(deps: Deps): Buffer {
  return derivedKey(deps, 'kurus/dashboard/cookies')
}

export function csrfHmacKey(deps: Deps): Buffer {
  return derivedKey(deps, 'kurus/dashboard/csrf')
}

/** HttpOnly, SameSite=Lax, scoped to the dashboard; Secure whenever we are served over https. */
export function cookieOptions(deps: Deps) {
  return {
    path: BASE,
    httpOnly: true,
    sameSite: 'lax' as const,
    secure: deps.config.publicApiUrl.startsWith('https:'),
  }
}

export function sessionCookieValue(request: FastifyRequest): string | undefined {
  return request.cookies[SESSION_COOKIE]
}

export function setSessionCookie(deps: Deps, reply: FastifyReply, token: string): void {
  // A browser-session cookie: the server's idle and absolute limits decide its life.
  void reply.setCookie(SESSION_COOKIE, token, cookieOptions(deps))
}

export function clearSessionCookie(deps: Deps, reply: FastifyReply): void {
  void reply.clearCookie(SESSION_COOKIE, cookieOptions(deps))
}

/**
 * What a CSRF token is bound to: the session cookie the browser holds (a fixed word before
 * sign-in; the CSRF library refuses an empty one). A token planted before sign-in, or made for
 * another session, does not verify after it.
 */
export function csrfUserInfo(request: FastifyRequest): string {
  return sessionCookieValue(request) ?? 'signed-out'
}

/** A CSRF token for this page's forms. */
export function csrfToken(request: FastifyRequest, reply: FastifyReply): string {
  return reply.generateCsrf({ userInfo: csrfUserInfo(request) })
}

// ---- flash messages: one message carried to the page a POST redirects to

export function setFlash(
  deps: Deps,
  reply: FastifyReply,
  kind: Flash['kind'],
  key: MessageKey,
  vars: Record<string, string | number> = {},
): void {
  void reply.setCookie(FLASH_COOKIE, JSON.stringify({ kind, key, vars }), {
    ...cookieOptions(deps),
    signed: true,
    maxAge: 60,
  })
}

function takeFlash(deps: Deps, request: FastifyRequest, reply: FastifyReply, lang: Lang) {
  const raw = request.cookies[FLASH_COOKIE]
  if (!raw) return undefined
  void reply.clearCookie(FLASH_COOKIE, cookieOptions(deps))
  const unsigned = request.unsignCookie(raw)
  if (!unsigned.valid || unsigned.value === null) return undefined
  try {
    const f = JSON.parse(unsigned.value) as { kind: Flash['kind']; key: MessageKey; vars: never }
    return { kind: f.kind, text: t(lang, f.key, f.vars) }
  } catch {
    return undefined
  }
}

// ---- the signed-in context

export interface PageContext {
  deps: Deps
  request: FastifyRequest
  reply: FastifyReply
  lang: Lang
  session: WebSession
  member: DashboardMember
  /** May this member do that? For showing or hiding controls; handlers use `allow`. */
  can: (permission: Permission) => boolean
}

/**
 * The signed-in member's context if their role has `permission`; the 403 page otherwise.
 * Every dashboard handler starts with this call: the server decides, whatever the page shows.
 */
export function allow(
  deps: Deps,
  request: FastifyRequest,
  reply: FastifyReply,
  permission: Permission,
): PageContext {
  const session = request.dashSession
  // The guard has already sent anyone without an active session to sign in.
  if (session?.stage !== 'active') throw dashboardError('forbidden')
  if (!can(session.member.role, permission)) throw dashboardError('forbidden')
  return signedInContext(deps, request, reply, session)
}

/**
 * The context of a route that declares its page rule (page-rules.ts): the preHandler has
 * checked its permission and KYC gate, so the handler does not restate them.
 */
export function permitted(deps: Deps, request: FastifyRequest, reply: FastifyReply): PageContext {
  const session = request.dashSession
  const rule = request.routeOptions.config.page
  if (session?.stage !== 'active' || !rule || rule.permission === 'public') {
    throw dashboardError('forbidden')
  }
  return signedInContext(deps, request, reply, session)
}

/** The context of a signed-in request, permissions not checked (error pages). */
export function signedInContext(
  deps: Deps,
  request: FastifyRequest,
  reply: FastifyReply,
  session: WebSession,
): PageContext {
  return {
    deps,
    request,
    reply,
    lang: langOf(request),
    session,
    member: session.member,
    can: (p) => can(session.member.role, p),
  }
}

export function roleLabel(lang: Lang, role: DashboardMember['role']): string {
  return t(lang, `dash_role_${role}`)
}

export interface PageInput {
  heading: string
  /** Which navigation entry is current. */
  section: string
  content: SafeHtml
  headingAside?: SafeHtml
  status?: number
  flash?: Flash
  chart?: boolean
  data?: unknown
}

/** A signed-in page in the shell, with the navigation and the account box. */
export async function renderPage(ctx: PageContext, page: PageInput): Promise<FastifyReply> {
  const { deps, request, reply, lang } = ctx
  const merchant = await getMerchant(deps, ctx.member.merchantId)
  const flash = page.flash ?? takeFlash(deps, request, reply, lang)
  const links: NavLink[] = request.dashNav.map((item) => ({
    href: item.href,
    label: t(lang, item.label),
    current: item.id === page.section,
  }))
  const body = merchantShell({
    lang,
    heading: page.heading,
    ...(page.headingAside ? { headingAside: page.headingAside } : {}),
    homeHref: BASE,
    langHrefs: langHrefs(request),
    assets: ASSETS,
    sandbox: deps.config.env === 'demo',
    nav: { label: t(lang, 'dash_nav_label'), links },
    search: {
      action: `${BASE}/search`,
      label: t(lang, 'dash_search_label'),
      placeholder: t(lang, 'dash_search_placeholder'),
    },
    account: {
      email: ctx.member.email,
      roleLabel: roleLabel(lang, ctx.member.role),
      merchantName: merchant.name,
      signOutAction: `${BASE}/logout`,
    },
    csrfToken: csrfToken(request, reply),
    ...(flash ? { flash } : {}),
    content: page.content,
    ...(page.chart ? { chart: true } : {}),
    ...(page.data === undefined ? {} : { data: jsonForScript(page.data) }),
  })
  return sendHtml(reply, page.status ?? 200, body)
}

/** A page before sign-in (login, second factor, invitation): no navigation. */
export function renderPublicPage(
  deps: Deps,
  request: FastifyRequest,
  reply: FastifyReply,
  page: { heading: string; content: SafeHtml; status?: number; flash?: Flash },
) {
  const lang = langOf(request)
  const flash = page.flash ?? takeFlash(deps, request, reply, lang)
  return sendHtml(
    reply,
    page.status ?? 200,
    merchantShell({
      lang,
      heading: page.heading,
      homeHref: `${BASE}/login`,
      langHrefs: langHrefs(request),
      assets: ASSETS,
      sandbox: deps.config.env === 'demo',
      content: page.content,
      ...(flash ? { flash } : {}),
    }),
  )
}

export function redirect(reply: FastifyReply, location: string): FastifyReply {
  return reply.code(303).header('location', location).send()
}

// ---- a refused action, in the reader's language (refusals.ts)

export { refusalText, fieldErrorText } from './refusals.ts'

/** Runs an action; an AppError a client could cause becomes the message to show instead. */
export async function attempt<T>(
  action: () => Promise<T>,
): Promise<{ ok: true; value: T } | { ok: false; error: AppError }> {
  try {
    return { ok: true, value: await action() }
  } catch (error) {
    if (error instanceof AppError && error.status < 500) return { ok: false, error }
    throw error
  }
}

/**
 * Runs a page's action with its audit entry committed inside the action's own transaction
 * (decision 0036): the action is never done without its entry. The entry names what is known
 * before the action (a created thing is recorded under its parent).
 */
export function auditedAction<T>(
  ctx: PageContext,
  action: string,
  target: string | null,
  details: AuditInput['details'],
  run: () => Promise<T>,
): Promise<T> {
  return audited(
    ctx.deps,
    {
      merchantId: ctx.member.merchantId,
      actorId: ctx.member.userId,
      action,
      target,
      ...(details ? { details } : {}),
    },
    run,
  )
}

/** A new password and its confirmation, under the invitation's rules (accept, reset). */
export function newPasswordFields(lang: Lang): SafeHtml {
  return markup`${field({
    name: 'password',
    label: t(lang, 'dash_invite_password'),
    type: 'password',
    autocomplete: 'new-password',
    required: true,
    hint: t(lang, 'dash_invite_password_hint'),
    maxlength: 200,
  })}
  ${field({
    name: 'passwordConfirm',
    label: t(lang, 'dash_invite_password_confirm'),
    type: 'password',
    autocomplete: 'new-password',
    required: true,
    maxlength: 200,
  })}`
}
