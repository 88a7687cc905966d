import type { FastifyPluginAsync } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { Deps } from '../../database.ts'
import { authOf } from '../../platform/http/auth.ts'
import { answerOnce, recordWith } from '../../platform/http/idempotent-answer.ts'
import { errorResponses, isoZ } from '../../platform/http/schemas.ts'
import {
  CreateLinkBody,
  EmptyBody,
  LinkList,
  LinkListQuery,
  LinkParams,
  LinkSchema,
} from './payment-links.schemas.ts'
import {
  createPaymentLink,
  deactivatePaymentLink,
  getPaymentLink,
  listPaymentLinks,
  type PaymentLink,
} from './payment-links.service.ts'

const tags = ['payment-links']

export function linkJson(l: PaymentLink) {
  return {
    id: l.id,
    storeId: l.storeId,
    url: l.url,
    qrUrl: `${l.url}/qr.svg`,
    active: l.active,
    status: l.status,
    amount: l.amount,
    currency: l.currency,
    description: l.description,
    maxPayments: l.maxPayments,
    paymentsCount: l.paymentsCount,
    expiresAt: isoZ(l.expiresAt),
    metadata: l.metadata,
    installments: l.installments,
    collect: l.collect,
    returnUrl: l.returnUrl,
    createdAt: isoZ(l.createdAt),
    deactivatedAt: isoZ(l.deactivatedAt),
  }
}

/** Signed payment-link routes (merchant keys). */
export function paymentLinksRoutes(deps: Deps): FastifyPluginAsync {
  return async (plain) => {
    const app = plain.withTypeProvider<TypeBoxTypeProvider>()

    app.post(
      '/v1/payment-links',
      {
        schema: {
          operationId: 'paymentLinks.create',
          tags,
          summary: 'Create a payment link',
          description:
            'A reusable page {checkout_url}/l/{hash} with one Pay button. Each press makes a ' +
            'checkout session (transactionId `<linkId>:<n>`); payments made there carry ' +
            '`paymentLinkId`. maxPayments bounds the captured payments, expiresAt the time.',
          body: CreateLinkBody,
          response: { 201: LinkSchema, ...errorResponses },
        },
      },
      async (request, reply) => {
        const { expiresAt, ...rest } = request.body
        // The link and its recorded answer commit together (decision 0035), here and below.
        const port = request.idempotentAnswer
        return answerOnce(
          reply,
          port,
          () =>
            createPaymentLink(
              deps,
              authOf(request).merchantId,
              { ...rest, expiresAt: expiresAt === undefined ? undefined : new Date(expiresAt) },
              recordWith(port, 201, linkJson),
            ),
          (link) => reply.code(201).send(linkJson(link)),
        )
      },
    )

    app.get(
      '/v1/payment-links',
      {
        schema: {
          operationId: 'paymentLinks.list',
          tags,
          summary: "List the merchant's payment links, newest first",
          description:
            "The merchant's payment links newest first, in pages of `limit` with a keyset `nextCursor`, each with its usage.",
          querystring: LinkListQuery,
          response: { 200: LinkList, ...errorResponses },
        },
      },
      async (request) => {
        const page = await listPaymentLinks(deps, authOf(request).merchantId, request.query)
        return { items: page.items.map(linkJson), nextCursor: page.nextCursor }
      },
    )

    app.get(
      '/v1/payment-links/:id',
      {
        schema: {
          operationId: 'paymentLinks.get',
          tags,
          summary: 'Retrieve a payment link',
          description:
            "The link with its amount, URL, whether it is active, and its usage (payments made through it); 404 SVC-RES-3301 for an unknown or another merchant's link.",
          params: LinkParams,
          response: { 200: LinkSchema, ...errorResponses },
        },
      },
      async (request) =>
        linkJson(await getPaymentLink(deps, authOf(request).merchantId, request.params.id)),
    )

    app.post(
      '/v1/payment-links/:id/deactivate',
      {
        schema: {
          operationId: 'paymentLinks.deactivate',
          tags,
          summary: 'Deactivate a payment link (its page answers 410); idempotent',
          description:
            'The link stops taking payments: its page answers 410 from now on. Deactivating an inactive link answers it as it is; 404 SVC-RES-3301 for an unknown link.',
          params: LinkParams,
          body: EmptyBody,
          response: { 200: LinkSchema, ...errorResponses },
        },
      },
      async (request, reply) => {
        const port = request.idempotentAnswer
        return answerOnce(
          reply,
          port,
          () =>
            deactivatePaymentLink(
              deps,
              authOf(request).merchantId,
              request.params.id,
              recordWith(port, 200, linkJson),
            ),
          (link) => reply.send(linkJson(link)),
        )
      },
    )
  }
}
