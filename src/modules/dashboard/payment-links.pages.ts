import type { FastifyPluginAsync } from 'fastify'
import type { Deps } from '../../database.ts'
import { validationError, type AppError } from '../../platform/errors.ts'
import {
  badge,
  csrfInput,
  dataTable,
  facts,
  field,
  pager,
  postButton,
  section,
  selectField,
  type BadgeTone,
} from '../../platform/web/components.ts'
import { formatDate, formatMoney, formatNumber } from '../../platform/web/format.ts'
import { markup, type SafeHtml } from '../../platform/web/html.ts'
import { t, type Lang } from '../../platform/web/i18n.ts'
import { listStores } from '../merchants/index.ts'
import {
  CreateLinkBody,
  createPaymentLink,
  deactivatePaymentLink,
  getPaymentLink,
  listPaymentLinks,
  type LinkStatus,
  type PaymentLink,
} from '../payment-links/index.ts'
import {
  BASE,
  allow,
  attempt,
  permitted,
  csrfToken,
  redirect,
  refusalText,
  renderPage,
  setFlash,
  type PageContext,
  auditedAction,
} from './dashboard.web.ts'
import { PageActionBody } from './dashboard.schemas.ts'
import { formFields, parseLira, queryFields } from './forms.ts'
import { pageInput, pageRoute } from './page-rules.ts'

// /dashboard/payment-links: the list (keyset pages), /new (the create form), /{id} (the
// link's facts, its URL and QR code, the payments made through it) and the deactivate
// action. The same service functions as the API (payment-links' createPaymentLink,
// deactivatePaymentLink); every change writes an audit entry.

const PAGE_SIZE = 25
const SECTION = 'payment-links'

const STATUS_TONES: Readonly<Record<LinkStatus, BadgeTone>> = {
  active: 'success',
  deactivated: 'neutral',
  expired: 'warning',
  completed: 'info',
}

function statusBadge(lang: Lang, status: LinkStatus): SafeHtml {
  return badge(t(lang, `dash_plink_status_${status}`), STATUS_TONES[status])
}

function countText(lang: Lang, l: PaymentLink): string {
  return l.maxPayments === null
    ? formatNumber(l.paymentsCount, lang)
    : `${formatNumber(l.paymentsCount, lang)} / ${formatNumber(l.maxPayments, lang)}`
}

async function listPage(deps: Deps, ctx: PageContext, after: string | undefined) {
  const { lang } = ctx
  const page = await listPaymentLinks(deps, ctx.member.merchantId, {
    limit: PAGE_SIZE,
    ...(after ? { cursor: after } : {}),
  })
  const rows = page.items.map((l) => [
    markup`<a href="${BASE}/payment-links/${l.id}">${l.description}</a>`,
    formatMoney(l.amount, lang),
    statusBadge(lang, l.status),
    countText(lang, l),
    formatDate(l.createdAt, lang),
  ])
  const table = dataTable({
    caption: t(lang, 'dash_plink_list_caption'),
    columns: [
      { label: t(lang, 'dash_plink_col_description') },
      { label: t(lang, 'dash_col_amount'), numeric: true },
      { label: t(lang, 'dash_col_status') },
      { label: t(lang, 'dash_plink_col_payments'), numeric: true },
      { label: t(lang, 'dash_plink_col_created') },
    ],
    rows,
    empty: t(lang, 'dash_plink_empty'),
    id: 'links-table',
  })
  const create = ctx.can('payment_links.manage')
    ? markup`<p><a class="button button-primary" href="${BASE}/payment-links/new" id="new-link">${t(lang, 'dash_plink_new')}</a></p>`
    : ''
  const next = page.nextCursor
    ? `${BASE}/payment-links?after=${encodeURIComponent(page.nextCursor)}`
    : undefined
  return renderPage(ctx, {
    heading: t(lang, 'dash_nav_payment_links'),
    section: SECTION,
    content: markup`${create}${table}${pager({
      lang,
      ...(after ? { firstHref: `${BASE}/payment-links` } : {}),
      ...(next ? { nextHref: next } : {}),
    })}`,
  })
}

interface CreateForm {
  storeId: string
  amount: string
  description: string
  maxPayments: string
  expiresAt: string
  installments: boolean
  collectEmail: boolean
  collectPhone: boolean
  collectName: boolean
}

const EMPTY_FORM: CreateForm = {
  storeId: '',
  amount: '',
  description: '',
  maxPayments: '',
  expiresAt: '',
  installments: false,
  collectEmail: false,
  collectPhone: false,
  collectName: false,
}

function checkbox(name: string, label: string, checked: boolean): SafeHtml {
  const id = `f-${name}`
  return markup`<div class="field field-check">
    <input type="checkbox" id="${id}" name="${name}" value="1" ${checked ? markup`checked` : ''} />
    <label for="${id}">${label}</label>
  </div>`
}

async function newPage(
  deps: Deps,
  ctx: PageContext,
  form: CreateForm,
  problem?: { error: AppError; fields: ReadonlySet<string> },
) {
  const { lang } = ctx
  const stores = await listStores(deps, ctx.member.merchantId)
  // `error` only when the field was refused (the kit's props are exact optional).
  const err = (name: string) =>
    problem?.fields.has(name) ? { error: t(lang, 'dash_plink_field_error') } : {}
  const content = markup`<form method="post" action="${BASE}/payment-links" class="form-stack" id="link-form">
    ${csrfInput(csrfToken(ctx.request, ctx.reply))}
    ${selectField({
      name: 'storeId',
      label: t(lang, 'dash_plink_store'),
      options: stores.map((s) => ({ value: s.id, label: s.name })),
      value: form.storeId,
    })}
    ${field({ name: 'description', label: t(lang, 'dash_plink_col_description'), value: form.description, required: true, maxlength: 500, ...err('description') })}
    ${field({ name: 'amount', label: t(lang, 'dash_plink_amount'), value: form.amount, inputmode: 'decimal', required: true, maxlength: 20, hint: t(lang, 'dash_plink_amount_hint'), ...err('amount') })}
    ${field({ name: 'maxPayments', label: t(lang, 'dash_plink_max_payments'), value: form.maxPayments, type: 'number', min: 1, hint: t(lang, 'dash_plink_optional'), ...err('maxPayments') })}
    ${field({ name: 'expiresAt', label: t(lang, 'dash_plink_expires_at'), value: form.expiresAt, type: 'date', hint: t(lang, 'dash_plink_optional'), ...err('expiresAt') })}
    ${checkbox('installments', t(lang, 'dash_plink_installments'), form.installments)}
    <fieldset class="field">
      <legend>${t(lang, 'dash_plink_collect')}</legend>
      ${checkbox('collectName', t(lang, 'dash_plink_collect_name'), form.collectName)}
      ${checkbox('collectEmail', t(lang, 'dash_plink_collect_email'), form.collectEmail)}
      ${checkbox('collectPhone', t(lang, 'dash_plink_collect_phone'), form.collectPhone)}
    </fieldset>
    <button type="submit" class="button button-primary">${t(lang, 'dash_plink_create')}</button>
  </form>`
  return renderPage(ctx, {
    heading: t(lang, 'dash_plink_new'),
    section: SECTION,
    content,
    ...(problem
      ? { status: 400, flash: { kind: 'error' as const, text: refusalText(lang, problem.error) } }
      : {}),
  })
}

async function detailPage(deps: Deps, ctx: PageContext, id: string) {
  const { lang } = ctx
  const l = await getPaymentLink(deps, ctx.member.merchantId, id)
  const about = facts([
    [t(lang, 'dash_col_status'), statusBadge(lang, l.status)],
    [t(lang, 'dash_col_amount'), formatMoney(l.amount, lang)],
    [t(lang, 'dash_plink_col_payments'), countText(lang, l)],
    [t(lang, 'dash_plink_url'), markup`<a class="mono" id="link-url" href="${l.url}">${l.url}</a>`],
    [t(lang, 'dash_plink_id'), markup`<span class="mono">${l.id}</span>`],
    [
      t(lang, 'dash_plink_expires_at'),
      l.expiresAt ? formatDate(l.expiresAt, lang) : t(lang, 'dash_plink_never'),
    ],
    [t(lang, 'dash_plink_col_created'), formatDate(l.createdAt, lang)],
  ])
  const metadata = Object.entries(l.metadata)
  const actions =
    l.status === 'active' && ctx.can('payment_links.manage')
      ? section({
          title: t(lang, 'dash_pay_actions'),
          id: 'actions-heading',
          body: postButton({
            action: `${BASE}/payment-links/${l.id}/deactivate`,
            csrfToken: csrfToken(ctx.request, ctx.reply),
            label: t(lang, 'dash_plink_deactivate'),
            variant: 'danger',
          }),
        })
      : ''
  const content = markup`${section({ title: l.description, id: 'link-heading', body: about })}
    ${section({
      title: t(lang, 'dash_plink_qr'),
      id: 'qr-heading',
      body: markup`<img src="/l/${l.publicHash}/qr.svg" width="160" height="160" alt="${t(lang, 'dash_plink_qr_alt')}" />`,
    })}
    ${
      metadata.length
        ? section({
            title: t(lang, 'dash_plink_metadata'),
            id: 'metadata-heading',
            body: facts(metadata.map(([k, v]) => [k, v] as const)),
          })
        : ''
    }
    ${actions}`
  return renderPage(ctx, { heading: t(lang, 'dash_plink_detail'), section: SECTION, content })
}

/** The create form's fields, as typed. */
function readForm(request: Parameters<typeof formFields>[0]): CreateForm {
  const f = formFields(request)
  return {
    storeId: f.text('storeId', 64),
    amount: f.text('amount', 20),
    // Room to spare: the API's schema (pageInput), not a silent cut, refuses what is too long.
    description: f.text('description', 4000),
    maxPayments: f.text('maxPayments', 10),
    expiresAt: f.text('expiresAt', 10),
    installments: f.text('installments', 1) === '1',
    collectEmail: f.text('collectEmail', 1) === '1',
    collectPhone: f.text('collectPhone', 1) === '1',
    collectName: f.text('collectName', 1) === '1',
  }
}

// Each route's rule, as the API's route for the same use case declares it (page-rules.ts).
const ROUTES = {
  deactivate: pageRoute({ permission: 'payment_links.manage', schema: PageActionBody }),
}

export function paymentLinksPages(deps: Deps): FastifyPluginAsync {
  return async (app) => {
    app.get('/payment-links', async (request, reply) => {
      const ctx = allow(deps, request, reply, 'read')
      return listPage(deps, ctx, queryFields(request).optional('after', 2048))
    })

    app.get('/payment-links/new', async (request, reply) => {
      const ctx = allow(deps, request, reply, 'payment_links.manage')
      return newPage(deps, ctx, EMPTY_FORM)
    })

    app.post(
      '/payment-links',
      { config: { page: { permission: 'payment_links.manage', schema: CreateLinkBody } } },
      async (request, reply) => {
        const ctx = allow(deps, request, reply, 'payment_links.manage')
        const form = readForm(request)
        const amount = parseLira(form.amount)
        const max = form.maxPayments.trim() === '' ? undefined : Number(form.maxPayments)
        const fields = new Set<string>()
        if (amount === undefined) fields.add('amount')
        if (max !== undefined && !(Number.isInteger(max) && max >= 1 && max <= 1_000_000)) {
          fields.add('maxPayments')
        }
        if (form.description.trim() === '') fields.add('description')
        // A date: the link stays usable through that day (Istanbul), so it ends at its midnight.
        const expiresAt = /^\d{4}-\d{2}-\d{2}$/.test(form.expiresAt)
          ? new Date(`${form.expiresAt}T23:59:59+03:00`)
          : undefined
        if (form.expiresAt !== '' && expiresAt === undefined) fields.add('expiresAt')
        const input = {
          storeId: form.storeId,
          amount: amount ?? 0,
          description: form.description.trim(),
          installments: form.installments,
          collect: { email: form.collectEmail, phone: form.collectPhone, name: form.collectName },
        }
        const result = await attempt(async () => {
          if (fields.size > 0) throw validationError([...fields][0] ?? 'form', 'invalid')
          // The API's rules for the same input (bidi and control characters, maxima).
          const invalid = pageInput(request, {
            ...input,
            ...(max === undefined ? {} : { maxPayments: max }),
            ...(expiresAt ? { expiresAt: expiresAt.toISOString() } : {}),
          })
          if (invalid) throw invalid
          // A new link is recorded under its store: its id exists only inside the action.
          return auditedAction(
            ctx,
            'payment_links.create',
            input.storeId,
            { amount: input.amount },
            () =>
              createPaymentLink(deps, ctx.member.merchantId, {
                ...input,
                maxPayments: max,
                expiresAt,
              }),
          )
        })
        if (!result.ok) {
          for (const d of result.error.details ?? []) fields.add(d.field)
          return newPage(deps, ctx, form, { error: result.error, fields })
        }
        setFlash(deps, reply, 'success', 'dash_plink_done_create')
        return redirect(reply, `${BASE}/payment-links/${result.value.id}`)
      },
    )

    app.get('/payment-links/:id', async (request, reply) => {
      const ctx = allow(deps, request, reply, 'read')
      return detailPage(deps, ctx, (request.params as { id: string }).id.slice(0, 64))
    })

    app.post('/payment-links/:id/deactivate', ROUTES.deactivate, async (request, reply) => {
      const ctx = permitted(deps, request, reply)
      const id = (request.params as { id: string }).id.slice(0, 64)
      const link = await auditedAction(ctx, 'payment_links.deactivate', id, undefined, () =>
        deactivatePaymentLink(deps, ctx.member.merchantId, id),
      )
      setFlash(deps, reply, 'success', 'dash_plink_done_deactivate')
      return redirect(reply, `${BASE}/payment-links/${link.id}`)
    })
  }
}
