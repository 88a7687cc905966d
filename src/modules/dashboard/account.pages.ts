import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import type { Deps } from '../../database.ts'
import type { AppError } from '../../platform/errors.ts'
import { csrfInput, field, section, type Flash } from '../../platform/web/components.ts'
import { markup } from '../../platform/web/html.ts'
import { t } from '../../platform/web/i18n.ts'
import {
  ChangeEmailBody,
  ChangePasswordBody,
  ConfirmEmailBody,
  ForgotPasswordBody,
  ResetPasswordBody,
} from './account.schemas.ts'
import {
  changePassword,
  confirmEmailChange,
  emailChangeTarget,
  passwordResetOpen,
  requestEmailChange,
  requestPasswordReset,
  resetPassword,
} from './account.service.ts'
import { langOf } from '../../platform/web/html-context.ts'
import {
  BASE,
  allow,
  attempt,
  csrfToken,
  newPasswordFields,
  redirect,
  refusalText,
  renderPage,
  renderPublicPage,
  setFlash,
  setSessionCookie,
  type PageContext,
} from './dashboard.web.ts'
import { formFields } from './forms.ts'
import { pageInput } from './page-rules.ts'

// A member's own account: /dashboard/settings/account (password and email change, signed in),
// and the pages before sign-in that its emailed links lead to: "forgot password", the reset
// link, and the new address's confirmation link (account.service.ts has the rules).

// A link's token is its only bearer: keep these URLs out of the request log.
const LINK_LOG = 'warn' as const

async function accountPage(
  ctx: PageContext,
  extra: { flash?: Flash; status?: number } = {},
): Promise<FastifyReply> {
  const { lang } = ctx
  const token = csrfToken(ctx.request, ctx.reply)
  const passwordField = (name: string, id: string, label: string, autocomplete: string) =>
    field({ name, id, label, type: 'password', autocomplete, required: true, maxlength: 200 })
  return renderPage(ctx, {
    heading: t(lang, 'dash_account_title'),
    section: 'settings',
    ...(extra.flash ? { flash: extra.flash } : {}),
    ...(extra.status ? { status: extra.status } : {}),
    content: markup`
      <p>${t(lang, 'dash_account_signin_email')}: <strong id="account-email">${ctx.member.email}</strong></p>
      ${section({
        title: t(lang, 'dash_account_password_title'),
        id: 'password-heading',
        body: markup`<form method="post" action="${BASE}/settings/account/password" class="form-stack">
          <p class="muted">${t(lang, 'dash_account_password_body')}</p>
          ${csrfInput(token)}
          ${passwordField('currentPassword', 'pw-current', t(lang, 'dash_account_current_password'), 'current-password')}
          ${field({
            name: 'password',
            id: 'pw-new',
            label: t(lang, 'dash_invite_password'),
            type: 'password',
            autocomplete: 'new-password',
            required: true,
            maxlength: 200,
            hint: t(lang, 'dash_invite_password_hint'),
          })}
          ${passwordField('passwordConfirm', 'pw-confirm', t(lang, 'dash_invite_password_confirm'), 'new-password')}
          <button type="submit" class="button button-primary">${t(lang, 'dash_account_password_submit')}</button>
        </form>`,
      })}
      ${section({
        title: t(lang, 'dash_account_email_title'),
        id: 'email-heading',
        body: markup`<form method="post" action="${BASE}/settings/account/email" class="form-stack">
          <p class="muted">${t(lang, 'dash_account_email_body')}</p>
          ${csrfInput(token)}
          ${field({
            name: 'email',
            id: 'email-new',
            label: t(lang, 'dash_account_new_email'),
            type: 'email',
            autocomplete: 'email',
            required: true,
            maxlength: 254,
          })}
          ${passwordField('currentPassword', 'email-current', t(lang, 'dash_account_current_password'), 'current-password')}
          <button type="submit" class="button button-secondary">${t(lang, 'dash_account_email_submit')}</button>
        </form>`,
      })}`,
  })
}

function forgotPage(
  deps: Deps,
  request: FastifyRequest,
  reply: FastifyReply,
  extra: { flash?: Flash; status?: number } = {},
): FastifyReply {
  const lang = langOf(request)
  return renderPublicPage(deps, request, reply, {
    heading: t(lang, 'dash_forgot_title'),
    ...(extra.flash ? { flash: extra.flash } : {}),
    ...(extra.status ? { status: extra.status } : {}),
    content: markup`<form method="post" action="${BASE}/password/forgot" class="panel form-stack" novalidate>
      <p>${t(lang, 'dash_forgot_intro')}</p>
      ${csrfInput(csrfToken(request, reply))}
      ${field({
        name: 'email',
        label: t(lang, 'dash_login_email'),
        type: 'email',
        autocomplete: 'username',
        required: true,
        maxlength: 254,
      })}
      <button type="submit" class="button button-primary button-full">${t(lang, 'dash_forgot_submit')}</button>
      <p><a href="${BASE}/login">${t(lang, 'dash_login_title')}</a></p>
    </form>`,
  })
}

function linkInvalidPage(deps: Deps, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const lang = langOf(request)
  return renderPublicPage(deps, request, reply, {
    heading: t(lang, 'dash_link_invalid_title'),
    status: 404,
    content: markup`<div class="panel" id="link-invalid">
      <p>${t(lang, 'dash_link_invalid_body')}</p>
      <p><a href="${BASE}/password/forgot">${t(lang, 'dash_forgot_link')}</a> ·
        <a href="${BASE}/login">${t(lang, 'dash_login_title')}</a></p>
    </div>`,
  })
}

function resetPage(
  deps: Deps,
  request: FastifyRequest,
  reply: FastifyReply,
  token: string,
  error?: AppError,
): FastifyReply {
  const lang = langOf(request)
  return renderPublicPage(deps, request, reply, {
    heading: t(lang, 'dash_reset_title'),
    ...(error
      ? { status: error.status, flash: { kind: 'error' as const, text: refusalText(lang, error) } }
      : {}),
    content: markup`<form method="post" action="${BASE}/password/reset/${token}" class="panel form-stack">
      <p>${t(lang, 'dash_reset_intro')}</p>
      ${csrfInput(csrfToken(request, reply))}
      ${newPasswordFields(lang)}
      <button type="submit" class="button button-primary button-full">${t(lang, 'dash_reset_submit')}</button>
    </form>`,
  })
}

function tokenOf(request: FastifyRequest): string {
  return (request.params as { token: string }).token.slice(0, 200)
}

export function accountPages(deps: Deps): FastifyPluginAsync {
  return async (app) => {
    // ---- signed in: the member's own password and email

    app.get('/settings/account', async (request, reply) =>
      accountPage(allow(deps, request, reply, 'read')),
    )

    const refused = (ctx: PageContext, error: AppError) =>
      accountPage(ctx, {
        status: error.status,
        flash: { kind: 'error', text: refusalText(ctx.lang, error) },
      })

    app.post(
      '/settings/account/password',
      { config: { page: { permission: 'read', schema: ChangePasswordBody } } },
      async (request, reply) => {
        const ctx = allow(deps, request, reply, 'read')
        const form = formFields(request)
        const input = {
          currentPassword: form.text('currentPassword', 400),
          password: form.text('password', 400),
          passwordConfirm: form.text('passwordConfirm', 400),
        }
        const result = await attempt(async () => {
          const invalid = pageInput(request, input)
          if (invalid) throw invalid
          return changePassword(deps, ctx.session, input)
        })
        if (!result.ok) return refused(ctx, result.error)
        // Audited with the change; this session goes on under a new id, every other one ended.
        setSessionCookie(deps, reply, result.value.token)
        setFlash(deps, reply, 'success', 'dash_done_password')
        return redirect(reply, `${BASE}/settings/account`)
      },
    )

    app.post(
      '/settings/account/email',
      { config: { page: { permission: 'read', schema: ChangeEmailBody } } },
      async (request, reply) => {
        const ctx = allow(deps, request, reply, 'read')
        const form = formFields(request)
        const input = {
          email: form.text('email', 400).trim(),
          currentPassword: form.text('currentPassword', 400),
        }
        const result = await attempt(async () => {
          const invalid = pageInput(request, input)
          if (invalid) throw invalid
          return requestEmailChange(deps, ctx.session, input)
        })
        if (!result.ok) return refused(ctx, result.error)
        setFlash(deps, reply, 'success', 'dash_done_email_request', { email: result.value.email })
        return redirect(reply, `${BASE}/settings/account`)
      },
    )

    // ---- before sign-in: forgot password, the reset link, the new address's confirmation

    const open = { dashboardAccess: 'public' as const }

    app.get('/password/forgot', { config: open }, async (request, reply) =>
      forgotPage(deps, request, reply),
    )

    app.post(
      '/password/forgot',
      { config: { ...open, page: { permission: 'public', schema: ForgotPasswordBody } } },
      async (request, reply) => {
        const lang = langOf(request)
        const email = formFields(request).text('email', 400).trim()
        const invalid = pageInput(request, { email })
        if (invalid) {
          return forgotPage(deps, request, reply, {
            status: invalid.status,
            flash: { kind: 'error', text: refusalText(lang, invalid) },
          })
        }
        await requestPasswordReset(deps, email)
        // The same answer whether or not the address has an account.
        return forgotPage(deps, request, reply, {
          flash: { kind: 'info', text: t(lang, 'dash_forgot_sent') },
        })
      },
    )

    app.get(
      '/password/reset/:token',
      { config: open, logLevel: LINK_LOG },
      async (request, reply) => {
        const token = tokenOf(request)
        if (!(await passwordResetOpen(deps, token))) return linkInvalidPage(deps, request, reply)
        return resetPage(deps, request, reply, token)
      },
    )

    app.post(
      '/password/reset/:token',
      {
        config: { ...open, page: { permission: 'public', schema: ResetPasswordBody } },
        logLevel: LINK_LOG,
      },
      async (request, reply) => {
        const token = tokenOf(request)
        const form = formFields(request)
        const input = {
          password: form.text('password', 400),
          passwordConfirm: form.text('passwordConfirm', 400),
        }
        const result = await attempt(async () => {
          const invalid = pageInput(request, input)
          if (invalid) throw invalid
          return resetPassword(deps, token, input)
        })
        if (!result.ok) return resetPage(deps, request, reply, token, result.error)
        if (!result.value) return linkInvalidPage(deps, request, reply)
        setFlash(deps, reply, 'success', 'dash_reset_done')
        return redirect(reply, `${BASE}/login`)
      },
    )

    // A GET only shows the address: mail scanners open links, and a change needs a click.
    app.get(
      '/account/email/:token',
      { config: open, logLevel: LINK_LOG },
      async (request, reply) => {
        const lang = langOf(request)
        const token = tokenOf(request)
        const email = await emailChangeTarget(deps, token)
        if (!email) return linkInvalidPage(deps, request, reply)
        return renderPublicPage(deps, request, reply, {
          heading: t(lang, 'dash_email_confirm_title'),
          content: markup`<form method="post" action="${BASE}/account/email/${token}" class="panel form-stack">
            <p>${t(lang, 'dash_email_confirm_body', { email })}</p>
            ${csrfInput(csrfToken(request, reply))}
            <button type="submit" class="button button-primary button-full">${t(lang, 'dash_email_confirm_submit')}</button>
          </form>`,
        })
      },
    )

    app.post(
      '/account/email/:token',
      {
        config: { ...open, page: { permission: 'public', schema: ConfirmEmailBody } },
        logLevel: LINK_LOG,
      },
      async (request, reply) => {
        const lang = langOf(request)
        const result = await attempt(() => confirmEmailChange(deps, tokenOf(request)))
        if (!result.ok) {
          return renderPublicPage(deps, request, reply, {
            heading: t(lang, 'dash_email_confirm_title'),
            status: result.error.status,
            flash: { kind: 'error', text: refusalText(lang, result.error) },
            content: markup``,
          })
        }
        if (!result.value) return linkInvalidPage(deps, request, reply)
        setFlash(deps, reply, 'success', 'dash_email_confirm_done', { email: result.value.to })
        return redirect(reply, `${BASE}/login`)
      },
    )
  }
}
