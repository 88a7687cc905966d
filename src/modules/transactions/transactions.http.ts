import { Readable } from 'node:stream'
import type { FastifyPluginAsync } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { Deps } from '../../database.ts'
import { validationError } from '../../platform/errors.ts'
import { authOf } from '../../platform/http/auth.ts'
import { answerOnce, recordWith } from '../../platform/http/idempotent-answer.ts'
import { errorResponses, isoZ } from '../../platform/http/schemas.ts'
import { createExport, getExport, openExportDownload, type ExportView } from './exports.service.ts'
import {
  CreateExportBody,
  ExportParams,
  ExportResponse,
  LedgerLegList,
  TransactionDetail,
  TransactionList,
  TransactionParams,
  TransactionsQuery,
} from './transactions.schemas.ts'
import {
  getTransaction,
  getTransactionLedger,
  listTransactions,
  type TransactionDetail as Detail,
  type TransactionListItem,
} from './transactions.service.ts'

const tags = ['transactions']

function listItemJson(t: TransactionListItem) {
  return {
    id: t.id,
    storeId: t.storeId,
    transactionId: t.transactionId,
    status: t.status,
    method: t.method,
    amount: t.amount,
    currency: t.currency,
    refundsCount: t.refundsCount,
    chargebacksCount: t.chargebacksCount,
    createdAt: isoZ(t.createdAt),
  }
}

function detailJson(d: Detail) {
  return {
    ...d,
    refunds: d.refunds.map((r) => ({
      ...r,
      createdAt: isoZ(r.createdAt),
      completedAt: isoZ(r.completedAt),
    })),
    chargebacks: d.chargebacks.map((c) => ({ ...c, receivedAt: isoZ(c.receivedAt) })),
    createdAt: isoZ(d.createdAt),
    completedAt: isoZ(d.completedAt),
  }
}

function exportJson(e: ExportView) {
  return {
    exportId: e.id,
    status: e.status,
    format: e.format,
    downloadUrl: `/v1/transactions/exports/${e.id}/download`,
    rowCount: e.rowCount,
    filters: e.filters,
    createdAt: isoZ(e.createdAt),
    completedAt: isoZ(e.completedAt),
    expiresAt: isoZ(e.expiresAt),
  }
}

const FileResponse = {
  description: 'The statement file: text/csv (UTF-8 with BOM, ";" separated) or application/pdf',
  content: {
    'text/csv': { schema: { type: 'string' } },
    'application/pdf': { schema: { type: 'string', format: 'binary' } },
  },
}

/** `metadata.<key>=<value>` out of the query (the schema admits such keys); one at most. */
function metadataFilter<T extends object>(query: T) {
  const rest: Record<string, unknown> = {}
  const pairs: { key: string; value: string }[] = []
  for (const [name, value] of Object.entries(query)) {
    if (name.startsWith('metadata.')) pairs.push({ key: name.slice(9), value: String(value) })
    else rest[name] = value
  }
  if (pairs.length > 1) throw validationError('metadata', 'one metadata.<key> filter at a time')
  return { metadata: pairs[0], rest: rest as T }
}

/** Signed routes of the transactions read model (merchant keys only). */
export function transactionsRoutes(deps: Deps): FastifyPluginAsync {
  return async (plain) => {
    const app = plain.withTypeProvider<TypeBoxTypeProvider>()

    app.get(
      '/v1/transactions',
      {
        schema: {
          operationId: 'transactions.list',
          tags,
          summary: "List the merchant's transactions, newest first",
          description:
            "The merchant's payments as transactions, in pages of `limit` (at most 100) with a keyset `nextCursor`; filters (`status`, `storeId`, `customerId`, `method`, `from`/`to`, `amountMin`/`amountMax`, one `metadata.<key>=<value>`) are the same as `GET /v1/payments` and must be sent again with the cursor. `from` after `to`, or two metadata filters, is 400 SVC-VAL-3001.",
          querystring: TransactionsQuery,
          response: { 200: TransactionList, ...errorResponses },
        },
      },
      async (request) => {
        const { limit, cursor, from, to, ...query } = request.query
        const { metadata, rest } = metadataFilter(query)
        const page = await listTransactions(
          deps,
          authOf(request).merchantId,
          {
            ...rest,
            ...(metadata ? { metadata } : {}),
            ...(from !== undefined ? { from: new Date(from) } : {}),
            ...(to !== undefined ? { to: new Date(to) } : {}),
          },
          { limit, ...(cursor !== undefined ? { cursor } : {}) },
        )
        return { items: page.items.map(listItemJson), nextCursor: page.nextCursor }
      },
    )

    app.post(
      '/v1/transactions/exports',
      {
        schema: {
          operationId: 'transactions.exports.create',
          tags,
          summary: 'Request a CSV or PDF statement; built in the background',
          description:
            'Answers 202 with the queued export. A retry with the same Idempotency-Key returns ' +
            'the same export in its current state.',
          body: CreateExportBody,
          response: { 202: ExportResponse, ...errorResponses },
        },
      },
      async (request, reply) => {
        const key = request.headers['idempotency-key']
        // The export and its recorded answer commit together (decision 0035).
        const port = request.idempotentAnswer
        return answerOnce(
          reply,
          port,
          () =>
            createExport(
              deps,
              authOf(request).merchantId,
              { ...request.body, ...(typeof key === 'string' ? { idempotencyKey: key } : {}) },
              recordWith(port, 202, exportJson),
            ),
          (created) => reply.code(202).send(exportJson(created)),
        )
      },
    )

    app.get(
      '/v1/transactions/exports/:exportId',
      {
        schema: {
          operationId: 'transactions.exports.get',
          tags,
          summary: 'Status of an export',
          description:
            "The export's status (`queued`, `processing`, `ready`, `failed`, `expired`), format, filters and rows written so far; `downloadUrl` answers once it is `ready`. 404 SVC-RES-3301 for an unknown or another merchant's export.",
          params: ExportParams,
          response: { 200: ExportResponse, ...errorResponses },
        },
      },
      async (request) =>
        exportJson(await getExport(deps, authOf(request).merchantId, request.params.exportId)),
    )

    app.get(
      '/v1/transactions/exports/:exportId/download',
      {
        schema: {
          operationId: 'transactions.exports.download',
          tags,
          summary: 'Download a ready export (409 SVC-STATE-3401 until it is ready)',
          description:
            "The export's file (CSV or PDF) once its status is `ready`. Before that, after a failure or when the file has expired (files are kept 7 days), 409 SVC-STATE-3401 with the reason; 404 SVC-RES-3301 for an unknown export.",
          params: ExportParams,
          response: { 200: FileResponse, ...errorResponses },
        },
      },
      async (request, reply) => {
        const file = await openExportDownload(
          deps,
          authOf(request).merchantId,
          request.params.exportId,
        )
        return reply
          .type(file.contentType)
          .header('content-disposition', `attachment; filename="${file.fileName}"`)
          .header('content-length', String(file.byteSize))
          .header('cache-control', 'private, no-store')
          .send(Readable.from(file.chunks))
      },
    )

    app.get(
      '/v1/transactions/:id',
      {
        schema: {
          operationId: 'transactions.get',
          tags,
          summary: 'A transaction with its refunds and chargebacks',
          description:
            "One transaction (a payment) with its refunds and chargebacks; 404 SVC-RES-3301 when it is not this merchant's.",
          params: TransactionParams,
          response: { 200: TransactionDetail, ...errorResponses },
        },
      },
      async (request) =>
        detailJson(await getTransaction(deps, authOf(request).merchantId, request.params.id)),
    )

    app.get(
      '/v1/transactions/:id/ledger',
      {
        schema: {
          operationId: 'transactions.ledger',
          tags,
          summary: 'The ledger legs posted for a transaction',
          description:
            "The double-entry legs posted for the payment (captures, refunds, fees, chargebacks); authorizations, voids and failures post none, so their list is empty. 404 SVC-RES-3301 when the payment is not this merchant's.",
          params: TransactionParams,
          response: { 200: LedgerLegList, ...errorResponses },
        },
      },
      async (request) => ({
        items: await getTransactionLedger(deps, authOf(request).merchantId, request.params.id),
      }),
    )
  }
}
