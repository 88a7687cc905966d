import type { FastifyInstance } from 'fastify'
import type { Deps } from '../../database.ts'
import { csrfInput, dataTable, field, selectField, section } from '../../platform/web/components.ts'
import { formatDate, formatMoney, istanbulDayKey } from '../../platform/web/format.ts'
import { markup, type SafeHtml } from '../../platform/web/html.ts'
import { t, type Lang } from '../../platform/web/i18n.ts'
import {
  ReconciliationBody,
  getReconciliation,
  listPosAccounts,
  runReconciliation,
  type PosAccount,
  type Reconciliation,
  type ReconciliationItem,
} from '../acquirer/index.ts'
import {
  BASE,
  allow,
  attempt,
  auditedAction,
  csrfToken,
  permitted,
  redirect,
  refusalText,
  renderPage,
  setFlash,
  type PageContext,
} from './dashboard.web.ts'
import { formFields, queryFields } from './forms.ts'
import { hrefWith, keysetPager } from './list-pages.ts'
import { pageInput, pageRoute } from './page-rules.ts'

// /dashboard/pos/reconciliation: one bank day's differences between a POS account's bank and
// us (docs/acquiring.md "Daily reconciliation"), in words and lira, each linked to its payment;
// "check now" runs the same reconciliation as POST /v1/acquirer-reconciliation for one of the
// merchant's own accounts (a platform POS is the platform's to run), under the POS pages'
// manage rule. The audit entry rides the run's transaction (auditedAction); a bank that does
// not answer records nothing but the audit entry.

const PATH = `${BASE}/pos/reconciliation`
const PAGE_SIZE = 50

const ROUTES = {
  run: pageRoute({ permission: 'pos.manage', schema: ReconciliationBody }),
}

function today(deps: Deps): string {
  return istanbulDayKey(deps.clock.now())
}

function money(lang: Lang, amount: number | null | undefined): string {
  return typeof amount === 'number' ? formatMoney(amount, lang) : t(lang, 'dash_rec_unknown')
}

/** One difference as a finance person would say it, both sides' amounts in lira. */
function differenceText(lang: Lang, i: ReconciliationItem): string {
  switch (i.kind) {
    case 'missing_at_bank':
      return t(lang, 'dash_rec_missing_at_bank', { ours: money(lang, i.ours?.authorized) })
    case 'missing_at_us':
      return t(lang, 'dash_rec_missing_at_us', { bank: money(lang, i.bank?.authorized) })
    case 'status_differs': {
      const word = (voided: boolean | undefined) =>
        voided === undefined
          ? t(lang, 'dash_rec_unknown')
          : t(lang, voided ? 'dash_rec_voided' : 'dash_rec_not_voided')
      return t(lang, 'dash_rec_status_differs', {
        ours: word(i.ours?.voided),
        bank: word(i.bank?.voided),
      })
    }
    case 'amount_differs': {
      const f = i.field === 'captured' || i.field === 'refunded' ? i.field : 'authorized'
      return t(lang, 'dash_rec_amount_differs', {
        field: t(lang, `dash_rec_field_${f}`),
        ours: money(lang, i.ours?.[f]),
        bank: money(lang, i.bank?.[f]),
      })
    }
  }
}

function ranText(lang: Lang, r: Reconciliation): string {
  if (!r.ranAt) return t(lang, 'dash_rec_not_run')
  return t(lang, 'dash_rec_ran', {
    at: formatDate(r.ranAt, lang, 'datetime'),
    orders: r.checkedOrders,
    method: t(lang, r.method === 'list' ? 'dash_rec_method_list' : 'dash_rec_method_inquiry'),
  })
}

async function reconciliationPage(deps: Deps, ctx: PageContext) {
  const { lang } = ctx
  const query = queryFields(ctx.request)
  const date = query.optional('date', 20) ?? today(deps)
  const accounts = await listPosAccounts(deps, { merchantId: ctx.member.merchantId })
  const posId = query.optional('pos', 64) ?? accounts[0]?.id
  const cursor = query.optional('after', 64)
  const filters = markup`<form method="get" action="${PATH}" class="panel filters" id="rec-filters">
      ${field({ name: 'date', label: t(lang, 'dash_rec_date'), type: 'date', value: date, max: today(deps), required: true })}
      ${selectField({
        name: 'pos',
        label: t(lang, 'dash_rec_pos'),
        value: posId,
        options: accounts.map((a) => ({ value: a.id, label: a.name })),
      })}
      <div class="actions">
        <button type="submit" class="button button-primary">${t(lang, 'dash_rec_show')}</button>
      </div>
    </form>`
  const back = markup`<a class="button button-secondary" href="${BASE}/pos">${t(lang, 'dash_pos_back')}</a>`
  if (!posId) {
    return renderPage(ctx, {
      heading: t(lang, 'dash_rec_heading'),
      section: 'pos',
      headingAside: back,
      content: markup`<p>${t(lang, 'dash_rec_intro')}</p><p class="muted" id="rec-status">${t(lang, 'dash_rec_no_pos')}</p>`,
    })
  }
  const result = await attempt(() =>
    getReconciliation(deps, ctx.member, {
      date,
      posAccountId: posId,
      limit: PAGE_SIZE,
      ...(cursor ? { after: cursor } : {}),
    }),
  )
  // Another merchant's POS is not there at all: the 404 page, as for /dashboard/pos/{id}.
  if (!result.ok && result.error.status === 404) throw result.error
  const rec = result.ok ? result.value : undefined
  const account = accounts.find((a) => a.id === posId)
  const table = dataTable({
    caption: t(lang, 'dash_rec_table'),
    id: 'reconciliation-table',
    columns: [
      { label: t(lang, 'dash_rec_col_order'), wrap: true },
      { label: t(lang, 'dash_rec_col_difference'), wrap: true },
      { label: t(lang, 'dash_rec_col_found') },
    ],
    rows: (rec?.items ?? []).map((i) => [
      i.paymentId
        ? markup`<a class="mono" href="${BASE}/payments/${i.paymentId}">${i.orderId}</a>`
        : markup`<span class="mono">${i.orderId}</span>`,
      differenceText(lang, i),
      formatDate(i.createdAt, lang, 'datetime'),
    ]),
    empty: t(lang, 'dash_rec_none'),
  })
  return renderPage(ctx, {
    heading: t(lang, 'dash_rec_heading'),
    section: 'pos',
    headingAside: back,
    ...(result.ok
      ? {}
      : {
          status: result.error.status,
          flash: { kind: 'error' as const, text: refusalText(lang, result.error) },
        }),
    content: markup`<p>${t(lang, 'dash_rec_intro')}</p>
      ${filters}
      ${rec ? markup`<p class="muted" id="rec-status">${ranText(lang, rec)}</p>` : ''}
      ${rec ? runPanel(ctx, account, date) : ''}
      ${table}
      ${keysetPager(lang, PATH, { date, pos: posId }, cursor, rec?.nextCursor ?? null)}`,
  })
}

function runPanel(ctx: PageContext, account: PosAccount | undefined, date: string): SafeHtml {
  const { lang } = ctx
  if (!account) return markup``
  if (account.owner !== 'merchant') {
    return markup`<p class="muted">${t(lang, 'dash_rec_run_platform')}</p>`
  }
  if (!ctx.can('pos.manage')) return markup``
  return section({
    title: t(lang, 'dash_pay_actions'),
    id: 'rec-actions-heading',
    body: markup`<form method="post" action="${PATH}" id="rec-run-form">
        ${csrfInput(csrfToken(ctx.request, ctx.reply))}
        <input type="hidden" name="date" value="${date}" />
        <input type="hidden" name="posAccountId" value="${account.id}" />
        <button type="submit" class="button button-primary">${t(lang, 'dash_rec_run')}</button>
        <p class="muted">${t(lang, 'dash_rec_run_hint')}</p>
      </form>`,
  })
}

export function posReconciliationRoutes(app: FastifyInstance, deps: Deps): void {
  app.get('/pos/reconciliation', async (request, reply) =>
    reconciliationPage(deps, allow(deps, request, reply, 'read')),
  )

  app.post('/pos/reconciliation', ROUTES.run, async (request, reply) => {
    const ctx = permitted(deps, request, reply)
    const f = formFields(request)
    const input = { date: f.text('date', 20).trim(), posAccountId: f.text('posAccountId', 64) }
    const back = hrefWith(PATH, { date: input.date, pos: input.posAccountId })
    const result = await attempt(async () => {
      const invalid = pageInput(request, input)
      if (invalid) throw invalid
      return auditedAction(
        ctx,
        'pos_accounts.reconcile',
        input.posAccountId,
        { date: input.date },
        () => runReconciliation(deps, ctx.member, input),
      )
    })
    if (!result.ok) {
      if (result.error.status === 404) throw result.error
      setFlash(deps, reply, 'error', 'dash_pos_field_error')
      return redirect(reply, back)
    }
    if (result.value.bankAnswered) {
      setFlash(deps, reply, 'success', 'dash_rec_done', { count: result.value.items.length })
    } else {
      setFlash(deps, reply, 'error', 'dash_rec_bank_silent')
    }
    return redirect(reply, back)
  })
}
