import { Readable } from 'node:stream'
import type { FastifyInstance } from 'fastify'
import type { Deps } from '../../database.ts'
import {
  badge,
  csrfInput,
  dataTable,
  facts,
  field,
  flashMessage,
  pager,
  selectField,
  type BadgeTone,
  type Flash,
} from '../../platform/web/components.ts'
import {
  formatDate,
  formatMoney,
  formatNumber,
  istanbulDayStart,
} from '../../platform/web/format.ts'
import { markup, type SafeHtml } from '../../platform/web/html.ts'
import { t, type Lang, type MessageKey } from '../../platform/web/i18n.ts'
import { customerEmails, listCustomers } from '../customers/index.ts'
import { PAYMENT_STATUSES, type Payment } from '../payments/index.ts'
import {
  createExport,
  getExport,
  listTransactions,
  openExportDownload,
} from '../transactions/index.ts'
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
  type PageContext,
} from './dashboard.web.ts'
import { CreateExportBody } from '../transactions/index.ts'
import { pageRoute } from './page-rules.ts'
import { formFields, parseLira, queryFields } from './forms.ts'

// /dashboard/payments, the list: filters, one search box, keyset pages, and the CSV export
// through the transactions module's export machinery (its page and download). The payment's
// own page is payments.pages.ts, which registers these routes with its own.

const PAGE_SIZE = 25
type PaymentStatus = Payment['status']

const STATUS_TONES: Readonly<Record<PaymentStatus, BadgeTone>> = {
  pending: 'warning',
  pending_3ds: 'warning',
  authorized: 'info',
  partially_captured: 'info',
  captured: 'success',
  voided: 'neutral',
  failed: 'danger',
  refunded: 'neutral',
}

/**
 * The status a reader sees. The API's status stays `captured` until every lira is refunded;
 * finance staff need to see a partial refund at a glance, so a captured payment with a
 * completed refund reads "Kısmen iade edildi".
 */
export function statusBadge(
  lang: Lang,
  p: { status: PaymentStatus; refundCompletedAmount: number },
): SafeHtml {
  if ((p.status === 'captured' || p.status === 'partially_captured') && p.refundCompletedAmount > 0)
    return badge(t(lang, 'dash_pay_status_partially_refunded'), 'warning')
  return badge(t(lang, `dash_pay_status_${p.status}`), STATUS_TONES[p.status])
}

/** The amount cell of a list: the amount, and what of it was refunded. */
export function amountCell(
  lang: Lang,
  p: { amount: number; refundCompletedAmount: number },
): SafeHtml | string {
  if (p.refundCompletedAmount === 0) return formatMoney(p.amount, lang)
  return markup`${formatMoney(p.amount, lang)}<span class="cell-sub"
      >${t(lang, 'dash_pay_refunded_sub', { amount: formatMoney(p.refundCompletedAmount, lang) })}</span
    >`
}

export function cardText(p: { cardBrand: string | null; cardMask: string | null }): string {
  if (!p.cardMask) return '—'
  return `${p.cardBrand ?? ''} •••• ${p.cardMask.slice(-4)}`.trim()
}

export interface ListFilters {
  q?: string
  status?: PaymentStatus
  from?: string
  to?: string
  min?: string
  max?: string
}

interface ParsedFilters {
  raw: ListFilters
  /** Filters for the transactions list (dates and amounts parsed), or why they are not. */
  search:
    | { ok: true; filters: Record<string, unknown> & { q?: string; customerId?: string } }
    | { ok: false; problem: MessageKey }
  /** The search text matched no customer email: no payment can match. */
  nothingCanMatch: boolean
}

function readFilters(source: ReturnType<typeof queryFields>): ListFilters {
  const out: ListFilters = {}
  for (const [name, max] of [
    ['q', 200],
    ['from', 10],
    ['to', 10],
    ['min', 20],
    ['max', 20],
  ] as const) {
    const value = source.optional(name, max)
    if (value !== undefined) out[name] = value
  }
  const status = source.optional('status', 20)
  if (status && (PAYMENT_STATUSES as readonly string[]).includes(status)) {
    out.status = status as PaymentStatus
  }
  return out
}

/** The page's filters → the read model's: days in Turkey's time, amounts in kuruş. */
async function parseFilters(deps: Deps, merchantId: string, raw: ListFilters) {
  const filters: Record<string, unknown> & { q?: string; customerId?: string } = {}
  let nothingCanMatch = false
  const fail = (problem: MessageKey): ParsedFilters => ({
    raw,
    search: { ok: false, problem },
    nothingCanMatch: false,
  })
  if (raw.status) filters['status'] = raw.status
  if (raw.from) {
    const from = istanbulDayStart(raw.from)
    if (!from) return fail('dash_pay_bad_date')
    filters['from'] = from
  }
  if (raw.to) {
    const start = istanbulDayStart(raw.to)
    if (!start) return fail('dash_pay_bad_date')
    // The whole "to" day counts: up to the start of the next one.
    filters['to'] = new Date(start.getTime() + 24 * 3600_000)
  }
  for (const [name, key] of [
    ['min', 'amountMin'],
    ['max', 'amountMax'],
  ] as const) {
    const text = raw[name]
    if (text === undefined) continue
    const minor = parseLira(text)
    if (minor === undefined) return fail('dash_pay_bad_amount')
    filters[key] = minor
  }
  const q = raw.q?.trim()
  if (q) {
    if (q.includes('@')) {
      // A customer's email: the customers module knows who that is.
      const found = await listCustomers(deps, merchantId, { email: q, limit: 1 })
      const customer = found.items[0]
      if (customer) filters.customerId = customer.id
      else nothingCanMatch = true
    } else {
      filters.q = q
    }
  }
  return { raw, search: { ok: true, filters }, nothingCanMatch } satisfies ParsedFilters
}

function queryString(raw: ListFilters, extra: Record<string, string> = {}): string {
  const params = new URLSearchParams()
  for (const [k, v] of Object.entries({ ...raw, ...extra })) {
    if (typeof v === 'string' && v !== '') params.set(k, v)
  }
  const text = params.toString()
  return text ? `?${text}` : ''
}

function filterForm(lang: Lang, raw: ListFilters): SafeHtml {
  // Without script: a plain GET. With htmx (from our origin): the same GET, and only the
  // results block is swapped in place (the page's URL follows, so it can be shared).
  return markup`<form
    method="get"
    action="${BASE}/payments"
    class="panel"
    role="search"
    hx-get="${BASE}/payments"
    hx-target="#payments-results"
    hx-select="#payments-results"
    hx-swap="outerHTML"
    hx-push-url="true"
  >
    <div class="form-grid">
      ${field({
        name: 'q',
        label: t(lang, 'dash_pay_search'),
        type: 'search',
        value: raw.q,
        hint: t(lang, 'dash_pay_search_hint'),
        maxlength: 200,
      })}
      ${selectField({
        name: 'status',
        label: t(lang, 'dash_col_status'),
        value: raw.status,
        options: [
          { value: '', label: t(lang, 'dash_pay_all_statuses') },
          ...PAYMENT_STATUSES.map((s) => ({ value: s, label: t(lang, `dash_pay_status_${s}`) })),
        ],
      })}
      ${field({ name: 'from', label: t(lang, 'dash_pay_from'), type: 'date', value: raw.from })}
      ${field({ name: 'to', label: t(lang, 'dash_pay_to'), type: 'date', value: raw.to })}
      ${field({
        name: 'min',
        label: t(lang, 'dash_pay_min'),
        value: raw.min,
        inputmode: 'decimal',
        maxlength: 20,
      })}
      ${field({
        name: 'max',
        label: t(lang, 'dash_pay_max'),
        value: raw.max,
        inputmode: 'decimal',
        maxlength: 20,
      })}
    </div>
    <div class="actions">
      <button type="submit" class="button button-primary">${t(lang, 'dash_pay_apply')}</button>
      <a class="button button-secondary" href="${BASE}/payments">${t(lang, 'dash_pay_clear')}</a>
    </div>
  </form>`
}

function exportForm(ctx: PageContext, raw: ListFilters): SafeHtml {
  const hidden = Object.entries(raw).map(
    ([k, v]) => markup`<input type="hidden" name="${k}" value="${String(v)}" />`,
  )
  return markup`<form method="post" action="${BASE}/payments/export" class="inline-form">
    ${csrfInput(csrfToken(ctx.request, ctx.reply))}${hidden}
    <button type="submit" class="button button-secondary">${t(ctx.lang, 'dash_pay_export')}</button>
  </form>`
}

async function listPage(deps: Deps, ctx: PageContext, raw: ListFilters, cursor?: string) {
  const { lang } = ctx
  const parsed = await parseFilters(deps, ctx.member.merchantId, raw)
  let flash: Flash | undefined
  let items: Awaited<ReturnType<typeof listTransactions>>['items'] = []
  let nextCursor: string | null = null
  if (!parsed.search.ok) {
    flash = { kind: 'error', text: t(lang, parsed.search.problem) }
  } else if (!parsed.nothingCanMatch) {
    const result = await attempt(() =>
      listTransactions(deps, ctx.member.merchantId, parsed.search.ok ? parsed.search.filters : {}, {
        limit: PAGE_SIZE,
        ...(cursor ? { cursor } : {}),
      }),
    )
    if (result.ok) ({ items, nextCursor } = result.value)
    else flash = { kind: 'error', text: refusalText(lang, result.error) }
  }
  const emails = await customerEmails(
    deps,
    ctx.member.merchantId,
    items.flatMap((p) => (p.customerId ? [p.customerId] : [])),
  )
  const table = dataTable({
    caption: t(lang, 'dash_pay_table'),
    id: 'payments-table',
    columns: [
      { label: t(lang, 'dash_col_date') },
      { label: t(lang, 'dash_col_amount'), numeric: true },
      { label: t(lang, 'dash_col_status') },
      { label: t(lang, 'dash_col_card') },
      { label: t(lang, 'dash_col_customer'), wrap: true },
      { label: t(lang, 'dash_col_transaction') },
    ],
    rows: items.map((p) => [
      markup`<a href="${BASE}/payments/${p.id}">${formatDate(p.createdAt, lang, 'datetime')}</a>`,
      amountCell(lang, p),
      statusBadge(lang, p),
      cardText(p),
      (p.customerId && emails.get(p.customerId)) ?? p.customerId ?? '—',
      markup`<span class="mono">${p.transactionId}</span>`,
    ]),
    empty: t(lang, 'dash_pay_none'),
  })
  const filtered = Object.keys(raw).length > 0
  return renderPage(ctx, {
    heading: t(lang, 'dash_nav_payments'),
    section: 'payments',
    content: markup`${filterForm(lang, raw)}
      <div id="payments-results">
        ${flashMessage(flash)}
        <div class="actions results-head">${exportForm(ctx, raw)}</div>
        ${table}
        ${pager({
          lang,
          ...(cursor ? { firstHref: `${BASE}/payments${queryString(raw)}` } : {}),
          ...(nextCursor
            ? { nextHref: `${BASE}/payments${queryString(raw, { after: nextCursor })}` }
            : {}),
        })}
        ${filtered ? '' : markup`<p class="muted">${t(lang, 'dash_pay_hint')}</p>`}
      </div>`,
  })
}

// Each route's rule, as the API's route for the same use case declares it (page-rules.ts).
const ROUTES = {
  export: pageRoute({ permission: 'read', schema: CreateExportBody }),
}

/** The list's routes, registered by `paymentsPages` (payments.pages.ts). */
export function paymentListRoutes(deps: Deps, app: FastifyInstance): void {
  app.get('/payments', async (request, reply) => {
    const ctx = allow(deps, request, reply, 'read')
    const query = queryFields(request)
    return listPage(deps, ctx, readFilters(query), query.optional('after', 2048))
  })

  app.post('/payments/export', ROUTES.export, async (request, reply) => {
    const ctx = permitted(deps, request, reply)
    const raw = readFilters(formFields(request))
    const parsed = await parseFilters(deps, ctx.member.merchantId, raw)
    if (!parsed.search.ok) return listPage(deps, ctx, raw)
    const f = parsed.search.filters
    const filters = {
      ...(raw.status ? { status: raw.status } : {}),
      ...(f['from'] instanceof Date ? { from: f['from'].toISOString() } : {}),
      ...(f['to'] instanceof Date ? { to: f['to'].toISOString() } : {}),
      ...(typeof f['amountMin'] === 'number' ? { amountMin: f['amountMin'] } : {}),
      ...(typeof f['amountMax'] === 'number' ? { amountMax: f['amountMax'] } : {}),
      ...(f.q !== undefined ? { q: f.q } : {}),
      // An email no customer has: a customer id nothing matches keeps the export empty.
      ...(f.customerId !== undefined
        ? { customerId: f.customerId }
        : parsed.nothingCanMatch
          ? { customerId: 'cus_none' }
          : {}),
    }
    // Recorded under its merchant: the export's id exists only inside the action.
    const created = await auditedAction(ctx, 'payments.export', null, { format: 'csv' }, () =>
      createExport(deps, ctx.member.merchantId, { format: 'csv', filters }),
    )
    return redirect(reply, `${BASE}/payments/exports/${created.id}`)
  })

  app.get('/payments/exports/:id', async (request, reply) => {
    const ctx = allow(deps, request, reply, 'read')
    const { lang } = ctx
    const { id } = request.params as { id: string }
    const exp = await getExport(deps, ctx.member.merchantId, id.slice(0, 64))
    const ready = exp.status === 'ready'
    return renderPage(ctx, {
      heading: t(lang, 'dash_export_title'),
      section: 'payments',
      content: markup`<div class="panel form-stack">
          ${facts([
            [t(lang, 'dash_col_status'), t(lang, `dash_export_status_${exp.status}`)],
            [t(lang, 'dash_export_rows'), formatNumber(exp.rowCount, lang)],
            [t(lang, 'dash_col_date'), formatDate(exp.createdAt, lang, 'datetime')],
          ])}
          <p>
            ${
              ready
                ? markup`<a class="button button-primary" href="${BASE}/payments/exports/${exp.id}/download">${t(lang, 'dash_export_download')}</a>`
                : markup`<a class="button button-secondary" href="${BASE}/payments/exports/${exp.id}">${t(lang, 'dash_export_refresh')}</a>`
            }
          </p>
          <p class="muted">${t(lang, 'dash_export_note')}</p>
        </div>`,
    })
  })

  app.get('/payments/exports/:id/download', async (request, reply) => {
    const ctx = allow(deps, request, reply, 'read')
    const { id } = request.params as { id: string }
    const file = await openExportDownload(deps, ctx.member.merchantId, id.slice(0, 64))
    return reply
      .type(file.contentType)
      .header('content-length', String(file.byteSize))
      .header('content-disposition', `attachment; filename="${file.fileName}"`)
      .send(Readable.from(file.chunks))
  })
}
