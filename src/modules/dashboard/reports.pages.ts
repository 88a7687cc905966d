import { Readable } from 'node:stream'
import type { FastifyPluginAsync } from 'fastify'
import type { Deps } from '../../database.ts'
import type { AppError } from '../../platform/errors.ts'
import {
  badge,
  csrfInput,
  dataTable,
  field,
  pager,
  section,
  selectField,
  type BadgeTone,
  type Flash,
} from '../../platform/web/components.ts'
import { formatDate, formatMoney, istanbulDayStart } from '../../platform/web/format.ts'
import { markup } from '../../platform/web/html.ts'
import { t, type MessageKey } from '../../platform/web/i18n.ts'
import {
  createReport,
  listBalanceTransactionsPage,
  listReports,
  openReportDownload,
  type ReportType,
} from '../transactions/index.ts'
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
import { CreateReportBody } from '../transactions/index.ts'
import { pageRoute } from './page-rules.ts'
import { formFields, queryFields } from './forms.ts'

// /dashboard/reports: finance reports (balance summary, payout reconciliation; CSV or PDF)
// built by the transactions module's export machinery, the recent ones with their status and
// download link, and the merchant's balance transactions (docs/reports.md). Everyone who can
// read sees the page and downloads; creating a report needs `reports.manage` (finance, admin,
// owner). The same service functions as POST /v1/reports and GET /v1/balance-transactions.

const PAGE_SIZE = 25
const RECENT_REPORTS = 20
const REPORT_TYPES: readonly ReportType[] = ['balance_summary', 'payout_reconciliation']
const DAY_MS = 86_400_000

const STATUS_TONES: Readonly<Record<string, BadgeTone>> = {
  queued: 'info',
  processing: 'info',
  ready: 'success',
  failed: 'danger',
  expired: 'neutral',
}

interface FormValues {
  type: string
  format: string
  from: string
  to: string
}

function defaultForm(deps: Deps): FormValues {
  // The previous 30 Istanbul days up to today (inclusive), as a finance team closes a month.
  const today = new Date(deps.clock.now().getTime() + 3 * 3_600_000).toISOString().slice(0, 10)
  const monthAgo = new Date(Date.parse(today) - 30 * DAY_MS).toISOString().slice(0, 10)
  return { type: 'balance_summary', format: 'csv', from: monthAgo, to: today }
}

async function reportsPage(
  deps: Deps,
  ctx: PageContext,
  opts: { form?: FormValues; flash?: Flash; after?: string } = {},
) {
  const { lang } = ctx
  const merchantId = ctx.member.merchantId
  const form = opts.form ?? defaultForm(deps)
  const reports = await listReports(deps, merchantId, RECENT_REPORTS)
  const page = await attempt(() =>
    listBalanceTransactionsPage(
      deps,
      { merchantId, submerchantId: null },
      {},
      { limit: PAGE_SIZE, ...(opts.after !== undefined ? { cursor: opts.after } : {}) },
    ),
  )
  // A stale or edited cursor shows the first page rather than an error.
  const txs = page.ok
    ? page.value
    : await listBalanceTransactionsPage(
        deps,
        { merchantId, submerchantId: null },
        {},
        { limit: PAGE_SIZE },
      )

  const createForm = ctx.can('reports.manage')
    ? section({
        title: t(lang, 'dash_reports_create'),
        id: 'report-create',
        body: markup`<form method="post" action="${BASE}/reports" class="form-stack">
          ${csrfInput(csrfToken(ctx.request, ctx.reply))}
          ${selectField({
            name: 'type',
            label: t(lang, 'dash_reports_type'),
            value: form.type,
            options: REPORT_TYPES.map((type) => ({
              value: type,
              label: t(lang, `dash_reports_type_${type}`),
            })),
          })}
          ${field({ name: 'from', type: 'date', label: t(lang, 'dash_reports_from'), value: form.from, required: true })}
          ${field({
            name: 'to',
            type: 'date',
            label: t(lang, 'dash_reports_to'),
            value: form.to,
            hint: t(lang, 'dash_reports_to_hint'),
            required: true,
          })}
          ${selectField({
            name: 'format',
            label: t(lang, 'dash_reports_format'),
            value: form.format,
            options: [
              { value: 'csv', label: 'CSV' },
              { value: 'pdf', label: 'PDF' },
            ],
          })}
          <p><button type="submit" class="button button-primary">${t(lang, 'dash_reports_submit')}</button></p>
        </form>`,
      })
    : markup``

  const recent = section({
    title: t(lang, 'dash_reports_recent'),
    id: 'report-list',
    body: dataTable({
      caption: t(lang, 'dash_reports_recent'),
      empty: t(lang, 'dash_reports_none'),
      columns: [
        { label: t(lang, 'dash_reports_type') },
        { label: t(lang, 'dash_reports_period') },
        { label: t(lang, 'dash_reports_format') },
        { label: t(lang, 'dash_col_status') },
        { label: t(lang, 'dash_col_date') },
        { label: t(lang, 'dash_reports_file') },
      ],
      rows: reports.map((r) => {
        const from = r.filters.from !== undefined ? new Date(r.filters.from) : r.createdAt
        const to = r.filters.to !== undefined ? new Date(r.filters.to) : r.createdAt
        return [
          r.kind === 'statement' ? r.kind : t(lang, `dash_reports_type_${r.kind}`),
          `${formatDate(from, lang, 'datetime')} – ${formatDate(to, lang, 'datetime')}`,
          r.format.toUpperCase(),
          badge(t(lang, `dash_export_status_${r.status}`), STATUS_TONES[r.status] ?? 'neutral'),
          formatDate(r.createdAt, lang, 'datetime'),
          r.status === 'ready'
            ? markup`<a href="${BASE}/reports/${r.id}/download">${t(lang, 'dash_export_download')}<span class="sr-only"> ${r.id}</span></a>`
            : markup`<a href="${BASE}/reports">${t(lang, 'dash_export_refresh')}<span class="sr-only"> ${r.id}</span></a>`,
        ]
      }),
    }),
  })

  const balance = section({
    title: t(lang, 'dash_reports_btx'),
    id: 'balance-transactions',
    body: markup`<p class="muted">${t(lang, 'dash_reports_btx_note')}</p>
      ${dataTable({
        caption: t(lang, 'dash_reports_btx'),
        empty: t(lang, 'dash_reports_btx_none'),
        columns: [
          { label: t(lang, 'dash_col_date') },
          { label: t(lang, 'dash_reports_type') },
          { label: t(lang, 'dash_reports_source') },
          { label: t(lang, 'dash_reports_amount'), numeric: true },
          { label: t(lang, 'dash_reports_fee'), numeric: true },
          { label: t(lang, 'dash_reports_net'), numeric: true },
          { label: t(lang, 'dash_col_status') },
          { label: t(lang, 'dash_reports_available_on') },
        ],
        rows: txs.items.map((b) => [
          formatDate(b.createdAt, lang, 'datetime'),
          t(lang, `dash_btx_type_${b.type}`),
          b.type === 'charge'
            ? markup`<a class="mono" href="${BASE}/payments/${b.sourceId}">${b.sourceId}</a>`
            : markup`<span class="mono">${b.sourceId}</span>`,
          formatMoney(b.amount, lang),
          formatMoney(b.fee, lang),
          formatMoney(b.net, lang),
          badge(
            t(lang, b.status === 'pending' ? 'dash_btx_pending' : 'dash_btx_available'),
            b.status === 'pending' ? 'warning' : 'success',
          ),
          formatDate(b.availableOn, lang, 'date'),
        ]),
      })}
      ${pager({
        lang,
        ...(opts.after !== undefined ? { firstHref: `${BASE}/reports` } : {}),
        ...(txs.nextCursor !== null
          ? { nextHref: `${BASE}/reports?after=${encodeURIComponent(txs.nextCursor)}` }
          : {}),
      })}`,
  })

  return renderPage(ctx, {
    heading: t(lang, 'dash_nav_reports'),
    section: 'reports',
    ...(opts.flash ? { flash: opts.flash } : {}),
    content: markup`${createForm}${recent}${balance}`,
  })
}

function readForm(values: ReturnType<typeof formFields>): FormValues {
  return {
    type: values.text('type', 40),
    format: values.text('format', 8),
    from: values.text('from', 10),
    to: values.text('to', 10),
  }
}

// Each route's rule, as the API's route for the same use case declares it (page-rules.ts).
const ROUTES = {
  create: pageRoute({ permission: 'reports.manage', schema: CreateReportBody }),
}

export function reportsPages(deps: Deps): FastifyPluginAsync {
  return async (app) => {
    app.get('/reports', async (request, reply) => {
      const ctx = allow(deps, request, reply, 'read')
      const after = queryFields(request).optional('after', 2048)
      return reportsPage(deps, ctx, after !== undefined ? { after } : {})
    })

    app.post('/reports', ROUTES.create, async (request, reply) => {
      const ctx = permitted(deps, request, reply)
      const { lang } = ctx
      const form = readForm(formFields(request))
      const from = istanbulDayStart(form.from)
      const toDay = istanbulDayStart(form.to)
      const type = REPORT_TYPES.find((r) => r === form.type)
      const format = form.format === 'pdf' ? 'pdf' : form.format === 'csv' ? 'csv' : undefined
      const refuse = (key: MessageKey) =>
        reportsPage(deps, ctx, { form, flash: { kind: 'error', text: t(lang, key) } })
      if (!type || !format) return refuse('dash_reports_bad_type')
      // `to` is a day, inclusive: the period ends at the start of the next Istanbul day.
      if (!from || !toDay || from.getTime() > toDay.getTime())
        return refuse('dash_reports_bad_period')
      const to = new Date(toDay.getTime() + DAY_MS)
      // Recorded under its merchant: the report's id exists only inside the action.
      const created = await attempt(() =>
        auditedAction(ctx, 'reports.create', null, { type, format }, () =>
          createReport(deps, ctx.member.merchantId, { type, format, from, to }),
        ),
      )
      if (!created.ok) {
        const error: AppError = created.error
        return reportsPage(deps, ctx, {
          form,
          flash: { kind: 'error', text: refusalText(lang, error) },
        })
      }
      setFlash(deps, reply, 'success', 'dash_reports_created')
      return redirect(reply, `${BASE}/reports`)
    })

    app.get('/reports/:id/download', async (request, reply) => {
      const ctx = allow(deps, request, reply, 'read')
      const { id } = request.params as { id: string }
      const file = await openReportDownload(deps, ctx.member.merchantId, id.slice(0, 64))
      return reply
        .type(file.contentType)
        .header('content-length', String(file.byteSize))
        .header('content-disposition', `attachment; filename="${file.fileName}"`)
        .send(Readable.from(file.chunks))
    })
  }
}
