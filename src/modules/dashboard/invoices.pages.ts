import type { FastifyPluginAsync, FastifyReply } from 'fastify'
import type { Deps } from '../../database.ts'
import { validationError, type AppError } from '../../platform/errors.ts'
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
import {
  formatDate,
  formatMoney,
  formatNumber,
  istanbulDayStart,
} from '../../platform/web/format.ts'
import { markup, type SafeHtml } from '../../platform/web/html.ts'
import { t, type Lang } from '../../platform/web/i18n.ts'
import {
  activateInvoice,
  cancelInvoice,
  createInvoice,
  getInvoice,
  invoiceUrl,
  listInvoices,
  merchantInvoicePdf,
  sendInvoice,
  type Invoice,
  type InvoiceStatus,
  type LineItem,
  CreateInvoiceBody,
} from '../invoices/index.ts'
import { listStores } from '../merchants/index.ts'
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
import { formFields, parseLira, queryFields, type FormReader } from './forms.ts'
import { PageActionBody } from './dashboard.schemas.ts'
import { pageInput, pageRoute } from './page-rules.ts'
import { idParam, keysetPager } from './list-pages.ts'

// /dashboard/invoices: the list (status filter, keyset pages), /dashboard/invoices/new: the
// create form with line items, and /dashboard/invoices/{id}: lines, buyer, the public link,
// the PDF and Send / Cancel as the state and the role allow. Everything is the invoices
// module's createInvoice / sendInvoice / activateInvoice / cancelInvoice / merchantInvoicePdf,
// as the API's (send and activate need an approved KYC there, and here). Activate opens the
// public link without an email, for a merchant who shares the link itself.

const PAGE_SIZE = 25
/** Line rows on the create form (blank rows are left out); the form works without script. */
const FORM_LINES = 5
const STATUSES: readonly InvoiceStatus[] = [
  'draft',
  'sent',
  'activated',
  'viewed',
  'paid',
  'expired',
  'cancelled',
]
const TONES: Readonly<Record<InvoiceStatus, BadgeTone>> = {
  draft: 'neutral',
  sent: 'info',
  activated: 'info',
  viewed: 'info',
  paid: 'success',
  expired: 'warning',
  cancelled: 'neutral',
}

function statusBadge(lang: Lang, status: InvoiceStatus): SafeHtml {
  return badge(t(lang, `dash_inv_status_${status}`), TONES[status])
}

async function listPage(deps: Deps, ctx: PageContext) {
  const { lang } = ctx
  const query = queryFields(ctx.request)
  const statusText = query.optional('status', 20)
  const status = STATUSES.find((s) => s === statusText)
  const cursor = query.optional('after', 2048)
  const result = await attempt(() =>
    listInvoices(deps, ctx.member.merchantId, {
      limit: PAGE_SIZE,
      status,
      ...(cursor ? { cursor } : {}),
    }),
  )
  const { items, nextCursor } = result.ok ? result.value : { items: [], nextCursor: null }
  return renderPage(ctx, {
    heading: t(lang, 'dash_nav_invoices'),
    section: 'invoices',
    ...(ctx.can('customers.manage')
      ? {
          headingAside: markup`<a class="button button-primary" href="${BASE}/invoices/new">${t(lang, 'dash_inv_new')}</a>`,
        }
      : {}),
    ...(result.ok
      ? {}
      : {
          status: result.error.status,
          flash: { kind: 'error', text: refusalText(lang, result.error) },
        }),
    content: markup`<form method="get" action="${BASE}/invoices" class="panel">
        ${selectField({
          name: 'status',
          label: t(lang, 'dash_col_status'),
          value: status,
          options: [
            { value: '', label: t(lang, 'dash_pay_all_statuses') },
            ...STATUSES.map((s) => ({ value: s, label: t(lang, `dash_inv_status_${s}`) })),
          ],
        })}
        <div class="actions">
          <button type="submit" class="button button-primary">${t(lang, 'dash_pay_apply')}</button>
        </div>
      </form>
      ${dataTable({
        caption: t(lang, 'dash_inv_table'),
        id: 'invoices-table',
        columns: [
          { label: t(lang, 'dash_col_created') },
          { label: t(lang, 'dash_inv_buyer') },
          { label: t(lang, 'dash_col_amount'), numeric: true },
          { label: t(lang, 'dash_col_status') },
          { label: t(lang, 'dash_inv_due') },
        ],
        rows: items.map((i) => [
          markup`<a href="${BASE}/invoices/${i.id}">${formatDate(i.createdAt, lang, 'date')}</a>`,
          i.buyerName ?? i.buyerEmail ?? '—',
          formatMoney(i.amountMinor, lang),
          statusBadge(lang, i.status),
          i.dueDate ? formatDate(i.dueDate, lang, 'date') : '—',
        ]),
        empty: t(lang, 'dash_none'),
      })}
      ${keysetPager(lang, `${BASE}/invoices`, { status }, cursor, nextCursor)}`,
  })
}

// ---- the create form

interface Draft {
  storeId: string
  buyerEmail: string
  buyerName: string
  dueDate: string
  notes: string
  lines: { name: string; qty: string; price: string }[]
}

// Read with room to spare: the API's schema (pageInput), not a silent cut, refuses what is
// too long.
const TEXT_MAX = 4000

function readDraft(form: FormReader): Draft {
  return {
    storeId: form.text('storeId', 64),
    buyerEmail: form.text('buyerEmail', TEXT_MAX).trim(),
    buyerName: form.text('buyerName', TEXT_MAX).trim(),
    dueDate: form.text('dueDate', 10).trim(),
    notes: form.text('notes', TEXT_MAX).trim(),
    lines: Array.from({ length: FORM_LINES }, (_, i) => ({
      name: form.text(`line${String(i)}Name`, TEXT_MAX).trim(),
      qty: form.text(`line${String(i)}Qty`, 10).trim(),
      price: form.text(`line${String(i)}Price`, 20).trim(),
    })),
  }
}

/** The form's lines → line items in kuruş; a problem names the line (1-based). */
function lineItems(lang: Lang, draft: Draft): LineItem[] | AppError {
  const items: LineItem[] = []
  for (const [i, line] of draft.lines.entries()) {
    if (!line.name && !line.qty && !line.price) continue
    const qty = /^\d{1,6}$/.test(line.qty) ? Number(line.qty) : NaN
    const unit = parseLira(line.price)
    if (!line.name || !(qty >= 1) || unit === undefined || unit < 1) {
      return validationError(`lineItems[${String(i)}]`, t(lang, 'dash_inv_bad_line', { n: i + 1 }))
    }
    items.push({ name: line.name, qty, unitPriceMinor: unit, lineTotalMinor: qty * unit })
  }
  if (items.length === 0) return validationError('lineItems', t(lang, 'dash_inv_no_lines'))
  return items
}

async function newPage(deps: Deps, ctx: PageContext, draft?: Draft, problem?: AppError) {
  const { lang } = ctx
  const stores = await listStores(deps, ctx.member.merchantId)
  const lines = Array.from({ length: FORM_LINES }, (_, i) => {
    const line = draft?.lines[i]
    const n = String(i)
    return markup`<fieldset class="form-grid line-item">
      <legend>${t(lang, 'dash_inv_line', { n: i + 1 })}</legend>
      ${field({ name: `line${n}Name`, label: t(lang, 'dash_inv_line_name'), value: line?.name, maxlength: 200 })}
      ${field({ name: `line${n}Qty`, label: t(lang, 'dash_inv_line_qty'), value: line?.qty ?? (i === 0 ? '1' : ''), inputmode: 'numeric', maxlength: 6 })}
      ${field({ name: `line${n}Price`, label: t(lang, 'dash_inv_line_price'), value: line?.price, inputmode: 'decimal', maxlength: 20 })}
    </fieldset>`
  })
  return renderPage(ctx, {
    heading: t(lang, 'dash_inv_new'),
    section: 'invoices',
    ...(problem
      ? { status: problem.status, flash: { kind: 'error', text: refusalText(lang, problem) } }
      : {}),
    content: markup`<form method="post" action="${BASE}/invoices" class="panel form-stack" id="invoice-form">
      ${csrfInput(csrfToken(ctx.request, ctx.reply))}
      ${selectField({
        name: 'storeId',
        label: t(lang, 'dash_inv_store'),
        value: draft?.storeId,
        options: stores.map((s) => ({ value: s.id, label: s.name })),
      })}
      <div class="form-grid">
        ${field({ name: 'buyerName', label: t(lang, 'dash_inv_buyer_name'), value: draft?.buyerName, maxlength: 200, autocomplete: 'off' })}
        ${field({ name: 'buyerEmail', label: t(lang, 'dash_inv_buyer_email'), type: 'email', value: draft?.buyerEmail, maxlength: 254, autocomplete: 'off', hint: t(lang, 'dash_inv_buyer_email_hint') })}
        ${field({ name: 'dueDate', label: t(lang, 'dash_inv_due'), type: 'date', value: draft?.dueDate })}
      </div>
      ${lines}
      ${field({ name: 'notes', label: t(lang, 'dash_inv_notes'), value: draft?.notes, maxlength: 1000 })}
      <div class="actions">
        <button type="submit" class="button button-primary">${t(lang, 'dash_inv_create')}</button>
        <a class="button button-secondary" href="${BASE}/invoices">${t(lang, 'dash_cancel')}</a>
      </div>
    </form>`,
  })
}

// ---- the invoice's page

function actionsPanel(ctx: PageContext, i: Invoice): SafeHtml {
  const { lang } = ctx
  const token = csrfToken(ctx.request, ctx.reply)
  const buttons: SafeHtml[] = [
    markup`<a class="button button-secondary" href="${BASE}/invoices/${i.id}/pdf">${t(lang, 'dash_inv_pdf')}</a>`,
  ]
  if (ctx.can('customers.manage')) {
    if (i.status === 'draft') {
      buttons.push(
        postButton({
          action: `${BASE}/invoices/${i.id}/send`,
          csrfToken: token,
          label: t(lang, 'dash_inv_send'),
          variant: 'primary',
        }),
        postButton({
          action: `${BASE}/invoices/${i.id}/activate`,
          csrfToken: token,
          label: t(lang, 'dash_inv_activate'),
        }),
      )
    }
    if (!['paid', 'expired', 'cancelled'].includes(i.status)) {
      buttons.push(
        postButton({
          action: `${BASE}/invoices/${i.id}/cancel`,
          csrfToken: token,
          label: t(lang, 'dash_inv_cancel'),
          variant: 'danger',
        }),
      )
    }
  }
  return section({
    title: t(lang, 'dash_pay_actions'),
    id: 'actions-heading',
    body: markup`<div class="actions">${buttons}</div>`,
  })
}

async function detailPage(deps: Deps, ctx: PageContext, id: string, problem?: AppError) {
  const { lang } = ctx
  const i = await getInvoice(deps, ctx.member.merchantId, id)
  const money = (m: number) => formatMoney(m, lang)
  const link = invoiceUrl(deps.config, i.publicHash)
  const content = markup`
    ${section({
      title: t(lang, 'dash_inv_details'),
      id: 'invoice-heading',
      body: facts([
        [t(lang, 'dash_col_status'), statusBadge(lang, i.status)],
        [
          t(lang, 'dash_col_amount'),
          markup`<span id="invoice-amount">${money(i.amountMinor)}</span>`,
        ],
        [t(lang, 'dash_inv_buyer_name'), i.buyerName ?? '—'],
        [t(lang, 'dash_inv_buyer_email'), i.buyerEmail ?? '—'],
        [t(lang, 'dash_inv_due'), i.dueDate ? formatDate(i.dueDate, lang, 'date') : '—'],
        [t(lang, 'dash_col_created'), formatDate(i.createdAt, lang, 'datetime')],
        [t(lang, 'dash_inv_sent'), i.sentAt ? formatDate(i.sentAt, lang, 'datetime') : '—'],
        [t(lang, 'dash_inv_paid'), i.paidAt ? formatDate(i.paidAt, lang, 'datetime') : '—'],
        [
          t(lang, 'dash_inv_link'),
          markup`<a class="mono break" id="invoice-link" href="${link}">${link}</a>`,
        ],
        ...(i.paymentId
          ? [
              [
                t(lang, 'dash_inv_payment'),
                markup`<a class="mono" href="${BASE}/payments/${i.paymentId}">${i.paymentId}</a>`,
              ] as const,
            ]
          : []),
        [t(lang, 'dash_inv_id'), markup`<span class="mono">${i.id}</span>`],
      ]),
    })}
    ${actionsPanel(ctx, i)}
    ${section({
      title: t(lang, 'dash_inv_lines'),
      id: 'lines-heading',
      body: dataTable({
        caption: t(lang, 'dash_inv_lines'),
        id: 'lines-table',
        columns: [
          { label: t(lang, 'dash_inv_line_name') },
          { label: t(lang, 'dash_inv_line_qty'), numeric: true },
          { label: t(lang, 'dash_inv_line_price'), numeric: true },
          { label: t(lang, 'dash_inv_line_total'), numeric: true },
        ],
        rows: i.lineItems.map((l) => [
          l.name,
          formatNumber(l.qty, lang),
          money(l.unitPriceMinor),
          money(l.lineTotalMinor),
        ]),
        empty: t(lang, 'dash_none'),
      }),
    })}
    ${i.notes ? section({ title: t(lang, 'dash_inv_notes'), id: 'notes-heading', body: markup`<p>${i.notes}</p>` }) : ''}`
  return renderPage(ctx, {
    heading: t(lang, 'dash_inv_title', { amount: money(i.amountMinor) }),
    section: 'invoices',
    headingAside: markup`<a class="button button-secondary" href="${BASE}/invoices">${t(lang, 'dash_inv_back')}</a>`,
    content,
    ...(problem
      ? { status: problem.status, flash: { kind: 'error', text: refusalText(lang, problem) } }
      : {}),
  })
}

// Each action's rule, as the API's route for it (page-rules.ts): sending or activating asks the
// buyer to pay, so it is KYC-gated as POST /v1/invoices/{id}/send and /activate are.
const ROUTES = {
  send: pageRoute({ permission: 'customers.manage', schema: PageActionBody, kyc: true }),
  activate: pageRoute({ permission: 'customers.manage', schema: PageActionBody, kyc: true }),
  cancel: pageRoute({ permission: 'customers.manage', schema: PageActionBody }),
}

export function invoicesPages(deps: Deps): FastifyPluginAsync {
  return async (app) => {
    app.get('/invoices', async (request, reply) =>
      listPage(deps, allow(deps, request, reply, 'read')),
    )

    app.get('/invoices/new', async (request, reply) =>
      newPage(deps, allow(deps, request, reply, 'customers.manage')),
    )

    app.post(
      '/invoices',
      { config: { page: { permission: 'customers.manage', schema: CreateInvoiceBody } } },
      async (request, reply) => {
        const ctx = allow(deps, request, reply, 'customers.manage')
        const { merchantId } = ctx.member
        const draft = readDraft(formFields(request))
        const items = lineItems(ctx.lang, draft)
        if (!Array.isArray(items)) return newPage(deps, ctx, draft, items)
        let dueDate: Date | undefined
        if (draft.dueDate) {
          dueDate = istanbulDayStart(draft.dueDate)
          if (!dueDate)
            return newPage(
              deps,
              ctx,
              draft,
              validationError('dueDate', t(ctx.lang, 'dash_pay_bad_date')),
            )
        }
        const input = {
          storeId: draft.storeId,
          currency: 'TRY' as const,
          lineItems: items,
          amountMinor: items.reduce((sum, l) => sum + l.lineTotalMinor, 0),
          ...(draft.buyerEmail ? { buyerEmail: draft.buyerEmail } : {}),
          ...(draft.buyerName ? { buyerName: draft.buyerName } : {}),
          ...(draft.notes ? { notes: draft.notes } : {}),
        }
        // The API's rules for the same input (bidi and control characters, one email, maxima).
        const invalid = pageInput(request, {
          ...input,
          ...(dueDate ? { dueDate: dueDate.toISOString() } : {}),
        })
        if (invalid) return newPage(deps, ctx, draft, invalid)
        // A new invoice is recorded under its store: its id exists only inside the action.
        const result = await attempt(() =>
          auditedAction(ctx, 'invoice.create', input.storeId, { amount: input.amountMinor }, () =>
            createInvoice(deps, merchantId, { ...input, ...(dueDate ? { dueDate } : {}) }),
          ),
        )
        if (!result.ok) {
          // Another merchant's store is the 404 page, as any of its ids.
          if (result.error.status === 404) throw result.error
          return newPage(deps, ctx, draft, result.error)
        }
        setFlash(deps, reply, 'success', 'dash_done_inv_create')
        return redirect(reply, `${BASE}/invoices/${result.value.id}`)
      },
    )

    app.get('/invoices/:id', async (request, reply) =>
      detailPage(deps, allow(deps, request, reply, 'read'), idParam(request)),
    )

    app.get('/invoices/:id/pdf', async (request, reply) => {
      const ctx = allow(deps, request, reply, 'read')
      const { invoiceId, pdf } = await merchantInvoicePdf(
        deps,
        ctx.member.merchantId,
        idParam(request),
      )
      return reply
        .type('application/pdf')
        .header('content-disposition', `attachment; filename="${invoiceId}.pdf"`)
        .header('content-length', String(pdf.length))
        .header('cache-control', 'private, no-store')
        .send(pdf)
    })

    const act = async (
      ctx: PageContext,
      id: string,
      action: 'send' | 'activate' | 'cancel',
    ): Promise<FastifyReply> => {
      const { merchantId } = ctx.member
      // The KYC gate of send and activate is the route's declared rule (page-rules.ts).
      const result = await attempt(() =>
        auditedAction(ctx, `invoice.${action}`, id, {}, async () => {
          if (action === 'cancel') return cancelInvoice(deps, merchantId, id)
          return action === 'send'
            ? sendInvoice(deps, merchantId, id)
            : activateInvoice(deps, merchantId, id)
        }),
      )
      if (!result.ok) {
        if (result.error.status === 404) throw result.error
        return detailPage(deps, ctx, id, result.error)
      }
      const done = {
        send: 'dash_done_inv_send',
        activate: 'dash_done_inv_activate',
        cancel: 'dash_done_inv_cancel',
      } as const
      setFlash(deps, ctx.reply, 'success', done[action])
      return redirect(ctx.reply, `${BASE}/invoices/${id}`)
    }

    for (const action of ['send', 'activate', 'cancel'] as const) {
      app.post(`/invoices/:id/${action}`, ROUTES[action], async (request, reply) =>
        act(permitted(deps, request, reply), idParam(request), action),
      )
    }
  }
}
