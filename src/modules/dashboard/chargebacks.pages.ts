import type { FastifyPluginAsync, FastifyReply } from 'fastify'
import type { Deps } from '../../database.ts'
import {
  dataTable,
  facts,
  postButton,
  section,
  selectField,
} from '../../platform/web/components.ts'
import { formatDate, formatMoney } from '../../platform/web/format.ts'
import { markup, type SafeHtml } from '../../platform/web/html.ts'
import { t, type Lang } from '../../platform/web/i18n.ts'
import {
  acceptChargeback,
  evidenceDueBy,
  getChargeback,
  listMerchantChargebacks,
  reverseChargeback,
  type Chargeback,
} from '../disputes/index.ts'
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
import { PageActionBody } from './dashboard.schemas.ts'
import { pageRoute } from './page-rules.ts'
import { queryFields } from './forms.ts'
import { idParam, keysetPager } from './list-pages.ts'
import { reasonEvidence, reasonText, statusBadge } from './chargeback-view.ts'
import {
  chargebackEvidenceRoutes,
  evidencePanel,
  type DetailExtra,
} from './chargeback-evidence.pages.ts'

// /dashboard/chargebacks: the merchant's chargebacks, newest first, with the deadline to
// answer each (open ones only), and /dashboard/chargebacks/{id}: its facts, the payment, and
// Accept / Reverse while it is open, the disputes module's acceptChargeback / reverseChargeback
// as the API's. Accepting or reversing decides where a disputed amount ends up, a refund-like
// decision: the `payments.refund` permission, which also answers with evidence (CONTRACT.md
// "Dispute evidence"): while the chargeback is `received` the page holds the evidence draft's
// texts (saved with saveEvidence as the API's draft), the files attached to it (uploaded as
// multipart/form-data through the files module's uploadFile; the CSRF token travels as a form
// field, read after the multipart parser, which only runs for a signed-in session), and Submit,
// which saves the texts, asks for a confirmation, then sends the saved draft (`under_review`).
// The evidence panel and its routes are chargeback-evidence.pages.ts.

const PAGE_SIZE = 25
type Status = Chargeback['status']
const STATUSES: readonly Status[] = ['received', 'under_review', 'accepted', 'reversed']
function deadline(lang: Lang, cb: Chargeback): string {
  return cb.status === 'received' ? formatDate(evidenceDueBy(cb), lang, 'datetime') : '—'
}

async function listPage(deps: Deps, ctx: PageContext) {
  const { lang } = ctx
  const query = queryFields(ctx.request)
  const statusText = query.optional('status', 20)
  const status = STATUSES.find((s) => s === statusText)
  const cursor = query.optional('after', 2048)
  const result = await attempt(() =>
    listMerchantChargebacks(deps, ctx.member.merchantId, {
      limit: PAGE_SIZE,
      status,
      ...(cursor ? { cursor } : {}),
    }),
  )
  const { items, nextCursor } = result.ok ? result.value : { items: [], nextCursor: null }
  return renderPage(ctx, {
    heading: t(lang, 'dash_nav_chargebacks'),
    section: 'chargebacks',
    ...(result.ok
      ? {}
      : {
          status: result.error.status,
          flash: { kind: 'error', text: refusalText(lang, result.error) },
        }),
    content: markup`<form method="get" action="${BASE}/chargebacks" class="panel">
        ${selectField({
          name: 'status',
          label: t(lang, 'dash_col_status'),
          value: status,
          options: [
            { value: '', label: t(lang, 'dash_pay_all_statuses') },
            ...STATUSES.map((s) => ({ value: s, label: t(lang, `dash_cb_status_${s}`) })),
          ],
        })}
        <div class="actions">
          <button type="submit" class="button button-primary">${t(lang, 'dash_pay_apply')}</button>
        </div>
      </form>
      ${dataTable({
        caption: t(lang, 'dash_cb_table'),
        id: 'chargebacks-table',
        columns: [
          { label: t(lang, 'dash_cb_received') },
          { label: t(lang, 'dash_col_amount'), numeric: true },
          { label: t(lang, 'dash_col_status') },
          { label: t(lang, 'dash_cb_deadline') },
          { label: t(lang, 'dash_pay_reason_code') },
        ],
        rows: items.map((cb) => [
          markup`<a href="${BASE}/chargebacks/${cb.id}">${formatDate(cb.receivedAt, lang, 'datetime')}</a>`,
          formatMoney(cb.amount, lang),
          statusBadge(lang, cb.status),
          deadline(lang, cb),
          reasonText(lang, cb.reasonCode),
        ]),
        empty: t(lang, 'dash_none'),
      })}
      ${keysetPager(lang, `${BASE}/chargebacks`, { status }, cursor, nextCursor)}`,
  })
}

function actionsPanel(ctx: PageContext, cb: Chargeback): SafeHtml {
  const { lang } = ctx
  const body: SafeHtml[] = []
  if (cb.status === 'received' && ctx.can('payments.refund')) {
    const token = csrfToken(ctx.request, ctx.reply)
    body.push(markup`<div class="actions">
      ${postButton({
        action: `${BASE}/chargebacks/${cb.id}/accept`,
        csrfToken: token,
        label: t(lang, 'dash_cb_accept'),
        variant: 'danger',
      })}
      ${postButton({
        action: `${BASE}/chargebacks/${cb.id}/reverse`,
        csrfToken: token,
        label: t(lang, 'dash_cb_reverse'),
      })}
    </div>
    <p class="hint">${t(lang, 'dash_cb_actions_hint')}</p>`)
  } else {
    body.push(markup`<p class="muted">${t(lang, 'dash_pay_no_actions')}</p>`)
  }
  return section({ title: t(lang, 'dash_pay_actions'), id: 'actions-heading', body })
}

async function detailPage(deps: Deps, ctx: PageContext, id: string, extra: DetailExtra = {}) {
  const { lang } = ctx
  const cb = await getChargeback(deps, ctx.member.merchantId, id)
  const { problem } = extra
  const content = markup`
    ${section({
      title: t(lang, 'dash_cb_details'),
      id: 'chargeback-heading',
      body: facts([
        [t(lang, 'dash_col_status'), statusBadge(lang, cb.status)],
        [t(lang, 'dash_col_amount'), formatMoney(cb.amount, lang)],
        [t(lang, 'dash_cb_received'), formatDate(cb.receivedAt, lang, 'datetime')],
        [t(lang, 'dash_cb_deadline'), markup`<span id="deadline">${deadline(lang, cb)}</span>`],
        [
          t(lang, 'dash_cb_resolved'),
          cb.resolvedAt ? formatDate(cb.resolvedAt, lang, 'datetime') : '—',
        ],
        [
          t(lang, 'dash_pay_reason_code'),
          markup`<span id="reason">${reasonText(lang, cb.reasonCode)}</span>`,
        ],
        [t(lang, 'dash_cb_reason_evidence'), reasonEvidence(lang, cb.reasonCode) || '—'],
        [t(lang, 'dash_cb_bank_id'), markup`<span class="mono">${cb.bankChargebackId}</span>`],
        [
          t(lang, 'dash_cb_payment'),
          markup`<a class="mono" href="${BASE}/payments/${cb.paymentId}">${cb.paymentId}</a>`,
        ],
        [t(lang, 'dash_cb_id'), markup`<span class="mono">${cb.id}</span>`],
      ]),
    })}
    ${actionsPanel(ctx, cb)}
    ${await evidencePanel(deps, ctx, cb, {
      ...(extra.texts ? { texts: extra.texts } : {}),
      ...(extra.errorKey ? { errorKey: extra.errorKey } : {}),
    })}`
  return renderPage(ctx, {
    heading: t(lang, 'dash_cb_title', { amount: formatMoney(cb.amount, lang) }),
    section: 'chargebacks',
    headingAside: markup`<a class="button button-secondary" href="${BASE}/chargebacks">${t(lang, 'dash_cb_back')}</a>`,
    content,
    ...(problem
      ? { status: problem.status, flash: { kind: 'error', text: refusalText(lang, problem) } }
      : {}),
  })
}

// ---------------------------------------------------------------- routes

// Each route's rule, as the API's route for the same use case declares it (page-rules.ts).
const ROUTES = {
  accept: pageRoute({ permission: 'payments.refund', schema: PageActionBody }),
  reverse: pageRoute({ permission: 'payments.refund', schema: PageActionBody }),
}

export function chargebacksPages(deps: Deps): FastifyPluginAsync {
  return async (app) => {
    // The evidence routes, with the multipart parser for their uploads (this plugin only).
    chargebackEvidenceRoutes(deps, app, detailPage)

    app.get('/chargebacks', async (request, reply) =>
      listPage(deps, allow(deps, request, reply, 'read')),
    )

    app.get('/chargebacks/:id', async (request, reply) =>
      detailPage(deps, allow(deps, request, reply, 'read'), idParam(request)),
    )

    const act = async (
      ctx: PageContext,
      id: string,
      action: 'accept' | 'reverse',
    ): Promise<FastifyReply> => {
      const { merchantId } = ctx.member
      // Another merchant's (or no) chargeback is the 404 page.
      const cb = await getChargeback(deps, merchantId, id)
      const details = { paymentId: cb.paymentId, amount: cb.amount }
      const result = await attempt(() =>
        auditedAction(ctx, `chargeback.${action}`, id, details, () =>
          action === 'accept'
            ? acceptChargeback(deps, merchantId, cb.paymentId, id)
            : reverseChargeback(deps, merchantId, cb.paymentId, id),
        ),
      )
      if (!result.ok) return detailPage(deps, ctx, id, { problem: result.error })
      setFlash(
        deps,
        ctx.reply,
        'success',
        action === 'accept' ? 'dash_done_cb_accept' : 'dash_done_cb_reverse',
      )
      return redirect(ctx.reply, `${BASE}/chargebacks/${id}`)
    }

    for (const action of ['accept', 'reverse'] as const) {
      app.post(`/chargebacks/:id/${action}`, ROUTES[action], async (request, reply) =>
        act(permitted(deps, request, reply), idParam(request), action),
      )
    }
  }
}
