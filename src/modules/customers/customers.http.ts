import type { FastifyPluginAsync } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import type { Deps } from '../../database.ts'
import { authOf } from '../../platform/http/auth.ts'
import { answerOnce, recordWith } from '../../platform/http/idempotent-answer.ts'
import { errorResponses, isoZ } from '../../platform/http/schemas.ts'
import {
  attachCard,
  detachCard,
  listCards,
  requireDefaultCard,
  type CustomerCard,
} from './customer-cards.service.ts'
import {
  AttachCardBody,
  CardParams,
  CreateCustomerBody,
  CustomerCardList,
  CustomerCardResponse,
  CustomerList,
  CustomerListQuery,
  CustomerParams,
  CustomerResponse,
  DefaultCardResponse,
  UpdateCustomerBody,
} from './customers.schemas.ts'
import {
  createCustomer,
  deleteCustomer,
  getCustomer,
  listCustomers,
  updateCustomer,
  type Customer,
} from './customers.service.ts'

const tags = ['customers']
const NoContent = Type.Null({ description: 'No body' })

function customerJson(c: Customer) {
  return {
    id: c.id,
    merchantId: c.merchantId,
    externalId: c.externalId,
    email: c.email,
    phone: c.phone,
    name: c.name,
    extraData: c.extraData,
    createdAt: isoZ(c.createdAt),
    updatedAt: isoZ(c.updatedAt),
    testClockId: c.testClockId,
  }
}

/** A saved card as a reference: never more than the vault's non-secret details. */
function cardJson(c: CustomerCard) {
  return {
    id: c.id,
    customerId: c.customerId,
    cardToken: c.cardToken,
    last4: c.last4,
    brand: c.brand,
    expMonth: c.expMonth,
    expYear: c.expYear,
    isDefault: c.isDefault,
    card: { fingerprint: c.fingerprint },
    expired: c.expired,
    createdAt: isoZ(c.createdAt),
  }
}

/** Signed customer routes; merchant keys only (the gateway's default scope). */
export function customersRoutes(deps: Deps): FastifyPluginAsync {
  return async (plain) => {
    const app = plain.withTypeProvider<TypeBoxTypeProvider>()

    app.post(
      '/v1/customers',
      {
        schema: {
          operationId: 'customers.create',
          tags,
          summary: 'Create a customer',
          description:
            "Records `customer.created`. `externalId` and `email` are unique among the merchant's customers: a second one is 409 SVC-RES-3302.",
          body: CreateCustomerBody,
          response: { 201: CustomerResponse, ...errorResponses },
        },
      },
      async (request, reply) => {
        // The change and its recorded answer commit together (decision 0035), here and below.
        const port = request.idempotentAnswer
        return answerOnce(
          reply,
          port,
          () =>
            createCustomer(
              deps,
              authOf(request).merchantId,
              request.body,
              recordWith(port, 201, customerJson),
            ),
          (c) => reply.code(201).send(customerJson(c)),
        )
      },
    )

    app.get(
      '/v1/customers/:id',
      {
        schema: {
          operationId: 'customers.get',
          tags,
          summary: 'Retrieve a customer',
          description: "404 SVC-RES-3301 for an unknown, deleted or another merchant's customer.",
          params: CustomerParams,
          response: { 200: CustomerResponse, ...errorResponses },
        },
      },
      async (request) =>
        customerJson(await getCustomer(deps, authOf(request).merchantId, request.params.id)),
    )

    app.put(
      '/v1/customers/:id',
      {
        schema: {
          operationId: 'customers.update',
          tags,
          summary: 'Update a customer (only the fields sent change)',
          description:
            "Only the fields sent change; records `customer.updated`. Taking another customer's `externalId` or `email` is 409 SVC-RES-3302; 404 SVC-RES-3301 for an unknown or deleted customer.",
          params: CustomerParams,
          body: UpdateCustomerBody,
          response: { 200: CustomerResponse, ...errorResponses },
        },
      },
      async (request, reply) => {
        const port = request.idempotentAnswer
        return answerOnce(
          reply,
          port,
          () =>
            updateCustomer(
              deps,
              authOf(request).merchantId,
              request.params.id,
              request.body,
              recordWith(port, 200, customerJson),
            ),
          (c) => reply.send(customerJson(c)),
        )
      },
    )

    app.get(
      '/v1/customers',
      {
        schema: {
          operationId: 'customers.list',
          tags,
          summary: 'List customers, newest first',
          description:
            "The merchant's customers that are not deleted, newest first, in pages of `limit` with a keyset `nextCursor`; `email` and `phone` filter on an exact value.",
          querystring: CustomerListQuery,
          response: { 200: CustomerList, ...errorResponses },
        },
      },
      async (request) => {
        const page = await listCustomers(deps, authOf(request).merchantId, request.query)
        return {
          items: page.items.map((c) => ({
            id: c.id,
            externalId: c.externalId,
            email: c.email,
            name: c.name,
            createdAt: isoZ(c.createdAt),
          })),
          nextCursor: page.nextCursor,
        }
      },
    )

    app.delete(
      '/v1/customers/:id',
      {
        schema: {
          operationId: 'customers.delete',
          tags,
          summary: 'Delete a customer (soft delete; its cards are detached and revoked)',
          description:
            'Soft-deletes the customer: every saved card is detached and its vault token revoked, in one transaction with `customer.deleted` (which lists the detached card ids). The customer then answers 404.',
          params: CustomerParams,
          response: { 204: NoContent, ...errorResponses },
        },
      },
      async (request, reply) => {
        const port = request.idempotentAnswer
        return answerOnce(
          reply,
          port,
          () =>
            deleteCustomer(
              deps,
              authOf(request).merchantId,
              request.params.id,
              recordWith(port, 204, () => null),
            ),
          () => reply.code(204).send(null),
        )
      },
    )

    app.post(
      '/v1/customers/:id/cards',
      {
        schema: {
          operationId: 'customers.cards.save',
          tags,
          summary: 'Save a vault card token for the customer',
          description:
            '201: attached. 200: the token was already a card of this customer (isDefault: true ' +
            'still makes it the default).',
          params: CustomerParams,
          body: AttachCardBody,
          response: { 200: CustomerCardResponse, 201: CustomerCardResponse, ...errorResponses },
        },
      },
      async (request, reply) => {
        const port = request.idempotentAnswer
        type Attached = { card: Parameters<typeof cardJson>[0] & { bin: string }; created: boolean }
        const json = ({ card }: Attached) => ({ ...cardJson(card), bin: card.bin })
        return answerOnce(
          reply,
          port,
          () =>
            attachCard(
              deps,
              authOf(request).merchantId,
              request.params.id,
              request.body.cardToken,
              { isDefault: request.body.isDefault },
              recordWith(port, (a: Attached) => (a.created ? 201 : 200), json),
            ),
          (a) => reply.code(a.created ? 201 : 200).send(json(a)),
        )
      },
    )

    app.get(
      '/v1/customers/:id/cards',
      {
        schema: {
          operationId: 'customers.cards.list',
          tags,
          summary: "The customer's saved cards, newest first",
          description:
            "The customer's attached cards (masked number, brand, expiry, `isDefault`), newest first; not paginated. 404 SVC-RES-3301 for an unknown customer.",
          params: CustomerParams,
          response: { 200: CustomerCardList, ...errorResponses },
        },
      },
      async (request) => ({
        items: (await listCards(deps, authOf(request).merchantId, request.params.id)).map(cardJson),
      }),
    )

    app.get(
      '/v1/customers/:id/cards/default',
      {
        schema: {
          operationId: 'customers.cards.getDefault',
          tags,
          summary: "The customer's default card (404 when there is none)",
          description:
            'The card subscriptions and saved-card charges use. 404 SVC-RES-3301 when the customer is unknown or has no default card.',
          params: CustomerParams,
          response: { 200: DefaultCardResponse, ...errorResponses },
        },
      },
      async (request) => {
        const card = await requireDefaultCard(deps, authOf(request).merchantId, request.params.id)
        return {
          cardToken: card.cardToken,
          customerId: card.customerId,
          last4: card.last4,
          brand: card.brand,
          expMonth: card.expMonth,
          expYear: card.expYear,
        }
      },
    )

    app.delete(
      '/v1/customers/:id/cards/:cardId',
      {
        schema: {
          operationId: 'customers.cards.detach',
          tags,
          summary: 'Detach a saved card and revoke its token',
          description:
            'Detaches the card and revokes its vault token (it cannot be charged or attached again); when it was the default, another attached card (an unexpired one first) becomes the default. Records `customer.card_detached`; 404 SVC-RES-3301 for an unknown or already detached card.',
          params: CardParams,
          response: { 204: NoContent, ...errorResponses },
        },
      },
      async (request, reply) => {
        const port = request.idempotentAnswer
        return answerOnce(
          reply,
          port,
          () =>
            detachCard(
              deps,
              authOf(request).merchantId,
              request.params.id,
              request.params.cardId,
              recordWith(port, 204, () => null),
            ),
          () => reply.code(204).send(null),
        )
      },
    )
  }
}
