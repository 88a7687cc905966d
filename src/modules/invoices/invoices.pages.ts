import type { FastifyPluginAsync } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { Deps } from '../../database.ts'
import { isStateConflict } from '../../platform/errors.ts'
import { markup, type SafeHtml } from '../../platform/web/html.ts'
import { assetRegistry, CONTENT_TYPES } from '../../platform/web/assets.ts'
import {
  htmlContext,
  langHrefs,
  langOf,
  PublicHashParams,
  ReturnQuery,
  sendHtml,
} from '../../platform/web/html-context.ts'
import { wordsWith, type Lang } from '../../platform/web/i18n.ts'
import { formatDate, formatMoney, formatNumber } from '../../platform/web/format.ts'
import { icons, layout } from '../../pages/layout.ts'
import { buyerContext } from '../../pages/status.pages.ts'
import type { RateLimiter } from '../gateway/index.ts'
import type { Invoice } from './invoice-view.ts'
import { payInvoice, viewInvoice, type PublicInvoice } from './public.service.ts'

// The buyer's invoice page, /invoice/{publicHash}: the merchant, the lines, the total and
// the dates, with a Pay button. The button is a plain HTML form posting to
// /invoice/{publicHash}/pay, which makes (or reuses) the invoice's checkout session and
// sends the buyer to the checkout page /s/{sessionId}; the checkout returns here, and the
// page shows the invoice paid. No script of its own: it works without JavaScript. It uses
// the checkout pages' shell and stylesheet (src/pages) plus a small stylesheet of its own;
// same rules as the checkout pages: our own origin only, no inline script or style (CSP),
// HTML error pages, Turkish and English.

const ASSETS = assetRegistry('/invoice-assets/', {
  'invoice.css': {
    file: new URL('assets/invoice.css', import.meta.url),
    contentType: CONTENT_TYPES.css,
  },
})

// This page's words: its own table (invoices.messages.ts, `inv_` keys).
const m = wordsWith('inv_')

function initial(name: string): string {
  return Array.from(name.trim())[0]?.toLocaleUpperCase('tr') ?? '•'
}

const PAYABLE: ReadonlySet<Invoice['status']> = new Set(['sent', 'activated', 'viewed'])

interface PageInput {
  lang: Lang
  langHrefs: Record<Lang, string>
  sandbox: boolean
  publicHash: string
  view: PublicInvoice
  /** The payment status the checkout returned with (?status=…), when back from it. */
  returnedStatus: string | undefined
}

function statusBox(lang: Lang, invoice: Invoice, returnedStatus: string | undefined): SafeHtml {
  if (invoice.status === 'paid') {
    const date = formatDate(invoice.paidAt ?? invoice.createdAt, lang, 'long')
    return markup`<p class="invoice-status invoice-status-paid" id="invoice-status" role="status">
      ${icons.check}<span>${m(lang, 'paid_note', { date })}</span>
    </p>`
  }
  if (invoice.status === 'expired' || invoice.status === 'cancelled') {
    return markup`<p class="invoice-status" id="invoice-status" role="status">
      ${icons.alert}<span
        >${m(lang, invoice.status === 'expired' ? 'expired_note' : 'cancelled_note')}</span
      >
    </p>`
  }
  if (
    returnedStatus === 'failed' ||
    returnedStatus === 'expired' ||
    returnedStatus === 'cancelled'
  ) {
    return markup`<div class="alert" id="invoice-alert" role="alert">
      ${icons.alert}<span>${m(lang, 'failed_note')}</span>
    </div>`
  }
  if (returnedStatus === 'pending' || returnedStatus === 'pending_3ds') {
    return markup`<p class="invoice-status" id="invoice-status" role="status">
      ${icons.clock}<span>${m(lang, 'pending_note')}</span>
    </p>`
  }
  return markup``
}

function linesTable(lang: Lang, invoice: Invoice): SafeHtml {
  const rows = invoice.lineItems.map(
    (l) =>
      markup`<tr>
        <td>${l.name}</td>
        <td>${formatNumber(l.qty, lang)}</td>
        <td>${formatMoney(l.unitPriceMinor, lang)}</td>
        <td>${formatMoney(l.lineTotalMinor, lang)}</td>
      </tr>`,
  )
  return markup`<table class="invoice-lines" id="invoice-lines">
    <caption class="sr-only">
      ${m(lang, 'lines_caption')}
    </caption>
    <thead>
      <tr>
        <th scope="col">${m(lang, 'col_item')}</th>
        <th scope="col">${m(lang, 'col_qty')}</th>
        <th scope="col">${m(lang, 'col_unit')}</th>
        <th scope="col">${m(lang, 'col_total')}</th>
      </tr>
    </thead>
    <tbody>
      ${rows}
    </tbody>
    <tfoot>
      <tr>
        <th scope="row" colspan="3">${m(lang, 'total')}</th>
        <td id="invoice-total">${formatMoney(invoice.amountMinor, lang)}</td>
      </tr>
    </tfoot>
  </table>`
}

function fact(label: string, value: string, id: string): SafeHtml {
  return markup`<div>
    <dt>${label}</dt>
    <dd id="${id}">${value}</dd>
  </div>`
}

export function invoicePage(p: PageInput): string {
  const { lang } = p
  const { invoice, merchantName } = p.view
  const payable = PAYABLE.has(invoice.status)
  const hash = encodeURIComponent(p.publicHash)
  const content = markup`<div class="checkout">
      <section class="summary" aria-labelledby="summary-heading">
        <div class="merchant">
          <span class="merchant-mark" aria-hidden="true">${initial(merchantName)}</span>
          <div class="merchant-text">
            <p class="eyebrow">${m(lang, 'eyebrow')}</p>
            <p class="merchant-name">${merchantName}</p>
          </div>
        </div>
        <h1 id="summary-heading" class="amount-block">
          <span class="amount-label"
            >${m(lang, invoice.status === 'paid' ? 'amount_label_paid' : 'amount_label')}</span
          ><span class="amount" id="invoice-amount">${formatMoney(invoice.amountMinor, lang)}</span>
        </h1>
        <p class="description">${m(lang, 'invoice_no', { id: invoice.id })}</p>
      </section>
      <section class="panel" aria-labelledby="details-heading">
        <h2 id="details-heading" class="panel-title">
          ${icons.card}<span>${m(lang, 'details')}</span>
        </h2>
        ${statusBox(lang, invoice, p.returnedStatus)} ${linesTable(lang, invoice)}
        <dl class="facts">
          ${fact(m(lang, 'status'), m(lang, `status_${invoice.status}`), 'status-value')}
          ${invoice.buyerName ? fact(m(lang, 'buyer'), invoice.buyerName, 'buyer-value') : ''}
          ${invoice.dueDate ? fact(m(lang, 'due_date'), formatDate(invoice.dueDate, lang, 'long'), 'due-value') : ''}
          ${payable && invoice.expiresAt ? fact(m(lang, 'expires_at'), formatDate(invoice.expiresAt, lang, 'long'), 'expires-value') : ''}
        </dl>
        ${invoice.notes ? markup`<p class="invoice-notes">${invoice.notes}</p>` : ''}
        ${
          payable
            ? markup`<form class="invoice-pay-form" method="post" action="/invoice/${hash}/pay">
                <button type="submit" class="primary-button" id="pay-button">
                  ${icons.lock}<span class="button-label">${m(lang, 'pay')}</span>
                </button>
              </form>`
            : ''
        }
        <a class="invoice-pdf-link" href="/v1/public/invoices/${hash}/pdf">${m(lang, 'pdf')}</a>
      </section>
    </div>`
  return layout({
    lang,
    styles: [ASSETS.url('invoice.css')],
    title: m(lang, 'title', { merchant: merchantName }),
    page: 'invoice',
    langHrefs: p.langHrefs,
    sandbox: p.sandbox,
    content,
  })
}

const FORM_BODY_BYTES_MAX = 1024

export interface InvoicePagesOptions {
  /** The per-IP limiter of the public context: the page shares its budget. */
  rateLimiter: RateLimiter
}

/** The invoice page's context: register it on its own (it sets hooks and an error handler). */
export function invoicePagesRoutes(deps: Deps, options: InvoicePagesOptions): FastifyPluginAsync {
  return async (plain) => {
    const app = plain.withTypeProvider<TypeBoxTypeProvider>()
    const context = buyerContext({
      name: 'invoice',
      env: deps.config.env,
      rateLimiter: options.rateLimiter,
      assets: ASSETS,
      // The Pay form posts urlencoded (a plain HTML form); it carries no fields.
      form: { bodyLimit: FORM_BODY_BYTES_MAX, parse: () => ({}) },
      notFound: { title: 'inv_not_found_title', body: 'inv_not_found_body' },
    })
    await app.register(htmlContext, {
      ...context,
      errorPage: (request, reply, error) => {
        // Pay pressed on an invoice that has just been paid, cancelled or expired: the page
        // itself says what became of it.
        const { hash } = (request.params ?? {}) as { hash?: string }
        if (request.method === 'POST' && isStateConflict(error) && hash) {
          return reply
            .code(303)
            .header('location', `/invoice/${encodeURIComponent(hash)}`)
            .send()
        }
        return context.errorPage(request, reply, error)
      },
    })

    app.get(
      '/invoice/:hash',
      { schema: { hide: true, params: PublicHashParams, querystring: ReturnQuery } },
      async (request, reply) => {
        const view = await viewInvoice(deps, request.params.hash)
        return sendHtml(
          reply,
          200,
          invoicePage({
            lang: langOf(request),
            langHrefs: langHrefs(request),
            sandbox: deps.config.env === 'demo',
            publicHash: request.params.hash,
            view,
            returnedStatus: request.query.status,
          }),
        )
      },
    )

    app.post(
      '/invoice/:hash/pay',
      { schema: { hide: true, params: PublicHashParams } },
      async (request, reply) => {
        const session = await payInvoice(deps, request.params.hash)
        // Our own origin: the checkout page is served by this same process.
        return reply.code(303).header('location', `/s/${session.id}`).send()
      },
    )
  }
}
