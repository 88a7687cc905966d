import type { FastifyPluginAsync, FastifyReply } from 'fastify'
import type { Deps } from '../../database.ts'
import type { AppError } from '../../platform/errors.ts'
import {
  badge,
  csrfInput,
  dataTable,
  facts,
  field,
  postButton,
  section,
  selectField,
  type BadgeTone,
} from '../../platform/web/components.ts'
import { formatDate, formatMoney, formatNumber } from '../../platform/web/format.ts'
import { markup, type SafeHtml } from '../../platform/web/html.ts'
import { t, type Lang } from '../../platform/web/i18n.ts'
import { customerEmails } from '../customers/index.ts'
import {
  CancelBody,
  cancelSubscription,
  getSubscription,
  listSubscriptionCharges,
  listSubscriptions,
  pauseSubscription,
  resumeSubscription,
  type Subscription,
  type SubscriptionStatus,
} from '../subscriptions/index.ts'
import {
  BASE,
  allow,
  attempt,
  permitted,
  auditedAction,
  csrfToken,
  refusalText,
  renderPage,
  redirect,
  setFlash,
  type PageContext,
} from './dashboard.web.ts'
import { formFields, queryFields } from './forms.ts'
import { idParam, keysetPager } from './list-pages.ts'
import { PageActionBody } from './dashboard.schemas.ts'
import { pageInput, pageRoute } from './page-rules.ts'

// /dashboard/subscriptions: the list (status filter, keyset pages) and
// /dashboard/subscriptions/{id}: the plan, the customer, the charge attempts and Pause /
// Resume / Cancel (now or at the end of the period) as the state and the role allow. The
// actions are the subscriptions module's pauseSubscription / resumeSubscription /
// cancelSubscription, as the API's; resume needs an approved KYC there, and here.

const PAGE_SIZE = 25
const STATUSES: readonly SubscriptionStatus[] = [
  'trialing',
  'active',
  'past_due',
  'paused',
  'charging',
  'cancelled',
  'expired',
]
const TONES: Readonly<Record<SubscriptionStatus, BadgeTone>> = {
  trialing: 'info',
  active: 'success',
  past_due: 'danger',
  paused: 'warning',
  charging: 'info',
  cancelled: 'neutral',
  expired: 'neutral',
}

export function subscriptionStatusBadge(lang: Lang, status: SubscriptionStatus): SafeHtml {
  return badge(t(lang, `sub_status_${status}`), TONES[status])
}

function interval(lang: Lang, s: Subscription): string {
  return s.intervalCount === 1
    ? t(lang, `sub_every_${s.intervalUnit}`)
    : t(lang, `sub_every_n_${s.intervalUnit}`, { n: s.intervalCount })
}

async function listPage(deps: Deps, ctx: PageContext) {
  const { lang } = ctx
  const query = queryFields(ctx.request)
  const statusText = query.optional('status', 20)
  const status = STATUSES.find((s) => s === statusText)
  const cursor = query.optional('after', 2048)
  const result = await attempt(() =>
    listSubscriptions(deps, ctx.member.merchantId, {
      limit: PAGE_SIZE,
      status,
      ...(cursor ? { cursor } : {}),
    }),
  )
  const { items, nextCursor } = result.ok ? result.value : { items: [], nextCursor: null }
  const emails = await customerEmails(
    deps,
    ctx.member.merchantId,
    items.map((s) => s.customerId),
  )
  return renderPage(ctx, {
    heading: t(lang, 'dash_nav_subscriptions'),
    section: 'subscriptions',
    ...(result.ok
      ? {}
      : {
          status: result.error.status,
          flash: { kind: 'error', text: refusalText(lang, result.error) },
        }),
    content: markup`<form method="get" action="${BASE}/subscriptions" class="panel">
        ${selectField({
          name: 'status',
          label: t(lang, 'dash_col_status'),
          value: status,
          options: [
            { value: '', label: t(lang, 'dash_pay_all_statuses') },
            ...STATUSES.map((s) => ({ value: s, label: t(lang, `sub_status_${s}`) })),
          ],
        })}
        <div class="actions">
          <button type="submit" class="button button-primary">${t(lang, 'dash_pay_apply')}</button>
        </div>
      </form>
      ${dataTable({
        caption: t(lang, 'dash_sub_table'),
        id: 'subscriptions-table',
        columns: [
          { label: t(lang, 'dash_col_created') },
          { label: t(lang, 'dash_col_customer') },
          { label: t(lang, 'dash_col_amount'), numeric: true },
          { label: t(lang, 'dash_sub_interval') },
          { label: t(lang, 'dash_col_status') },
          { label: t(lang, 'dash_sub_next') },
        ],
        rows: items.map((s) => [
          markup`<a href="${BASE}/subscriptions/${s.id}">${formatDate(s.createdAt, lang, 'date')}</a>`,
          emails.get(s.customerId) ?? s.customerId,
          formatMoney(s.amountMinor, lang),
          interval(lang, s),
          subscriptionStatusBadge(lang, s.status),
          s.nextChargeAt ? formatDate(s.nextChargeAt, lang, 'datetime') : '—',
        ]),
        empty: t(lang, 'dash_none'),
      })}
      ${keysetPager(lang, `${BASE}/subscriptions`, { status }, cursor, nextCursor)}`,
  })
}

function actionsPanel(ctx: PageContext, s: Subscription): SafeHtml {
  const { lang } = ctx
  const token = csrfToken(ctx.request, ctx.reply)
  const open = s.status !== 'cancelled' && s.status !== 'expired'
  if (!ctx.can('customers.manage') || !open) {
    return section({
      title: t(lang, 'dash_pay_actions'),
      id: 'actions-heading',
      body: markup`<p class="muted">${t(lang, 'dash_pay_no_actions')}</p>`,
    })
  }
  const path = `${BASE}/subscriptions/${s.id}`
  const buttons: SafeHtml[] = []
  if (s.status === 'active' || s.status === 'trialing') {
    buttons.push(
      postButton({ action: `${path}/pause`, csrfToken: token, label: t(lang, 'dash_sub_pause') }),
    )
  }
  if (s.status === 'paused') {
    buttons.push(
      postButton({
        action: `${path}/resume`,
        csrfToken: token,
        label: t(lang, 'dash_sub_resume'),
        variant: 'primary',
      }),
    )
  }
  return section({
    title: t(lang, 'dash_pay_actions'),
    id: 'actions-heading',
    body: markup`${buttons.length ? markup`<div class="actions">${buttons}</div>` : ''}
      <form method="post" action="${path}/cancel" class="form-stack" id="cancel-form">
        ${csrfInput(token)}
        ${selectField({
          name: 'when',
          label: t(lang, 'dash_sub_cancel_when'),
          value: 'now',
          options: [
            { value: 'now', label: t(lang, 'dash_sub_cancel_now') },
            ...(s.cancelAtPeriodEnd
              ? []
              : [{ value: 'period_end', label: t(lang, 'dash_sub_cancel_period_end') }]),
          ],
        })}
        ${field({ name: 'reason', label: t(lang, 'dash_sub_cancel_reason'), maxlength: 500 })}
        <button type="submit" class="button button-danger">${t(lang, 'dash_sub_cancel')}</button>
      </form>`,
  })
}

async function detailPage(deps: Deps, ctx: PageContext, id: string, problem?: AppError) {
  const { lang } = ctx
  const { merchantId } = ctx.member
  const s = await getSubscription(deps, merchantId, id)
  const [charges, emails] = await Promise.all([
    listSubscriptionCharges(deps, merchantId, id, { limit: 25 }),
    customerEmails(deps, merchantId, [s.customerId]),
  ])
  const money = (m: number) => formatMoney(m, lang)
  const content = markup`
    ${section({
      title: t(lang, 'dash_sub_plan'),
      id: 'plan-heading',
      body: facts([
        [t(lang, 'dash_col_status'), subscriptionStatusBadge(lang, s.status)],
        [t(lang, 'dash_col_amount'), money(s.amountMinor)],
        [t(lang, 'dash_sub_interval'), interval(lang, s)],
        [t(lang, 'dash_sub_cycle'), formatNumber(s.cycleNumber, lang)],
        [
          t(lang, 'dash_sub_next'),
          s.nextChargeAt ? formatDate(s.nextChargeAt, lang, 'datetime') : '—',
        ],
        [t(lang, 'dash_sub_ending'), t(lang, s.cancelAtPeriodEnd ? 'dash_yes' : 'dash_no')],
        [t(lang, 'dash_col_card'), `${s.cardBrand} •••• ${s.cardLast4}`],
        [
          t(lang, 'dash_col_customer'),
          markup`<a href="${BASE}/customers/${s.customerId}">${emails.get(s.customerId) ?? s.customerId}</a>`,
        ],
        [t(lang, 'dash_sub_description'), s.description ?? '—'],
        [t(lang, 'dash_sub_id'), markup`<span class="mono">${s.id}</span>`],
      ]),
    })}
    ${actionsPanel(ctx, s)}
    ${section({
      title: t(lang, 'dash_sub_charges'),
      id: 'charges-heading',
      body: dataTable({
        caption: t(lang, 'dash_sub_charges'),
        id: 'charges-table',
        columns: [
          { label: t(lang, 'dash_col_date') },
          { label: t(lang, 'dash_sub_cycle') },
          { label: t(lang, 'dash_col_amount'), numeric: true },
          { label: t(lang, 'dash_col_status') },
          { label: t(lang, 'dash_pay_decline') },
        ],
        rows: charges.items.map((c) => [
          c.paymentId
            ? markup`<a href="${BASE}/payments/${c.paymentId}">${formatDate(c.chargedAt, lang, 'datetime')}</a>`
            : formatDate(c.chargedAt, lang, 'datetime'),
          `${String(c.cycleNumber)} / ${String(c.attempt)}`,
          money(c.amountMinor),
          t(lang, c.status === 'captured' ? 'dash_pay_status_captured' : 'dash_pay_status_failed'),
          c.declineCode ?? '—',
        ]),
        empty: t(lang, 'dash_none'),
      }),
    })}`
  return renderPage(ctx, {
    heading: t(lang, 'dash_sub_title', { amount: money(s.amountMinor) }),
    section: 'subscriptions',
    headingAside: markup`<a class="button button-secondary" href="${BASE}/subscriptions">${t(lang, 'dash_sub_back')}</a>`,
    content,
    ...(problem
      ? { status: problem.status, flash: { kind: 'error', text: refusalText(lang, problem) } }
      : {}),
  })
}

type Action = 'pause' | 'resume' | 'cancel'

// Each action's rule, as the API's route for it (page-rules.ts): resuming takes money again, so
// it is KYC-gated as POST /v1/subscriptions/{id}/resume is.
const ROUTES = {
  pause: pageRoute({ permission: 'customers.manage', schema: PageActionBody }),
  resume: pageRoute({ permission: 'customers.manage', schema: PageActionBody, kyc: true }),
  cancel: pageRoute({ permission: 'customers.manage', schema: CancelBody }),
}

export function subscriptionsPages(deps: Deps): FastifyPluginAsync {
  return async (app) => {
    app.get('/subscriptions', async (request, reply) =>
      listPage(deps, allow(deps, request, reply, 'read')),
    )

    app.get('/subscriptions/:id', async (request, reply) =>
      detailPage(deps, allow(deps, request, reply, 'read'), idParam(request)),
    )

    const act = async (ctx: PageContext, id: string, action: Action): Promise<FastifyReply> => {
      const { merchantId } = ctx.member
      const form = formFields(ctx.request)
      const atPeriodEnd = form.text('when', 20) === 'period_end'
      const reason = form.optional('reason', 500)
      const details = action === 'cancel' ? { atPeriodEnd } : {}
      // Resume's KYC gate is the route's declared rule (page-rules.ts), as the API's.
      const result = await attempt(() =>
        auditedAction(ctx, `subscription.${action}`, id, details, async () => {
          switch (action) {
            case 'pause':
              return pauseSubscription(deps, merchantId, id)
            case 'resume':
              return resumeSubscription(deps, merchantId, id)
            case 'cancel': {
              const refused = pageInput(ctx.request, {
                atPeriodEnd,
                ...(reason ? { reason } : {}),
              })
              if (refused) throw refused
              return cancelSubscription(deps, merchantId, id, { atPeriodEnd, reason })
            }
          }
        }),
      )
      if (!result.ok) {
        // Another merchant's (or no) subscription is the 404 page.
        if (result.error.status === 404) throw result.error
        return detailPage(deps, ctx, id, result.error)
      }
      setFlash(
        deps,
        ctx.reply,
        'success',
        action === 'cancel' && atPeriodEnd
          ? 'dash_done_sub_cancel_later'
          : `dash_done_sub_${action}`,
      )
      return redirect(ctx.reply, `${BASE}/subscriptions/${id}`)
    }

    for (const action of ['pause', 'resume', 'cancel'] as const) {
      app.post(`/subscriptions/:id/${action}`, ROUTES[action], async (request, reply) =>
        act(permitted(deps, request, reply), idParam(request), action),
      )
    }
  }
}
