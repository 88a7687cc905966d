import type { FastifyPluginAsync, FastifyReply } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { Deps } from '../../database.ts'
import { authOf } from '../../platform/http/auth.ts'
import { answerOnce, recordWith } from '../../platform/http/idempotent-answer.ts'
import { ErrorEnvelope, errorResponses, isoZ } from '../../platform/http/schemas.ts'
import { invoiceUrl, type Invoice } from './invoice-view.ts'
import {
  ActivateResponse,
  CancelResponse,
  CreateInvoiceBody,
  EmptyBody,
  HashParams,
  InvoiceList,
  InvoiceListQuery,
  InvoiceParams,
  InvoiceSchema,
  PaySession,
  PdfResponse,
  PublicInvoiceView,
  SendResponse,
} from './invoices.schemas.ts'
import {
  activateInvoice,
  cancelInvoice,
  createInvoice,
  getInvoice,
  listInvoices,
  sendInvoice,
} from './invoices.service.ts'
import { merchantInvoicePdf, payInvoice, publicInvoicePdf, viewInvoice } from './public.service.ts'

const tags = ['invoices']

function invoiceJson(deps: Deps, i: Invoice) {
  return {
    id: i.id,
    merchantId: i.merchantId,
    storeId: i.storeId,
    customerId: i.customerId,
    publicHash: i.publicHash,
    url: invoiceUrl(deps.config, i.publicHash),
    status: i.status,
    amountMinor: i.amountMinor,
    currency: i.currency,
    lineItems: i.lineItems,
    buyerEmail: i.buyerEmail,
    buyerName: i.buyerName,
    dueDate: isoZ(i.dueDate),
    expiresAt: isoZ(i.expiresAt),
    notes: i.notes,
    metadata: i.metadata,
    paymentId: i.paymentId,
    subscriptionId: i.subscriptionId,
    cycleNumber: i.cycleNumber,
    createdAt: isoZ(i.createdAt),
    sentAt: isoZ(i.sentAt),
    activatedAt: isoZ(i.activatedAt),
    viewedAt: isoZ(i.viewedAt),
    paidAt: isoZ(i.paidAt),
    expiredAt: isoZ(i.expiredAt),
    cancelledAt: isoZ(i.cancelledAt),
  }
}

function dateOrUndefined(value: string | undefined): Date | undefined {
  return value === undefined ? undefined : new Date(value)
}

function sendPdf(reply: FastifyReply, fileName: string, pdf: Buffer, cache: string) {
  return reply
    .type('application/pdf')
    .header('content-disposition', `inline; filename="${fileName}"`)
    .header('content-length', String(pdf.length))
    .header('cache-control', cache)
    .send(pdf)
}

/** Signed invoice routes (merchant keys). */
export function invoicesRoutes(deps: Deps): FastifyPluginAsync {
  return async (plain) => {
    const app = plain.withTypeProvider<TypeBoxTypeProvider>()

    app.post(
      '/v1/invoices',
      {
        schema: {
          operationId: 'invoices.create',
          tags,
          summary: 'Create an invoice (draft)',
          description:
            'Optional Idempotency-Key. Each lineTotalMinor must be qty × unitPriceMinor and ' +
            'amountMinor their sum, else 400 SVC-VAL-3001 with details per field.',
          body: CreateInvoiceBody,
          response: { 201: InvoiceSchema, ...errorResponses },
        },
      },
      async (request, reply) => {
        const b = request.body
        // The effect and its recorded answer commit together (decision 0035), here and below.
        const port = request.idempotentAnswer
        return answerOnce(
          reply,
          port,
          () =>
            createInvoice(
              deps,
              authOf(request).merchantId,
              {
                ...b,
                dueDate: dateOrUndefined(b.dueDate),
                expiresAt: dateOrUndefined(b.expiresAt),
              },
              recordWith(port, 201, (i: Invoice) => invoiceJson(deps, i)),
            ),
          (invoice) => reply.code(201).send(invoiceJson(deps, invoice)),
        )
      },
    )

    app.get(
      '/v1/invoices',
      {
        schema: {
          operationId: 'invoices.list',
          tags,
          summary: "List the merchant's invoices, newest first",
          description:
            "The merchant's invoices newest first, in pages of `limit` with a keyset `nextCursor`; filters `storeId` and `status`, sent again with the cursor.",
          querystring: InvoiceListQuery,
          response: { 200: InvoiceList, ...errorResponses },
        },
      },
      async (request) => {
        const page = await listInvoices(deps, authOf(request).merchantId, request.query)
        return {
          items: page.items.map((i) => ({
            id: i.id,
            storeId: i.storeId,
            status: i.status,
            amountMinor: i.amountMinor,
            currency: i.currency,
            createdAt: isoZ(i.createdAt),
          })),
          nextCursor: page.nextCursor,
        }
      },
    )

    app.get(
      '/v1/invoices/:id',
      {
        schema: {
          operationId: 'invoices.get',
          tags,
          summary: 'Retrieve an invoice (a captured payment shows as paid at once)',
          description:
            "The invoice with its lines, totals, status and the buyer's link. A payment captured on its checkout session shows it `paid` at once (and records `invoice.paid`), without waiting for the reconciler. 404 SVC-RES-3301 for an unknown or another merchant's invoice.",
          params: InvoiceParams,
          response: { 200: InvoiceSchema, ...errorResponses },
        },
      },
      async (request) =>
        invoiceJson(deps, await getInvoice(deps, authOf(request).merchantId, request.params.id)),
    )

    app.post(
      '/v1/invoices/:id/send',
      {
        config: { requireKyc: true },
        schema: {
          operationId: 'invoices.send',
          tags,
          summary: 'Email the invoice to buyerEmail (draft → sent)',
          description:
            'A `draft` becomes `sent` and the buyer is emailed the payment link (`invoice.sent`). The email is owed in the same transaction and retried by a reconciler if the mail server fails, so the request does not fail with it. No `buyerEmail`: 400 SVC-VAL-3001; not a draft: 409 SVC-STATE-3401. Needs KYC `approved`.',
          params: InvoiceParams,
          body: EmptyBody,
          response: { 200: SendResponse, ...errorResponses },
        },
      },
      async (request, reply) => {
        const port = request.idempotentAnswer
        const json = (i: Invoice) => ({ id: i.id, status: i.status, sentAt: isoZ(i.sentAt) })
        return answerOnce(
          reply,
          port,
          () =>
            sendInvoice(
              deps,
              authOf(request).merchantId,
              request.params.id,
              recordWith(port, 200, json),
            ),
          (i) => reply.send(json(i)),
        )
      },
    )

    app.post(
      '/v1/invoices/:id/activate',
      {
        config: { requireKyc: true },
        schema: {
          operationId: 'invoices.activate',
          tags,
          summary: 'Open the payment link without an email (draft → activated)',
          description:
            'A `draft` becomes `activated`: its payment link works and no email is sent — the merchant shares the link (`invoice.activated`). Not a draft: 409 SVC-STATE-3401. Needs KYC `approved`.',
          params: InvoiceParams,
          body: EmptyBody,
          response: { 200: ActivateResponse, ...errorResponses },
        },
      },
      async (request, reply) => {
        const port = request.idempotentAnswer
        const json = (i: Invoice) => ({
          id: i.id,
          status: i.status,
          activatedAt: isoZ(i.activatedAt),
        })
        return answerOnce(
          reply,
          port,
          () =>
            activateInvoice(
              deps,
              authOf(request).merchantId,
              request.params.id,
              recordWith(port, 200, json),
            ),
          (i) => reply.send(json(i)),
        )
      },
    )

    app.post(
      '/v1/invoices/:id/cancel',
      {
        schema: {
          operationId: 'invoices.cancel',
          tags,
          summary: 'Cancel an open invoice (and its open checkout session)',
          description:
            'The invoice becomes `cancelled` (`invoice.cancelled`) and its active checkout session is cancelled with it. A paid, expired or cancelled invoice is 409 SVC-STATE-3401, as is one whose payment is at the bank right now (try again in a minute).',
          params: InvoiceParams,
          body: EmptyBody,
          response: { 200: CancelResponse, ...errorResponses },
        },
      },
      async (request, reply) => {
        const port = request.idempotentAnswer
        const json = (i: Invoice) => ({
          id: i.id,
          status: i.status,
          cancelledAt: isoZ(i.cancelledAt),
        })
        return answerOnce(
          reply,
          port,
          () =>
            cancelInvoice(
              deps,
              authOf(request).merchantId,
              request.params.id,
              recordWith(port, 200, json),
            ),
          (i) => reply.send(json(i)),
        )
      },
    )

    app.get(
      '/v1/invoices/:id/pdf',
      {
        schema: {
          operationId: 'invoices.pdf',
          tags,
          summary: 'The invoice as a PDF',
          description:
            "The invoice rendered as a PDF (`application/pdf`), in any status; 404 SVC-RES-3301 for an unknown or another merchant's invoice.",
          params: InvoiceParams,
          response: { 200: PdfResponse, ...errorResponses },
        },
      },
      async (request, reply) => {
        const { invoiceId, pdf } = await merchantInvoicePdf(
          deps,
          authOf(request).merchantId,
          request.params.id,
        )
        return sendPdf(reply, `${invoiceId}.pdf`, pdf, 'private, no-store')
      },
    )
  }
}

const publicErrors = {
  400: ErrorEnvelope,
  403: ErrorEnvelope,
  404: ErrorEnvelope,
  409: ErrorEnvelope,
  429: ErrorEnvelope,
}

/**
 * The buyer's API (public context: no signature, the publicHash is the bearer, limited per
 * IP). Responses carry live state and are never cached.
 */
export function invoicesPublicRoutes(deps: Deps): FastifyPluginAsync {
  return async (plain) => {
    const app = plain.withTypeProvider<TypeBoxTypeProvider>()
    app.addHook('onSend', async (_request, reply, payload) => {
      void reply.header('cache-control', 'no-store')
      void reply.header('referrer-policy', 'no-referrer')
      return payload
    })

    app.get(
      '/v1/public/invoices/:hash',
      {
        schema: {
          operationId: 'public.invoices.get',
          tags,
          summary: 'The invoice as its buyer sees it (the first read marks it viewed)',
          description:
            "For the buyer's invoice page: the merchant's name and the invoice. No signature; the public hash is the bearer. The first read of a `sent` or `activated` invoice marks it `viewed` (`invoice.viewed`); a draft's hash is 404 SVC-RES-3301.",
          security: [],
          params: HashParams,
          response: { 200: PublicInvoiceView, ...publicErrors },
        },
      },
      async (request) => {
        const { merchantName, invoice: i } = await viewInvoice(deps, request.params.hash)
        return {
          publicHash: request.params.hash,
          merchantName,
          status: i.status,
          amountMinor: i.amountMinor,
          currency: i.currency,
          lineItems: i.lineItems,
          buyerName: i.buyerName,
          dueDate: isoZ(i.dueDate),
          expiresAt: isoZ(i.expiresAt),
          notes: i.notes,
          paidAt: isoZ(i.paidAt),
        }
      },
    )

    app.post(
      '/v1/public/invoices/:hash/pay',
      {
        schema: {
          operationId: 'public.invoices.pay',
          tags,
          summary: 'The checkout session that pays the invoice (made once, reused while active)',
          description:
            'The checkout session the buyer pays the invoice on: made on the first call and handed out again while it is active. No signature; the public hash is the bearer. An invoice that is not `sent`, `activated` or `viewed` is 409 SVC-STATE-3401, as is one whose payment is at the bank.',
          security: [],
          params: HashParams,
          body: EmptyBody,
          response: { 200: PaySession, ...publicErrors },
        },
      },
      async (request) => {
        const session = await payInvoice(deps, request.params.hash)
        return {
          sessionId: session.id,
          checkoutUrl: `${deps.config.checkoutUrl}/s/${session.id}`,
          expiresAt: isoZ(session.expiresAt),
        }
      },
    )

    app.get(
      '/v1/public/invoices/:hash/pdf',
      {
        schema: {
          operationId: 'public.invoices.pdf',
          tags,
          summary: 'The invoice as a PDF (changes no status)',
          description:
            'The invoice as a PDF for its buyer; a read only, it changes no status. No signature; the public hash is the bearer; 404 SVC-RES-3301 for an unknown hash.',
          security: [],
          params: HashParams,
          response: { 200: PdfResponse, ...publicErrors },
        },
      },
      async (request, reply) => {
        const pdf = await publicInvoicePdf(deps, request.params.hash)
        return sendPdf(reply, 'fatura.pdf', pdf, 'no-store')
      },
    )
  }
}
