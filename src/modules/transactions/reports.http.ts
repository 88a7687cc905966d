import { Readable } from 'node:stream'
import type { FastifyPluginAsync } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { Deps } from '../../database.ts'
import { assert } from '../../platform/assert.ts'
import { authOf } from '../../platform/http/auth.ts'
import { answerOnce, recordWith } from '../../platform/http/idempotent-answer.ts'
import { errorResponses, isoZ } from '../../platform/http/schemas.ts'
import type { BalanceTransaction } from '../ledger/index.ts'
import { listBalanceTransactionsPage } from './balance-transactions.service.ts'
import type { ExportView } from './exports.service.ts'
import { createReport, getReport, openReportDownload } from './reports.service.ts'
import {
  BalanceTransactionList,
  BalanceTransactionsQuery,
  CreateReportBody,
  ReportParams,
  ReportResponse,
} from './transactions.schemas.ts'

// Balance transactions (merchant and submerchant keys) and finance reports (merchant keys).

const tags = ['reports']

function balanceTransactionJson(t: BalanceTransaction) {
  return {
    id: t.id,
    type: t.type,
    amount: t.amount,
    fee: t.fee,
    net: t.net,
    currency: 'TRY' as const,
    status: t.status,
    availableOn: isoZ(t.availableOn),
    sourceId: t.sourceId,
    ...(t.payoutId !== null ? { payoutId: t.payoutId } : {}),
    createdAt: isoZ(t.createdAt),
  }
}

export function reportJson(r: ExportView) {
  assert(r.kind !== 'statement', 'a statement export is not a report')
  return {
    reportId: r.id,
    type: r.kind,
    status: r.status,
    format: r.format,
    from: r.filters.from ?? '',
    to: r.filters.to ?? '',
    downloadUrl: `/v1/reports/${r.id}/download`,
    rowCount: r.rowCount,
    createdAt: isoZ(r.createdAt),
    completedAt: isoZ(r.completedAt),
    expiresAt: isoZ(r.expiresAt),
  }
}

const FileResponse = {
  description: 'The report file: text/csv (UTF-8 with BOM, ";" separated) or application/pdf',
  content: {
    'text/csv': { schema: { type: 'string' } },
    'application/pdf': { schema: { type: 'string', format: 'binary' } },
  },
}

export function reportsRoutes(deps: Deps): FastifyPluginAsync {
  return async (plain) => {
    const app = plain.withTypeProvider<TypeBoxTypeProvider>()

    app.get(
      '/v1/balance-transactions',
      {
        config: { scopes: ['merchant', 'submerchant'] },
        schema: {
          operationId: 'reports.balanceTransactions',
          tags,
          summary: "The caller's balance transactions, newest first",
          description:
            'Every movement of the balance (reserve + available) of the merchant, or of the ' +
            'submerchant whose key signs the request, derived from the ledger. The sum of ' +
            '`net` over all of them is reserve + available.',
          querystring: BalanceTransactionsQuery,
          response: { 200: BalanceTransactionList, ...errorResponses },
        },
      },
      async (request) => {
        const auth = authOf(request)
        const { limit, cursor, from, to, ...rest } = request.query
        const page = await listBalanceTransactionsPage(
          deps,
          { merchantId: auth.merchantId, submerchantId: auth.submerchantId },
          {
            ...rest,
            ...(from !== undefined ? { from: new Date(from) } : {}),
            ...(to !== undefined ? { to: new Date(to) } : {}),
          },
          { limit, ...(cursor !== undefined ? { cursor } : {}) },
        )
        return { items: page.items.map(balanceTransactionJson), nextCursor: page.nextCursor }
      },
    )

    app.post(
      '/v1/reports',
      {
        schema: {
          operationId: 'reports.create',
          tags,
          summary: 'Request a balance summary or payout reconciliation; built in the background',
          description:
            'Answers 202 with the queued report. Reports share the statement exports’ queue ' +
            '(at most KURUS_EXPORTS_QUEUED_MAX queued or building per merchant, 429 beyond). ' +
            'A retry with the same Idempotency-Key returns the same report.',
          body: CreateReportBody,
          response: { 202: ReportResponse, ...errorResponses },
        },
      },
      async (request, reply) => {
        const key = request.headers['idempotency-key']
        // The report and its recorded answer commit together (decision 0035).
        const port = request.idempotentAnswer
        return answerOnce(
          reply,
          port,
          () =>
            createReport(
              deps,
              authOf(request).merchantId,
              {
                type: request.body.type,
                format: request.body.format,
                from: new Date(request.body.from),
                to: new Date(request.body.to),
                ...(typeof key === 'string' ? { idempotencyKey: key } : {}),
              },
              recordWith(port, 202, reportJson),
            ),
          (created) => reply.code(202).send(reportJson(created)),
        )
      },
    )

    app.get(
      '/v1/reports/:reportId',
      {
        schema: {
          operationId: 'reports.get',
          tags,
          summary: 'Status of a report',
          description:
            "The report's status and, once it is `ready`, a download that answers. 404 SVC-RES-3301 for an unknown or another merchant's report.",
          params: ReportParams,
          response: { 200: ReportResponse, ...errorResponses },
        },
      },
      async (request) =>
        reportJson(await getReport(deps, authOf(request).merchantId, request.params.reportId)),
    )

    app.get(
      '/v1/reports/:reportId/download',
      {
        schema: {
          operationId: 'reports.download',
          tags,
          summary: 'Download a ready report (409 SVC-STATE-3401 until it is ready)',
          description:
            "The report's file once its status is `ready`. Before that, after a failure or when the file has expired (files are kept 7 days), 409 SVC-STATE-3401 with the reason; 404 SVC-RES-3301 for an unknown report.",
          params: ReportParams,
          response: { 200: FileResponse, ...errorResponses },
        },
      },
      async (request, reply) => {
        const file = await openReportDownload(
          deps,
          authOf(request).merchantId,
          request.params.reportId,
        )
        return reply
          .type(file.contentType)
          .header('content-disposition', `attachment; filename="${file.fileName}"`)
          .header('content-length', String(file.byteSize))
          .header('cache-control', 'private, no-store')
          .send(Readable.from(file.chunks))
      },
    )
  }
}
