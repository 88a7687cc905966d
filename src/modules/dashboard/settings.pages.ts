import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import type { Deps } from '../../database.ts'
import type { AppError } from '../../platform/errors.ts'
import {
  badge,
  csrfInput,
  dataTable,
  field,
  pager,
  postButton,
  section,
  selectField,
  type Flash,
} from '../../platform/web/components.ts'
import { formatDate } from '../../platform/web/format.ts'
import { markup, type SafeHtml } from '../../platform/web/html.ts'
import { isMessageKey, t, type Lang } from '../../platform/web/i18n.ts'
import { AUDIT_PAGE_MAX, listAuditEntries } from '../audit/index.ts'
import {
  DASHBOARD_ROLES,
  isDashboardRole,
  listDashboardMembers,
  type DashboardRole,
} from '../merchants/index.ts'
import { dashboardError } from './dashboard.errors.ts'
import {
  BASE,
  allow,
  attempt,
  permitted,
  csrfToken,
  redirect,
  refusalText,
  renderPage,
  renderPublicPage,
  roleLabel,
  setFlash,
  setSessionCookie,
  signedInContext,
  type PageContext,
  auditedAction,
} from './dashboard.web.ts'
import {
  CodeBody,
  PageActionBody,
  TeamInviteBody,
  TeamRoleBody,
  TwoFactorRequiredBody,
} from './dashboard.schemas.ts'
import { pageInput, pageRoute } from './page-rules.ts'
import { formFields, queryFields } from './forms.ts'
import { twoFactorApplies } from './permissions.ts'
import {
  beginEnrolment,
  confirmEnrolment,
  disableTwoFactor,
  regenerateRecoveryCodes,
  setTwoFactorRequired,
  takeFreshRecoveryCodes,
  twoFactorRequired,
  unusedRecoveryCodes,
  type WebSession,
} from './sessions.service.ts'
import {
  changeMemberRole,
  inviteMember,
  listOpenInvitations,
  removeMember,
  revokeInvitation,
} from './team.service.ts'

// /dashboard/settings: the team (members, roles, invitations), two-factor sign-in (the
// member's own TOTP, and the merchant's rule that owners and admins must use it), and the
// audit log of every dashboard action.

/**
 * An audit entry's action in words ("Rapor oluşturuldu"), not its code (`reports.create`);
 * a code without words yet is shown as it is, so no entry is hidden.
 */
function auditActionText(lang: Lang, action: string): SafeHtml | string {
  const key = `dash_audit_do_${action.replaceAll('.', '__')}`
  return isMessageKey(key) ? t(lang, key) : markup`<span class="mono">${action}</span>`
}

function roleOptions(lang: Lang, ctx: PageContext) {
  // Only owners may give the owner role: the others do not see it offered.
  return DASHBOARD_ROLES.filter((r) => r !== 'owner' || ctx.can('team.owners')).map((r) => ({
    value: r,
    label: roleLabel(lang, r),
  }))
}

async function teamPage(
  deps: Deps,
  ctx: PageContext,
  extra: { flash?: Flash; status?: number } = {},
): Promise<FastifyReply> {
  const { lang } = ctx
  const merchantId = ctx.member.merchantId
  const [members, invitations] = await Promise.all([
    listDashboardMembers(deps, merchantId),
    listOpenInvitations(deps, merchantId),
  ])
  const token = csrfToken(ctx.request, ctx.reply)
  const manage = ctx.can('team.manage')
  const manageable = (role: DashboardRole) => manage && (role !== 'owner' || ctx.can('team.owners'))
  const memberRows = members.map((m) => [
    m.email,
    roleLabel(lang, m.role),
    m.totpEnabled
      ? badge(t(lang, 'dash_2fa_on'), 'success')
      : badge(t(lang, 'dash_2fa_off'), 'neutral'),
    formatDate(m.createdAt, lang, 'date'),
    manageable(m.role) && m.userId !== ctx.member.userId
      ? markup`<div class="actions">
          <form method="post" action="${BASE}/settings/team/${m.userId}/role" class="actions">
            ${csrfInput(token)}
            ${selectField({
              name: 'role',
              id: `role-${m.userId}`,
              label: t(lang, 'dash_team_role_of', { email: m.email }),
              value: m.role,
              options: roleOptions(lang, ctx),
            })}
            <button type="submit" class="button button-secondary">${t(lang, 'dash_save')}</button>
          </form>
          ${postButton({
            action: `${BASE}/settings/team/${m.userId}/remove`,
            csrfToken: token,
            label: t(lang, 'dash_team_remove'),
            variant: 'danger',
            ariaLabel: `${t(lang, 'dash_team_remove')} ${m.email}`,
          })}
        </div>`
      : '',
  ])
  const inviteForm = manage
    ? markup`<form method="post" action="${BASE}/settings/team/invite" class="form-stack">
        ${csrfInput(token)}
        <div class="form-grid">
          ${field({
            name: 'email',
            id: 'invite-email',
            label: t(lang, 'dash_login_email'),
            type: 'email',
            autocomplete: 'off',
            required: true,
            maxlength: 320,
          })}
          ${selectField({
            name: 'role',
            id: 'invite-role',
            label: t(lang, 'dash_team_role'),
            value: 'viewer',
            options: roleOptions(lang, ctx),
          })}
        </div>
        <button type="submit" class="button button-primary">${t(lang, 'dash_team_invite')}</button>
        ${deps.config.env === 'demo' ? markup`<p class="hint">${t(lang, 'dash_team_demo_mailbox')} <a href="/dev/mailbox">/dev/mailbox</a></p>` : ''}
      </form>`
    : ''
  return renderPage(ctx, {
    heading: t(lang, 'dash_team_title'),
    section: 'settings',
    ...(extra.flash ? { flash: extra.flash } : {}),
    ...(extra.status ? { status: extra.status } : {}),
    headingAside: settingsLinks(lang),
    content: markup`
      ${section({
        title: t(lang, 'dash_team_members'),
        id: 'members-heading',
        body: dataTable({
          caption: t(lang, 'dash_team_members'),
          id: 'members-table',
          columns: [
            { label: t(lang, 'dash_login_email') },
            { label: t(lang, 'dash_team_role') },
            { label: t(lang, 'dash_2fa_title') },
            { label: t(lang, 'dash_team_joined') },
            { label: t(lang, 'dash_col_actions') },
          ],
          rows: memberRows,
          empty: t(lang, 'dash_none'),
        }),
      })}
      ${
        manage
          ? section({
              title: t(lang, 'dash_team_invite_title'),
              id: 'invite-heading',
              body: markup`${inviteForm}
                <h3>${t(lang, 'dash_team_open_invitations')}</h3>
                ${dataTable({
                  caption: t(lang, 'dash_team_open_invitations'),
                  id: 'invitations-table',
                  columns: [
                    { label: t(lang, 'dash_login_email') },
                    { label: t(lang, 'dash_team_role') },
                    { label: t(lang, 'dash_team_expires') },
                    { label: t(lang, 'dash_col_actions') },
                  ],
                  rows: invitations.map((i) => [
                    i.email,
                    roleLabel(lang, i.role),
                    formatDate(i.expiresAt, lang, 'datetime'),
                    postButton({
                      action: `${BASE}/settings/team/invitations/${i.id}/revoke`,
                      csrfToken: token,
                      label: t(lang, 'dash_team_revoke'),
                      ariaLabel: `${t(lang, 'dash_team_revoke')} ${i.email}`,
                    }),
                  ]),
                  empty: t(lang, 'dash_none'),
                })}`,
            })
          : ''
      }`,
  })
}

function settingsLinks(lang: Lang): SafeHtml {
  return markup`<div class="actions">
    <a class="button button-secondary" href="${BASE}/settings">${t(lang, 'dash_team_title')}</a>
    <a class="button button-secondary" href="${BASE}/settings/account">${t(lang, 'dash_account_title')}</a>
    <a class="button button-secondary" href="${BASE}/settings/two-factor">${t(lang, 'dash_2fa_title')}</a>
    <a class="button button-secondary" href="${BASE}/settings/audit-log">${t(lang, 'dash_audit_title')}</a>
  </div>`
}

// ---- two-factor

/** The two-factor page is also where an owner or admin is held until they enrol. */
function enrolmentContext(deps: Deps, request: FastifyRequest, reply: FastifyReply) {
  const session = request.dashSession
  if (session?.stage !== 'active' && session?.stage !== 'enrol') {
    throw dashboardError('forbidden')
  }
  return { ...signedInContext(deps, request, reply, session), session }
}

async function qrImage(uri: string): Promise<string> {
  // Loaded at the first QR code drawn (docs/performance.md, "Round 3, part 3: memory").
  const { default: QRCode } = await import('qrcode')
  const svg = await QRCode.toString(uri, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 })
  return `data:image/svg+xml;base64,${Buffer.from(svg).toString('base64')}`
}

/**
 * The member's recovery codes: a set just made is shown here once (then the session forgets
 * it); otherwise how many are left and a form to make a new set (the old one void).
 */
async function recoveryCodesBlock(
  deps: Deps,
  ctx: PageContext & { session: WebSession },
  token: string,
): Promise<SafeHtml> {
  const { lang } = ctx
  const fresh = await takeFreshRecoveryCodes(deps, ctx.session)
  const left = await unusedRecoveryCodes(deps, ctx.member.userId)
  const shown = fresh
    ? markup`<div class="panel" role="status">
        <p><strong>${t(lang, 'dash_2fa_recovery_fresh')}</strong></p>
        <ol id="recovery-codes" class="recovery-codes">${fresh.map(
          (code) => markup`<li><code>${code}</code></li>`,
        )}</ol>
      </div>`
    : markup`<p id="recovery-left">${t(lang, 'dash_2fa_recovery_left', { n: left })}</p>`
  return markup`<h3>${t(lang, 'dash_2fa_recovery_title')}</h3>
    ${shown}
    <form method="post" action="${BASE}/settings/two-factor/recovery-codes" class="form-stack">
      <p class="muted">${t(lang, 'dash_2fa_recovery_regenerate_body')}</p>
      ${csrfInput(token)}
      ${field({
        name: 'code',
        id: 'recovery-code',
        label: t(lang, 'dash_2fa_code'),
        autocomplete: 'one-time-code',
        inputmode: 'numeric',
        maxlength: 7,
        required: true,
      })}
      <button type="submit" class="button button-secondary">${t(lang, 'dash_2fa_recovery_regenerate')}</button>
    </form>`
}

async function twoFactorPage(
  deps: Deps,
  ctx: PageContext & { session: WebSession },
  extra: { flash?: Flash; status?: number } = {},
): Promise<FastifyReply> {
  const { lang, session } = ctx
  const token = csrfToken(ctx.request, ctx.reply)
  const required = await twoFactorRequired(deps, ctx.member.merchantId)
  let own: SafeHtml
  if (ctx.member.totpEnabled) {
    const locked = required && twoFactorApplies(ctx.member.role)
    own = markup`<p>${badge(t(lang, 'dash_2fa_on'), 'success')} ${t(lang, 'dash_2fa_on_body')}</p>
      ${await recoveryCodesBlock(deps, ctx, token)}
      ${
        locked
          ? markup`<p class="muted">${t(lang, 'dash_2fa_cannot_disable')}</p>`
          : markup`<form method="post" action="${BASE}/settings/two-factor/disable" class="form-stack">
              ${csrfInput(token)}
              ${field({
                name: 'code',
                id: 'disable-code',
                label: t(lang, 'dash_2fa_code'),
                autocomplete: 'one-time-code',
                inputmode: 'numeric',
                maxlength: 7,
                required: true,
              })}
              <button type="submit" class="button button-danger">${t(lang, 'dash_2fa_disable')}</button>
            </form>`
      }`
  } else {
    const enrolment = await beginEnrolment(deps, session)
    own = markup`<p>${t(lang, 'dash_2fa_enrol_intro')}</p>
      <p class="qr"><img src="${await qrImage(enrolment.uri)}" alt="${t(lang, 'dash_2fa_qr_alt')}" width="200" height="200" /></p>
      <p>${t(lang, 'dash_2fa_manual')} <code id="totp-secret">${enrolment.secretBase32}</code></p>
      <form method="post" action="${BASE}/settings/two-factor/enrol" class="form-stack">
        ${csrfInput(token)}
        ${field({
          name: 'code',
          id: 'enrol-code',
          label: t(lang, 'dash_2fa_code'),
          autocomplete: 'one-time-code',
          inputmode: 'numeric',
          maxlength: 7,
          required: true,
        })}
        <button type="submit" class="button button-primary">${t(lang, 'dash_2fa_enable')}</button>
      </form>`
  }
  const rule =
    session.stage === 'active' && ctx.can('team.manage')
      ? section({
          title: t(lang, 'dash_2fa_rule_title'),
          id: 'rule-heading',
          body: markup`<p>${t(lang, required ? 'dash_2fa_rule_on' : 'dash_2fa_rule_off')}</p>
            ${postButton({
              action: `${BASE}/settings/two-factor/required`,
              csrfToken: token,
              label: t(lang, required ? 'dash_2fa_rule_disable' : 'dash_2fa_rule_enable'),
              fields: { required: required ? 'no' : 'yes' },
            })}`,
        })
      : ''
  const content = markup`${section({ title: t(lang, 'dash_2fa_own'), id: 'own-heading', body: own })}${rule}`
  if (session.stage === 'enrol') {
    // Held here until enrolled: no navigation, only this page and signing out.
    return renderPublicPage(deps, ctx.request, ctx.reply, {
      heading: t(lang, 'dash_2fa_title'),
      ...(extra.status ? { status: extra.status } : {}),
      flash: extra.flash ?? { kind: 'info', text: t(lang, 'dash_2fa_required_notice') },
      content: markup`${content}
        <form method="post" action="${BASE}/logout">
          ${csrfInput(token)}
          <button type="submit" class="button button-secondary">${t(lang, 'web_sign_out')}</button>
        </form>`,
    })
  }
  return renderPage(ctx, {
    heading: t(lang, 'dash_2fa_title'),
    section: 'settings',
    headingAside: settingsLinks(lang),
    ...(extra.flash ? { flash: extra.flash } : {}),
    ...(extra.status ? { status: extra.status } : {}),
    content,
  })
}

// Each route's rule, as the API's route for the same use case declares it (page-rules.ts).
// The two-factor steps are the member's own account: any role (signedIn); enrolment runs in
// the half-signed-in enrol stage, which dashboardAccess guards (public here).
const ROUTES = {
  invite: pageRoute({ permission: 'team.manage', schema: TeamInviteBody }),
  revoke: pageRoute({ permission: 'team.manage', schema: PageActionBody }),
  role: pageRoute({ permission: 'team.manage', schema: TeamRoleBody }),
  remove: pageRoute({ permission: 'team.manage', schema: PageActionBody }),
  enrol: pageRoute({ permission: 'public', schema: CodeBody }),
  disable2fa: pageRoute({ permission: 'signedIn', schema: CodeBody }),
  recovery: pageRoute({ permission: 'signedIn', schema: CodeBody }),
  require2fa: pageRoute({ permission: 'team.manage', schema: TwoFactorRequiredBody }),
}

export function settingsPages(deps: Deps): FastifyPluginAsync {
  return async (app) => {
    app.get('/settings', async (request, reply) =>
      teamPage(deps, allow(deps, request, reply, 'read')),
    )

    const refused = (ctx: PageContext, error: AppError) => {
      if (error.status === 404) throw error
      return teamPage(deps, ctx, {
        status: error.status,
        flash: { kind: 'error', text: refusalText(ctx.lang, error) },
      })
    }

    app.post('/settings/team/invite', ROUTES.invite, async (request, reply) => {
      const ctx = permitted(deps, request, reply)
      const form = formFields(request)
      const role = form.text('role', 20)
      const email = form.text('email', 320)
      // The declared schema: one address, a role of the table (page-rules.ts).
      const invalid = pageInput(request, { email, role })
      if (invalid) return refused(ctx, invalid)
      if (!isDashboardRole(role)) return refused(ctx, dashboardError('forbidden'))
      const result = await attempt(() =>
        auditedAction(ctx, 'team.invite', email.trim().toLowerCase(), { role }, () =>
          inviteMember(deps, ctx.member, { email, role }),
        ),
      )
      if (!result.ok) return refused(ctx, result.error)
      setFlash(deps, reply, 'success', 'dash_done_invite', { email: result.value.email })
      return redirect(reply, `${BASE}/settings`)
    })

    app.post('/settings/team/invitations/:id/revoke', ROUTES.revoke, async (request, reply) => {
      const ctx = permitted(deps, request, reply)
      const { id } = request.params as { id: string }
      const result = await attempt(() =>
        auditedAction(ctx, 'team.revoke_invitation', id, undefined, () =>
          revokeInvitation(deps, ctx.member, id.slice(0, 64)),
        ),
      )
      if (!result.ok) return refused(ctx, result.error)
      setFlash(deps, reply, 'success', 'dash_done_revoke_invitation')
      return redirect(reply, `${BASE}/settings`)
    })

    app.post('/settings/team/:userId/role', ROUTES.role, async (request, reply) => {
      const ctx = permitted(deps, request, reply)
      const { userId } = request.params as { userId: string }
      const role = formFields(request).text('role', 20)
      const invalid = pageInput(request, { role })
      if (invalid) return refused(ctx, invalid)
      if (!isDashboardRole(role)) return refused(ctx, dashboardError('forbidden'))
      const result = await attempt(() =>
        auditedAction(ctx, 'team.change_role', userId.slice(0, 64), { role }, () =>
          changeMemberRole(deps, ctx.member, userId.slice(0, 64), role),
        ),
      )
      if (!result.ok) return refused(ctx, result.error)
      setFlash(deps, reply, 'success', 'dash_done_role', { email: result.value.email })
      return redirect(reply, `${BASE}/settings`)
    })

    app.post('/settings/team/:userId/remove', ROUTES.remove, async (request, reply) => {
      const ctx = permitted(deps, request, reply)
      const { userId } = request.params as { userId: string }
      const result = await attempt(() =>
        auditedAction(ctx, 'team.remove', userId.slice(0, 64), undefined, () =>
          removeMember(deps, ctx.member, userId.slice(0, 64)),
        ),
      )
      if (!result.ok) return refused(ctx, result.error)
      setFlash(deps, reply, 'success', 'dash_done_remove', { email: result.value.email })
      return redirect(reply, `${BASE}/settings`)
    })

    app.get(
      '/settings/two-factor',
      { config: { dashboardAccess: 'enrol' } },
      async (request, reply) => twoFactorPage(deps, enrolmentContext(deps, request, reply)),
    )

    app.post(
      '/settings/two-factor/enrol',
      { config: { dashboardAccess: 'enrol', page: ROUTES.enrol.config.page } },
      async (request, reply) => {
        const ctx = enrolmentContext(deps, request, reply)
        const code = formFields(request).text('code', 20)
        const result = await attempt(() => confirmEnrolment(deps, ctx.session, code))
        if (!result.ok) {
          return twoFactorPage(deps, ctx, {
            status: 400,
            flash: { kind: 'error', text: t(ctx.lang, 'dash_2fa_wrong') },
          })
        }
        // Audited with the change (sessions.service.ts). The page the redirect leads to shows
        // the new recovery codes, once.
        if (result.value.token) setSessionCookie(deps, reply, result.value.token)
        setFlash(deps, reply, 'success', 'dash_done_2fa_on')
        return redirect(reply, `${BASE}/settings/two-factor`)
      },
    )

    app.post('/settings/two-factor/disable', ROUTES.disable2fa, async (request, reply) => {
      const ctx = { ...permitted(deps, request, reply) }
      const code = formFields(request).text('code', 20)
      const result = await attempt(() => disableTwoFactor(deps, ctx.session, code))
      if (!result.ok) {
        return twoFactorPage(deps, ctx, {
          status: result.error.status,
          flash: {
            kind: 'error',
            text:
              result.error.status === 400
                ? t(ctx.lang, 'dash_2fa_wrong')
                : refusalText(ctx.lang, result.error),
          },
        })
      }
      setFlash(deps, reply, 'success', 'dash_done_2fa_off')
      return redirect(reply, `${BASE}/settings/two-factor`)
    })

    app.post('/settings/two-factor/recovery-codes', ROUTES.recovery, async (request, reply) => {
      const ctx = { ...permitted(deps, request, reply) }
      const code = formFields(request).text('code', 20)
      const result = await attempt(() => regenerateRecoveryCodes(deps, ctx.session, code))
      if (!result.ok) {
        return twoFactorPage(deps, ctx, {
          status: result.error.status,
          flash: { kind: 'error', text: t(ctx.lang, 'dash_2fa_wrong') },
        })
      }
      setFlash(deps, reply, 'success', 'dash_done_recovery_codes')
      return redirect(reply, `${BASE}/settings/two-factor`)
    })

    app.post('/settings/two-factor/required', ROUTES.require2fa, async (request, reply) => {
      const ctx = permitted(deps, request, reply)
      const required = formFields(request).text('required', 3) === 'yes'
      const result = await attempt(() =>
        auditedAction(
          ctx,
          required ? 'two_factor.require' : 'two_factor.unrequire',
          null,
          undefined,
          () => setTwoFactorRequired(deps, ctx.session, required),
        ),
      )
      if (!result.ok) {
        return twoFactorPage(deps, ctx, {
          status: result.error.status,
          flash: { kind: 'error', text: refusalText(ctx.lang, result.error) },
        })
      }
      setFlash(deps, reply, 'success', required ? 'dash_done_rule_on' : 'dash_done_rule_off')
      return redirect(reply, `${BASE}/settings/two-factor`)
    })

    app.get('/settings/audit-log', async (request, reply) => {
      const ctx = allow(deps, request, reply, 'read')
      const { lang } = ctx
      const cursor = queryFields(request).optional('after', 2048)
      const [page, members] = await Promise.all([
        listAuditEntries(deps, ctx.member.merchantId, {
          limit: Math.min(50, AUDIT_PAGE_MAX),
          cursor,
        }),
        listDashboardMembers(deps, ctx.member.merchantId),
      ])
      const emailOf = new Map(members.map((m) => [m.userId, m.email]))
      return renderPage(ctx, {
        heading: t(lang, 'dash_audit_title'),
        section: 'settings',
        headingAside: settingsLinks(lang),
        content: markup`${dataTable({
          caption: t(lang, 'dash_audit_title'),
          id: 'audit-table',
          columns: [
            { label: t(lang, 'dash_audit_at') },
            { label: t(lang, 'dash_audit_actor') },
            { label: t(lang, 'dash_audit_action') },
            { label: t(lang, 'dash_audit_target') },
          ],
          rows: page.items.map((e) => [
            formatDate(e.at, lang, 'datetime'),
            emailOf.get(e.actorId) ??
              (e.actorId === 'operator' ? t(lang, 'dash_audit_actor_operator') : e.actorId),
            auditActionText(lang, e.action),
            e.target === null ? '—' : markup`<span class="mono">${e.target}</span>`,
          ]),
          empty: t(lang, 'dash_none'),
        })}
        ${pager({
          lang,
          ...(cursor ? { firstHref: `${BASE}/settings/audit-log` } : {}),
          ...(page.nextCursor
            ? {
                nextHref: `${BASE}/settings/audit-log?after=${encodeURIComponent(page.nextCursor)}`,
              }
            : {}),
        })}`,
      })
    })
  }
}
