import type { FastifyPluginAsync, FastifyReply } from 'fastify'
import type { Deps } from '../../database.ts'
import { AppError } from '../../platform/errors.ts'
import {
  badge,
  csrfInput,
  dataTable,
  facts,
  postButton,
  section,
  selectField,
  type BadgeTone,
} from '../../platform/web/components.ts'
import { formatDate, formatMoney, formatNumber } from '../../platform/web/format.ts'
import { markup, type SafeHtml } from '../../platform/web/html.ts'
import { t, type Lang } from '../../platform/web/i18n.ts'
import { getPayment, getPaymentRiskFacts, type Payment } from '../payments/index.ts'
import {
  approveReview,
  getReview,
  listReviews,
  listRules,
  rejectReview,
  type Review,
} from '../risk/index.ts'
import {
  BASE,
  allow,
  attempt,
  permitted,
  auditedAction,
  csrfToken,
  redirect,
  refusalText,
  renderPage,
  setFlash,
  type PageContext,
} from './dashboard.web.ts'
import { formFields, queryFields } from './forms.ts'
import { idParam, keysetPager } from './list-pages.ts'
import { riskPages } from './risk.pages.ts'
import { riskDetails, riskTabs } from './risk-view.ts'
import { PageActionBody } from './dashboard.schemas.ts'
import { pageRoute } from './page-rules.ts'

// /dashboard/reviews: the review queue (CONTRACT.md "Risk"): payments a `review` rule held at
// `authorized`, open ones first by default, keyset pages; /dashboard/reviews/{id}: the payment,
// its risk decision, score, signals and facts, and the rule that fired; Approve (captures when
// the charge asked for capture) and Reject (voids), each after a confirmation page, through
// the risk module's approveReview / rejectReview as the API. Approving or rejecting decides
// whether an authorization is taken or released, which is what capture and void decide: the
// `payments.capture_void` permission (owners and admins). The rules and lists pages are
// risk.pages.ts, under the same navigation entry.

const PAGE_SIZE = 25
const SECTION = 'reviews'
type Filter = 'open' | 'closed'

function reviewBadge(lang: Lang, r: Review): SafeHtml {
  if (r.status === 'open') return badge(t(lang, 'dash_rev_status_open'), 'warning')
  const tones: Record<string, BadgeTone> = {
    approved: 'success',
    rejected: 'danger',
    expired: 'neutral',
  }
  const reason = r.closedReason ?? 'expired'
  return badge(t(lang, `dash_rev_closed_${reason}`), tones[reason] ?? 'neutral')
}

function cardText(p: Payment): string {
  return p.cardMask ? `${p.cardBrand ?? ''} ${p.cardMask}`.trim() : '—'
}

async function listPage(deps: Deps, ctx: PageContext) {
  const { lang } = ctx
  const query = queryFields(ctx.request)
  const statusText = query.optional('status', 10)
  // Open reviews are the queue: the page starts there; "all" shows both.
  const status: Filter | undefined =
    statusText === 'all' ? undefined : statusText === 'closed' ? 'closed' : 'open'
  const cursor = query.optional('after', 2048)
  const result = await attempt(() =>
    listReviews(deps, ctx.member.merchantId, {
      limit: PAGE_SIZE,
      status,
      ...(cursor ? { cursor } : {}),
    }),
  )
  const { items, nextCursor } = result.ok ? result.value : { items: [], nextCursor: null }
  const payments = await Promise.all(
    items.map((r) => getPayment(deps, ctx.member.merchantId, r.paymentId)),
  )
  return renderPage(ctx, {
    heading: t(lang, 'dash_nav_reviews'),
    section: SECTION,
    ...(result.ok
      ? {}
      : {
          status: result.error.status,
          flash: { kind: 'error', text: refusalText(lang, result.error) },
        }),
    content: markup`${riskTabs(lang, 'reviews')}
      <form method="get" action="${BASE}/reviews" class="panel">
        ${selectField({
          name: 'status',
          label: t(lang, 'dash_col_status'),
          value: statusText === 'all' ? 'all' : (status ?? 'open'),
          options: [
            { value: 'open', label: t(lang, 'dash_rev_filter_open') },
            { value: 'closed', label: t(lang, 'dash_rev_filter_closed') },
            { value: 'all', label: t(lang, 'dash_rev_filter_all') },
          ],
        })}
        <div class="actions">
          <button type="submit" class="button button-primary">${t(lang, 'dash_pay_apply')}</button>
        </div>
      </form>
      ${dataTable({
        caption: t(lang, 'dash_rev_table'),
        id: 'reviews-table',
        columns: [
          { label: t(lang, 'dash_rev_opened') },
          { label: t(lang, 'dash_col_amount'), numeric: true },
          { label: t(lang, 'dash_col_status') },
          { label: t(lang, 'dash_risk_score'), numeric: true },
          { label: t(lang, 'dash_col_card') },
          { label: t(lang, 'dash_col_transaction') },
        ],
        rows: items.map((r, i) => {
          const p = payments[i]
          return [
            markup`<a href="${BASE}/reviews/${r.id}">${formatDate(r.createdAt, lang, 'datetime')}</a>`,
            p ? formatMoney(p.amount, lang) : '—',
            reviewBadge(lang, r),
            p?.risk ? formatNumber(p.risk.score, lang) : '—',
            p ? cardText(p) : '—',
            p ? markup`<span class="mono">${p.transactionId}</span>` : '—',
          ]
        }),
        empty: t(lang, status === 'open' ? 'dash_rev_none_open' : 'dash_none'),
      })}
      ${keysetPager(lang, `${BASE}/reviews`, { status: statusText }, cursor, nextCursor)}`,
  })
}

function actionsPanel(ctx: PageContext, r: Review, p: Payment): SafeHtml {
  const { lang } = ctx
  if (r.status !== 'open' || !ctx.can('payments.capture_void')) {
    return section({
      title: t(lang, 'dash_pay_actions'),
      id: 'actions-heading',
      body: markup`<p class="muted">${t(lang, r.status === 'open' ? 'dash_pay_no_actions' : 'dash_rev_closed_note')}</p>`,
    })
  }
  const token = csrfToken(ctx.request, ctx.reply)
  return section({
    title: t(lang, 'dash_pay_actions'),
    id: 'actions-heading',
    body: markup`<div class="actions">
        ${postButton({
          action: `${BASE}/reviews/${r.id}/approve`,
          csrfToken: token,
          label: t(lang, 'dash_rev_approve'),
          variant: 'primary',
        })}
        ${postButton({
          action: `${BASE}/reviews/${r.id}/reject`,
          csrfToken: token,
          label: t(lang, 'dash_rev_reject'),
          variant: 'danger',
        })}
      </div>
      <p class="hint">${t(lang, p.captureRequested ? 'dash_rev_hint_capture' : 'dash_rev_hint_hold')}</p>`,
  })
}

async function detailPage(deps: Deps, ctx: PageContext, id: string, problem?: AppError) {
  const { lang } = ctx
  const { merchantId } = ctx.member
  // Another merchant's (or no) review is the service's 404: the 404 page.
  const r = await getReview(deps, merchantId, id)
  const [p, riskFacts, rules] = await Promise.all([
    getPayment(deps, merchantId, r.paymentId),
    getPaymentRiskFacts(deps, merchantId, r.paymentId),
    listRules(deps, merchantId),
  ])
  const money = (m: number) => formatMoney(m, lang)
  const content = markup`
    ${section({
      title: t(lang, 'dash_rev_details'),
      id: 'review-heading',
      body: facts([
        [
          t(lang, 'dash_col_status'),
          markup`<span id="review-status">${reviewBadge(lang, r)}</span>`,
        ],
        [t(lang, 'dash_rev_opened'), formatDate(r.createdAt, lang, 'datetime')],
        [t(lang, 'dash_rev_closed'), r.closedAt ? formatDate(r.closedAt, lang, 'datetime') : '—'],
        [t(lang, 'dash_rev_id'), markup`<span class="mono">${r.id}</span>`],
      ]),
    })}
    ${actionsPanel(ctx, r, p)}
    ${section({
      title: t(lang, 'dash_cb_payment'),
      id: 'payment-heading',
      body: facts([
        [
          t(lang, 'dash_pay_id'),
          markup`<a class="mono" href="${BASE}/payments/${p.id}">${p.id}</a>`,
        ],
        [t(lang, 'dash_col_amount'), money(p.amount)],
        [
          t(lang, 'dash_col_status'),
          markup`<span id="payment-status">${t(lang, `dash_pay_status_${p.status}`)}</span>`,
        ],
        [t(lang, 'dash_pay_captured'), money(p.capturedAmount)],
        [t(lang, 'dash_col_transaction'), markup`<span class="mono">${p.transactionId}</span>`],
        [t(lang, 'dash_col_card'), cardText(p)],
        [t(lang, 'dash_col_customer'), p.customerId ?? '—'],
        [t(lang, 'dash_col_date'), formatDate(p.createdAt, lang, 'datetime')],
      ]),
    })}
    ${section({
      title: t(lang, 'dash_risk_title'),
      id: 'risk-heading',
      body: riskDetails(lang, p.risk, riskFacts, rules),
    })}`
  return renderPage(ctx, {
    heading: t(lang, 'dash_rev_title', { amount: money(p.amount) }),
    section: SECTION,
    headingAside: markup`<a class="button button-secondary" href="${BASE}/reviews">${t(lang, 'dash_rev_back')}</a>`,
    content,
    ...(problem
      ? { status: problem.status, flash: { kind: 'error', text: refusalText(lang, problem) } }
      : {}),
  })
}

type Decision = 'approve' | 'reject'

async function confirmPage(ctx: PageContext, r: Review, p: Payment, decision: Decision) {
  const { lang } = ctx
  const amount = formatMoney(p.amount, lang)
  const body =
    decision === 'reject'
      ? t(lang, 'dash_rev_confirm_reject', { amount, payment: p.id })
      : t(lang, p.captureRequested ? 'dash_rev_confirm_capture' : 'dash_rev_confirm_hold', {
          amount,
          payment: p.id,
        })
  return renderPage(ctx, {
    heading: t(
      lang,
      decision === 'approve' ? 'dash_rev_confirm_approve_title' : 'dash_rev_confirm_reject_title',
    ),
    section: SECTION,
    content: markup`<div class="panel form-stack">
      <p id="confirm-text">${body}</p>
      <form method="post" action="${BASE}/reviews/${r.id}/${decision}" class="actions">
        ${csrfInput(csrfToken(ctx.request, ctx.reply))}
        <input type="hidden" name="confirm" value="yes" />
        <button type="submit" class="button ${decision === 'approve' ? 'button-primary' : 'button-danger'}">
          ${t(lang, decision === 'approve' ? 'dash_rev_confirm_approve' : 'dash_rev_confirm_reject_button')}
        </button>
        <a class="button button-secondary" href="${BASE}/reviews/${r.id}">${t(lang, 'dash_cancel')}</a>
      </form>
    </div>`,
  })
}

async function decide(
  deps: Deps,
  ctx: PageContext,
  id: string,
  decision: Decision,
): Promise<FastifyReply> {
  const { merchantId } = ctx.member
  const review = await getReview(deps, merchantId, id)
  if (review.status !== 'open') {
    return detailPage(
      deps,
      ctx,
      id,
      new AppError('SVC-STATE-3401', 409, 'the review is already closed'),
    )
  }
  if (formFields(ctx.request).text('confirm', 3) !== 'yes') {
    // First step: say exactly what will happen to the money and ask again.
    const payment = await getPayment(deps, merchantId, review.paymentId)
    return confirmPage(ctx, review, payment, decision)
  }
  // The entry commits with the review's close (reviews.service.ts: the capture or void
  // before it commits on its own). Approve's KYC gate is the route's declared rule.
  const result = await attempt(() =>
    auditedAction(ctx, `review.${decision}`, id, { paymentId: review.paymentId }, async () => {
      if (decision === 'approve') return approveReview(deps, merchantId, id)
      return rejectReview(deps, merchantId, id)
    }),
  )
  if (!result.ok) return detailPage(deps, ctx, id, result.error)
  setFlash(
    deps,
    ctx.reply,
    'success',
    decision === 'approve' ? 'dash_done_rev_approve' : 'dash_done_rev_reject',
  )
  return redirect(ctx.reply, `${BASE}/reviews/${id}`)
}

// Each decision's rule, as the API's route for it (page-rules.ts): approving may capture (money
// coming in), so it is KYC-gated as POST /v1/reviews/{id}/approve is.
const ROUTES = {
  approve: pageRoute({ permission: 'payments.capture_void', schema: PageActionBody, kyc: true }),
  reject: pageRoute({ permission: 'payments.capture_void', schema: PageActionBody }),
}

/** The Reviews section: the queue, and the risk rules and block lists (risk.pages.ts). */
export function reviewsPages(deps: Deps): FastifyPluginAsync {
  return async (app) => {
    app.get('/reviews', async (request, reply) =>
      listPage(deps, allow(deps, request, reply, 'read')),
    )

    app.get('/reviews/:id', async (request, reply) =>
      detailPage(deps, allow(deps, request, reply, 'read'), idParam(request)),
    )

    for (const decision of ['approve', 'reject'] as const) {
      app.post(`/reviews/:id/${decision}`, ROUTES[decision], async (request, reply) =>
        decide(deps, permitted(deps, request, reply), idParam(request), decision),
      )
    }

    await app.register(riskPages(deps))
  }
}
