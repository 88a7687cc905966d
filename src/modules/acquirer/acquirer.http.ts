import type { FastifyPluginAsync } from 'fastify'
import { Type } from 'typebox'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { Deps } from '../../database.ts'
import { authOf } from '../../platform/http/auth.ts'
import { errorResponses, isoZ } from '../../platform/http/schemas.ts'
import {
  BinParams,
  BinSchema,
  CreatePosAccountBody,
  InstallmentOptionsSchema,
  InstallmentQuery,
  PosAccountList,
  PosAccountParams,
  PosAccountSchema,
  RoutingBody,
  RoutingSchema,
  UpdatePosAccountBody,
} from './acquirer.schemas.ts'
import {
  createPosAccount,
  deletePosAccount,
  getPosAccount,
  listPosAccounts,
  updatePosAccount,
  type PosAccount,
  type PosOwner,
} from './pos-accounts.service.ts'
import { getRouting, installmentOptions, lookupBin, putRouting } from './routing.service.ts'

const tags = ['acquiring']

function posJson(a: PosAccount) {
  return { ...a, createdAt: isoZ(a.createdAt) }
}

/** The POS account routes under a prefix, for an owner (the merchant's or the platform's). */
function posAccountRoutes(
  deps: Deps,
  prefix: '/v1' | '/operator/v1',
  ownerOf: (request: Parameters<typeof authOf>[0]) => PosOwner,
): FastifyPluginAsync {
  const op = prefix === '/v1' ? 'posAccounts' : 'operator.posAccounts'
  const extra = prefix === '/v1' ? {} : { security: [{ operatorToken: [] }] }
  return async (plain) => {
    const app = plain.withTypeProvider<TypeBoxTypeProvider>()
    app.post(
      `${prefix}/pos-accounts`,
      {
        schema: {
          operationId: `${op}.create`,
          tags,
          ...extra,
          summary: 'Add a bank virtual POS account (credentials are write-only)',
          body: CreatePosAccountBody,
          response: { 201: PosAccountSchema, ...errorResponses },
        },
      },
      async (request, reply) => {
        const account = await createPosAccount(deps, ownerOf(request), request.body)
        return reply.code(201).send(posJson(account))
      },
    )
    app.get(
      `${prefix}/pos-accounts`,
      {
        schema: {
          operationId: `${op}.list`,
          tags,
          ...extra,
          summary:
            prefix === '/v1'
              ? "The merchant's and the platform's POS accounts"
              : "The platform's POS accounts",
          response: { 200: PosAccountList, ...errorResponses },
        },
      },
      async (request) => ({
        items: (await listPosAccounts(deps, ownerOf(request))).map(posJson),
      }),
    )
    app.get(
      `${prefix}/pos-accounts/:id`,
      {
        schema: {
          operationId: `${op}.get`,
          tags,
          ...extra,
          summary: 'Retrieve a POS account',
          params: PosAccountParams,
          response: { 200: PosAccountSchema, ...errorResponses },
        },
      },
      async (request) => posJson(await getPosAccount(deps, ownerOf(request), request.params.id)),
    )
    app.patch(
      `${prefix}/pos-accounts/:id`,
      {
        schema: {
          operationId: `${op}.update`,
          tags,
          ...extra,
          summary: 'Rename, enable/disable, set programs or replace credentials',
          params: PosAccountParams,
          body: UpdatePosAccountBody,
          response: { 200: PosAccountSchema, ...errorResponses },
        },
      },
      async (request) =>
        posJson(await updatePosAccount(deps, ownerOf(request), request.params.id, request.body)),
    )
    app.delete(
      `${prefix}/pos-accounts/:id`,
      {
        schema: {
          operationId: `${op}.delete`,
          tags,
          ...extra,
          summary: 'Disable a POS account for good (its payments keep their reference)',
          params: PosAccountParams,
          response: { 204: Type.Null(), ...errorResponses },
        },
      },
      async (request, reply) => {
        await deletePosAccount(deps, ownerOf(request), request.params.id)
        return reply.code(204).send(null)
      },
    )
  }
}

/** Signed merchant routes: POS accounts, routing, BIN facts and installment options. */
export function acquirerRoutes(deps: Deps): FastifyPluginAsync {
  return async (plain) => {
    await plain.register(
      posAccountRoutes(deps, '/v1', (request) => ({ merchantId: authOf(request).merchantId })),
    )
    const app = plain.withTypeProvider<TypeBoxTypeProvider>()
    app.get(
      '/v1/routing',
      {
        schema: {
          operationId: 'routing.get',
          tags,
          summary: "The merchant's POS routing rules and default order",
          response: { 200: RoutingSchema, ...errorResponses },
        },
      },
      async (request) => {
        const r = await getRouting(deps, authOf(request).merchantId)
        return { ...r, updatedAt: isoZ(r.updatedAt) }
      },
    )
    app.put(
      '/v1/routing',
      {
        schema: {
          operationId: 'routing.put',
          tags,
          summary: 'Replace the routing: the first rule whose condition holds names the POS order',
          body: RoutingBody,
          response: { 200: RoutingSchema, ...errorResponses },
        },
      },
      async (request) => {
        const r = await putRouting(deps, authOf(request).merchantId, request.body)
        return { ...r, updatedAt: isoZ(r.updatedAt) }
      },
    )
    app.get(
      '/v1/bins/:bin',
      {
        schema: {
          operationId: 'bins.get',
          tags,
          summary: 'Brand, funding, issuing bank and card program of a BIN',
          params: BinParams,
          response: { 200: BinSchema, ...errorResponses },
        },
      },
      async (request) => lookupBin(request.params.bin.slice(0, 6)),
    )
    app.get(
      '/v1/installment-options',
      {
        schema: {
          operationId: 'installmentOptions.get',
          tags,
          summary: 'The installment counts and totals the merchant can offer for a card',
          querystring: InstallmentQuery,
          response: { 200: InstallmentOptionsSchema, ...errorResponses },
        },
      },
      async (request) =>
        installmentOptions(
          deps,
          authOf(request).merchantId,
          request.query.bin.slice(0, 6),
          request.query.amount,
        ),
    )
  }
}

/** The platform's POS accounts; registered inside the operator's bearer-token context. */
export function operatorPosAccountRoutes(deps: Deps): FastifyPluginAsync {
  return posAccountRoutes(deps, '/operator/v1', () => ({ platform: true }))
}
