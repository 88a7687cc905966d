import { randomUUID } from 'node:crypto'
import type { FastifyPluginAsync, FastifyReply } from 'fastify'
import type { Deps } from '../../database.ts'
import { validationError, type AppError } from '../../platform/errors.ts'
import {
  csrfInput,
  dataTable,
  facts,
  field,
  postButton,
  section,
  technicalDetails,
} from '../../platform/web/components.ts'
import { formatDate, formatMoney, formatNumber } from '../../platform/web/format.ts'
import { markup, type SafeHtml } from '../../platform/web/html.ts'
import { t, type Lang } from '../../platform/web/i18n.ts'
import { acquirerOfPayment, posAccountNames } from '../acquirer/index.ts'
import { customerEmails } from '../customers/index.ts'
import { eventsForResource } from '../events/index.ts'
import {
  CaptureBody,
  RefundBody,
  VoidBody,
  capturePayment,
  getPayment,
  refundPayment,
  voidPayment,
  getPaymentRiskFacts,
  type Payment,
  type RiskFacts,
} from '../payments/index.ts'
import { listRules, type Rule } from '../risk/index.ts'
import {
  getTransaction,
  getTransactionLedger,
  type TransactionDetail,
} from '../transactions/index.ts'
import {
  BASE,
  allow,
  permitted,
  auditedAction,
  attempt,
  csrfToken,
  fieldErrorText,
  refusalText,
  renderPage,
  redirect,
  setFlash,
  type PageContext,
} from './dashboard.web.ts'
import { pageInput, pageRoute } from './page-rules.ts'
import { riskDetails } from './risk-view.ts'
import { formFields, liraInput, parseLira } from './forms.ts'
import { cardText, paymentListRoutes, statusBadge } from './payments-list.pages.ts'

// /dashboard/payments/{id}: amounts, timeline, ledger legs, refunds, chargebacks, metadata and
// the actions the payment's state and the member's role allow; `paymentsPages` also registers
// the list and its CSV export (payments-list.pages.ts). Every action calls the same service
// function as the API (payments' capturePayment / voidPayment / refundPayment) and writes an
// audit entry.

interface DetailData {
  payment: Payment
  tx: TransactionDetail
  legs: Awaited<ReturnType<typeof getTransactionLedger>>
  events: { type: string; at: Date; resourceId: string }[]
  customerEmail: string | undefined
  riskFacts: RiskFacts | null
  rules: Rule[]
  acquirer: Awaited<ReturnType<typeof acquirerOfPayment>>
  posNames: Awaited<ReturnType<typeof posAccountNames>>
}

async function loadDetail(deps: Deps, merchantId: string, id: string): Promise<DetailData> {
  // getTransaction is the read model's detail (a 404 for another merchant's id, as the API).
  const tx = await getTransaction(deps, merchantId, id)
  const [payment, legs, riskFacts, rules] = await Promise.all([
    getPayment(deps, merchantId, id),
    getTransactionLedger(deps, merchantId, id),
    getPaymentRiskFacts(deps, merchantId, id),
    listRules(deps, merchantId),
  ])
  const resources = [id, ...tx.refunds.map((r) => r.refundId)]
  const events = (
    await Promise.all(resources.map((r) => eventsForResource(deps.db, merchantId, r)))
  )
    .flat()
    .map((e) => ({ type: e.type, at: e.createdAt, resourceId: e.resourceId }))
    .sort((a, b) => a.at.getTime() - b.at.getTime())
  const acquirer = await acquirerOfPayment(deps, id)
  const names = await posAccountNames(
    deps,
    acquirer ? [...new Set(acquirer.attempts.map((a) => a.posAccountId))] : [],
  )
  const emails = payment.customerId
    ? await customerEmails(deps, merchantId, [payment.customerId])
    : new Map<string, string>()
  return {
    payment,
    tx,
    legs,
    events,
    customerEmail: payment.customerId ? emails.get(payment.customerId) : undefined,
    riskFacts,
    rules,
    acquirer,
    posNames: names,
  }
}

function actionsPanel(
  ctx: PageContext,
  p: Payment,
  refund?: { amount?: string; error?: string | undefined },
): SafeHtml {
  const { lang } = ctx
  const token = csrfToken(ctx.request, ctx.reply)
  const buttons: SafeHtml[] = []
  // A capture here takes the whole uncaptured remainder; partial captures are the API's.
  if (
    (p.status === 'authorized' || p.status === 'partially_captured') &&
    ctx.can('payments.capture_void')
  ) {
    buttons.push(
      postButton({
        action: `${BASE}/payments/${p.id}/capture`,
        csrfToken: token,
        label: t(lang, 'dash_act_capture'),
        variant: 'primary',
      }),
      postButton({
        action: `${BASE}/payments/${p.id}/void`,
        csrfToken: token,
        label: t(lang, 'dash_act_void'),
        variant: 'danger',
      }),
    )
  }
  const refundForm =
    (p.status === 'captured' || p.status === 'partially_captured') &&
    p.refundableAmount > 0 &&
    ctx.can('payments.refund')
      ? markup`<form method="post" action="${BASE}/payments/${p.id}/refund" class="form-stack" id="refund-form">
          ${csrfInput(token)}
          <input type="hidden" name="idempotencyKey" value="${randomUUID()}" />
          ${field({
            name: 'amount',
            label: t(lang, 'dash_act_refund_amount'),
            value: refund?.amount ?? liraInput(p.refundableAmount, lang),
            ...(refund?.error ? { error: refund.error } : {}),
            inputmode: 'decimal',
            required: true,
            maxlength: 20,
            hint: t(lang, 'dash_act_refund_hint', {
              amount: formatMoney(p.refundableAmount, lang),
            }),
          })}
          ${field({ name: 'reason', label: t(lang, 'dash_act_refund_reason'), maxlength: 500 })}
          <button type="submit" class="button button-primary">${t(lang, 'dash_act_refund')}</button>
        </form>`
      : ''
  if (buttons.length === 0 && !refundForm) {
    return section({
      title: t(lang, 'dash_pay_actions'),
      id: 'actions-heading',
      body: markup`<p class="muted">${t(lang, 'dash_pay_no_actions')}</p>`,
    })
  }
  return section({
    title: t(lang, 'dash_pay_actions'),
    id: 'actions-heading',
    body: markup`${buttons.length ? markup`<div class="actions">${buttons}</div>` : ''}${refundForm}`,
  })
}

const ATTEMPT_WORDS = {
  approved: 'dash_pay_attempt_approved',
  declined: 'dash_pay_attempt_declined',
  not_sent: 'dash_pay_attempt_not_sent',
  unknown: 'dash_pay_attempt_unknown',
  not_found: 'dash_pay_attempt_not_found',
} as const

/**
 * The bank POS that holds the payment and each routing attempt in words (CONTRACT: "the
 * dashboard shows it"); nothing for a payment of the sandbox bank.
 */
function acquirerPanel(lang: Lang, d: DetailData): SafeHtml | '' {
  const a = d.acquirer
  if (!a) return ''
  const posName = (id: string | null) => {
    const known = id ? d.posNames.get(id) : undefined
    return known ? known.name : (id ?? '—')
  }
  const about = facts([
    [t(lang, 'dash_pay_pos'), markup`<span id="acquirer-pos">${posName(a.posAccountId)}</span>`],
    [t(lang, 'dash_pos_bank'), a.bank ?? '—'],
    [t(lang, 'dash_pay_auth_code'), markup`<span class="mono">${a.authCode ?? '—'}</span>`],
    [
      t(lang, 'dash_pay_host_reference'),
      markup`<span class="mono">${a.hostReference ?? '—'}</span>`,
    ],
  ])
  const attempts = dataTable({
    caption: t(lang, 'dash_pay_attempts'),
    id: 'attempts-table',
    columns: [
      { label: '#', numeric: true },
      { label: t(lang, 'dash_pay_pos') },
      { label: t(lang, 'dash_col_status') },
      { label: t(lang, 'dash_pay_attempt_bank_code') },
    ],
    rows: a.attempts.map((x, i) => [
      formatNumber(i + 1, lang),
      posName(x.posAccountId),
      t(lang, ATTEMPT_WORDS[x.outcome]),
      x.bankCode ?? '—',
    ]),
    empty: t(lang, 'dash_none'),
  })
  return section({
    title: t(lang, 'dash_pay_acquirer'),
    id: 'acquirer-heading',
    body: markup`${about}<h3>${t(lang, 'dash_pay_attempts')}</h3>${attempts}`,
  })
}

async function detailPage(
  deps: Deps,
  ctx: PageContext,
  id: string,
  problem?: { error: AppError; refundAmount?: string },
): Promise<FastifyReply> {
  const { lang } = ctx
  const d = await loadDetail(deps, ctx.member.merchantId, id)
  const p = d.payment
  const money = (m: number) => formatMoney(m, lang)
  // What the merchant keeps: the captured net (after the commission) less the refunds, plus
  // the commission refunds give back.
  const netAfterRefunds = p.netAmount - p.refundCompletedAmount + p.commissionRefunded
  const amounts = facts([
    [t(lang, 'dash_col_amount'), money(p.amount)],
    [t(lang, 'dash_col_status'), markup`<span id="payment-status">${statusBadge(lang, p)}</span>`],
    [t(lang, 'dash_pay_captured'), money(p.capturedAmount)],
    [
      t(lang, 'dash_pay_refunded'),
      markup`<span id="refunded">${money(p.refundCompletedAmount)}</span>`,
    ],
    [
      t(lang, 'dash_pay_remaining'),
      markup`<span id="remaining">${money(p.capturedAmount - p.refundCompletedAmount)}</span>`,
    ],
    [
      t(lang, 'dash_pay_refundable'),
      markup`<span id="refundable">${money(p.refundableAmount)}</span>`,
    ],
    [t(lang, 'dash_pay_commission'), money(p.commission - p.commissionRefunded)],
    [t(lang, 'dash_pay_net'), markup`<span id="net">${money(netAfterRefunds)}</span>`],
    [t(lang, 'dash_pay_chargeback_open'), money(p.chargebackOpenAmount)],
  ])
  const about = facts([
    [t(lang, 'dash_pay_id'), markup`<span class="mono">${p.id}</span>`],
    [t(lang, 'dash_col_transaction'), markup`<span class="mono">${p.transactionId}</span>`],
    [t(lang, 'dash_col_date'), formatDate(p.createdAt, lang, 'datetime')],
    [t(lang, 'dash_col_card'), cardText(p)],
    [t(lang, 'dash_pay_installments'), formatNumber(p.installmentCount, lang)],
    [t(lang, 'dash_pay_3ds'), t(lang, p.threeDSecure ? 'dash_yes' : 'dash_no')],
    [t(lang, 'dash_col_customer'), d.customerEmail ?? p.customerId ?? '—'],
    [t(lang, 'dash_pay_decline'), p.declineCode ?? '—'],
  ])
  const timeline = d.events.length
    ? markup`<ol class="timeline">
        ${d.events.map(
          (e) =>
            markup`<li><span class="mono">${e.type}</span> · ${formatDate(e.at, lang, 'datetime')}${e.resourceId === p.id ? '' : markup` · <span class="mono">${e.resourceId}</span>`}</li>`,
        )}
      </ol>`
    : markup`<p class="muted">${t(lang, 'dash_none')}</p>`
  // Raw event codes and ledger legs are for those who build on the API, not finance staff.
  const technical = ctx.can('developers.keys')
  const internals = technical
    ? section({
        title: t(lang, 'web_technical_details'),
        id: 'technical-heading',
        body: technicalDetails(
          lang,
          markup`<h3>${t(lang, 'dash_pay_timeline')}</h3>
            ${timeline}
            <h3>${t(lang, 'dash_pay_ledger')}</h3>
            ${dataTable({
              caption: t(lang, 'dash_pay_ledger'),
              columns: [
                { label: t(lang, 'dash_col_account') },
                { label: t(lang, 'dash_col_owner') },
                { label: t(lang, 'dash_col_direction') },
                { label: t(lang, 'dash_col_amount'), numeric: true },
              ],
              rows: d.legs.map((l) => [
                markup`<span class="mono">${l.accountType}</span>`,
                `${l.ownerType} ${l.ownerId}`,
                l.direction,
                money(l.amount),
              ]),
              empty: t(lang, 'dash_none'),
            })}`,
          'payment-internals',
        ),
      })
    : ''
  const content = markup`
    ${section({ title: t(lang, 'dash_pay_amounts'), id: 'amounts-heading', body: amounts })}
    ${actionsPanel(ctx, p, {
      ...(problem?.refundAmount === undefined ? {} : { amount: problem.refundAmount }),
      ...(problem ? { error: fieldErrorText(lang, problem.error, 'amount') } : {}),
    })}
    ${section({ title: t(lang, 'dash_pay_details'), id: 'details-heading', body: about })}
    ${acquirerPanel(lang, d)}
    ${section({
      title: t(lang, 'dash_risk_title'),
      id: 'risk-heading',
      body: riskDetails(lang, p.risk, d.riskFacts, d.rules, technical),
    })}
    ${section({
      title: t(lang, 'dash_pay_refunds'),
      id: 'refunds-heading',
      body: dataTable({
        caption: t(lang, 'dash_pay_refunds'),
        id: 'refunds-table',
        columns: [
          { label: t(lang, 'dash_col_date') },
          { label: t(lang, 'dash_col_amount'), numeric: true },
          { label: t(lang, 'dash_col_status') },
          { label: t(lang, 'dash_act_refund_reason') },
        ],
        rows: d.tx.refunds.map((r) => [
          formatDate(r.createdAt, lang, 'datetime'),
          money(r.amount),
          t(lang, `dash_refund_status_${r.status}`),
          r.reason ?? '—',
        ]),
        empty: t(lang, 'dash_none'),
      }),
    })}
    ${section({
      title: t(lang, 'dash_pay_chargebacks'),
      id: 'chargebacks-heading',
      body: dataTable({
        caption: t(lang, 'dash_pay_chargebacks'),
        columns: [
          { label: t(lang, 'dash_col_date') },
          { label: t(lang, 'dash_col_amount'), numeric: true },
          { label: t(lang, 'dash_col_status') },
          { label: t(lang, 'dash_pay_reason_code') },
        ],
        rows: d.tx.chargebacks.map((c) => [
          formatDate(c.receivedAt, lang, 'datetime'),
          money(c.amount),
          t(lang, `dash_cb_status_${c.status}`),
          c.reasonCode,
        ]),
        empty: t(lang, 'dash_none'),
      }),
    })}
    ${section({
      title: t(lang, 'dash_pay_metadata'),
      id: 'metadata-heading',
      body: Object.keys(p.metadata).length
        ? facts(Object.entries(p.metadata))
        : markup`<p class="muted">${t(lang, 'dash_none')}</p>`,
    })}
    ${internals}`
  return renderPage(ctx, {
    heading: t(lang, 'dash_pay_title', { amount: money(p.amount) }),
    section: 'payments',
    headingAside: markup`<a class="button button-secondary" href="${BASE}/payments">${t(lang, 'dash_pay_back')}</a>`,
    content,
    ...(problem
      ? {
          status: problem.error.status,
          flash: { kind: 'error', text: refusalText(lang, problem.error) },
        }
      : {}),
  })
}

function confirmRefundPage(
  ctx: PageContext,
  p: Payment,
  input: { amountMinor: number; reason: string; idempotencyKey: string },
): Promise<FastifyReply> {
  const { lang } = ctx
  const amount = formatMoney(input.amountMinor, lang)
  return renderPage(ctx, {
    heading: t(lang, 'dash_refund_confirm_title'),
    section: 'payments',
    content: markup`<div class="panel form-stack">
      <p>${t(lang, 'dash_refund_confirm_body', { amount, payment: p.id })}</p>
      <form method="post" action="${BASE}/payments/${p.id}/refund" class="actions">
        ${csrfInput(csrfToken(ctx.request, ctx.reply))}
        <input type="hidden" name="amount" value="${liraInput(input.amountMinor, lang)}" />
        <input type="hidden" name="reason" value="${input.reason}" />
        <input type="hidden" name="idempotencyKey" value="${input.idempotencyKey}" />
        <input type="hidden" name="confirm" value="yes" />
        <button type="submit" class="button button-primary">
          ${t(lang, 'dash_refund_confirm_button', { amount })}
        </button>
        <a class="button button-secondary" href="${BASE}/payments/${p.id}">${t(lang, 'dash_cancel')}</a>
      </form>
    </div>`,
  })
}

const IDEMPOTENCY_KEY = /^[0-9a-f-]{36}$/i

// Each action's rule, as the API's route for it (page-rules.ts): capture takes money in, so it
// is KYC-gated as POST /v1/payments/{id}/capture is; void is not (CONTRACT.md "Who may call what").
const ROUTES = {
  capture: pageRoute({ permission: 'payments.capture_void', schema: CaptureBody, kyc: true }),
  void: pageRoute({ permission: 'payments.capture_void', schema: VoidBody }),
  refund: pageRoute({ permission: 'payments.refund', schema: RefundBody }),
}

export function paymentsPages(deps: Deps): FastifyPluginAsync {
  return async (app) => {
    paymentListRoutes(deps, app)

    app.get('/payments/:id', async (request, reply) => {
      const ctx = allow(deps, request, reply, 'read')
      const { id } = request.params as { id: string }
      return detailPage(deps, ctx, id.slice(0, 64))
    })

    const act = async (
      ctx: PageContext,
      id: string,
      action: 'capture' | 'void',
    ): Promise<FastifyReply> => {
      const { merchantId } = ctx.member
      const result = await attempt(async () => {
        return auditedAction(ctx, `payment.${action}`, id, {}, () =>
          action === 'capture'
            ? capturePayment(deps, merchantId, id)
            : voidPayment(deps, merchantId, id, null),
        )
      })
      if (!result.ok) {
        // Another merchant's (or no) payment is the 404 page, as on every page.
        if (result.error.status === 404) throw result.error
        return detailPage(deps, ctx, id, { error: result.error })
      }
      setFlash(
        deps,
        ctx.reply,
        'success',
        action === 'capture' ? 'dash_done_capture' : 'dash_done_void',
      )
      return redirect(ctx.reply, `${BASE}/payments/${id}`)
    }

    app.post('/payments/:id/capture', ROUTES.capture, async (request, reply) => {
      const ctx = permitted(deps, request, reply)
      return act(ctx, (request.params as { id: string }).id.slice(0, 64), 'capture')
    })

    app.post('/payments/:id/void', ROUTES.void, async (request, reply) => {
      const ctx = permitted(deps, request, reply)
      return act(ctx, (request.params as { id: string }).id.slice(0, 64), 'void')
    })

    app.post('/payments/:id/refund', ROUTES.refund, async (request, reply) => {
      const ctx = permitted(deps, request, reply)
      const { merchantId } = ctx.member
      const id = (request.params as { id: string }).id.slice(0, 64)
      const form = formFields(request)
      const amountText = form.text('amount', 20)
      const reason = form.text('reason', 500).trim()
      const key = form.text('idempotencyKey', 36)
      const amountMinor = parseLira(amountText)
      const invalid = (reason: string) =>
        detailPage(deps, ctx, id, {
          error: validationError('amount', reason),
          refundAmount: amountText,
        })
      if (amountMinor === undefined || amountMinor <= 0) {
        return invalid(t(ctx.lang, 'dash_pay_bad_amount'))
      }
      if (!IDEMPOTENCY_KEY.test(key)) return invalid('idempotencyKey: missing')
      const refused = pageInput(request, { amount: amountMinor, ...(reason ? { reason } : {}) })
      if (refused) return detailPage(deps, ctx, id, { error: refused, refundAmount: amountText })
      if (form.text('confirm', 3) !== 'yes') {
        // First step: say exactly what will happen and ask again (a plain second form). A
        // refund the payment cannot take is refused here, at its field, not after confirming.
        const payment = await getPayment(deps, merchantId, id)
        if (amountMinor > payment.refundableAmount) {
          return invalid(
            t(ctx.lang, 'dash_why_refund_over', {
              n1: formatMoney(payment.refundableAmount, ctx.lang),
            }),
          )
        }
        return confirmRefundPage(ctx, payment, { amountMinor, reason, idempotencyKey: key })
      }
      const result = await attempt(() =>
        auditedAction(ctx, 'payment.refund', id, { amount: amountMinor }, () =>
          refundPayment(deps, merchantId, id, {
            amount: amountMinor,
            ...(reason ? { reason } : {}),
            // The key made with the form: a double submit is one refund, as with the API.
            idempotencyKey: key,
          }),
        ),
      )
      if (!result.ok) {
        if (result.error.status === 404) throw result.error
        return detailPage(deps, ctx, id, { error: result.error, refundAmount: amountText })
      }
      const pending = result.value.refund.status === 'pending'
      setFlash(deps, reply, 'success', pending ? 'dash_done_refund_pending' : 'dash_done_refund', {
        amount: formatMoney(amountMinor, ctx.lang),
      })
      return redirect(reply, `${BASE}/payments/${id}`)
    })
  }
}
