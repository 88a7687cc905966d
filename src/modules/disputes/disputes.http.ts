import type { FastifyPluginAsync } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { Deps } from '../../database.ts'
import { authOf } from '../../platform/http/auth.ts'
import { answerOnce } from '../../platform/http/idempotent-answer.ts'
import { errorResponses, isoZ } from '../../platform/http/schemas.ts'
import {
  ChargebackList,
  ChargebackParams,
  ChargebackSchema,
  EmptyBody,
  EvidenceBody,
  EvidenceSchema,
  PaymentParams,
  RaiseBody,
  Resolution,
} from './disputes.schemas.ts'
import {
  acceptChargeback,
  listChargebacks,
  receiveChargeback,
  reverseChargeback,
  type Chargeback,
} from './disputes.service.ts'
import { saveEvidence } from './evidence.service.ts'

const tags = ['disputes']

export function chargebackJson(c: Chargeback) {
  return {
    id: c.id,
    paymentId: c.paymentId,
    amount: c.amount,
    status: c.status,
    reasonCode: c.reasonCode,
    bankChargebackId: c.bankChargebackId,
    receivedAt: isoZ(c.receivedAt),
    resolvedAt: isoZ(c.resolvedAt),
    evidenceDueBy: isoZ(c.evidenceDueBy),
    resolution: c.resolution,
    evidenceSubmittedAt: isoZ(c.evidenceSubmittedAt),
  }
}

function evidenceJson(c: Chargeback) {
  return {
    chargebackId: c.id,
    paymentId: c.paymentId,
    status: c.status,
    evidenceDueBy: isoZ(c.evidenceDueBy),
    evidence: c.evidence,
    evidenceFileId: c.evidenceFileId,
    submittedAt: isoZ(c.evidenceSubmittedAt),
  }
}

function resolutionJson(c: Chargeback) {
  return {
    chargebackId: c.id,
    status: c.status,
    resolution: c.resolution,
    resolvedAt: isoZ(c.resolvedAt),
  }
}

export function disputesRoutes(deps: Deps): FastifyPluginAsync {
  return async (plain) => {
    const app = plain.withTypeProvider<TypeBoxTypeProvider>()
    app.get(
      '/v1/payments/:id/chargebacks',
      {
        schema: {
          operationId: 'chargebacks.list',
          tags,
          summary: "A payment's chargebacks",
          params: PaymentParams,
          response: { 200: ChargebackList, ...errorResponses },
        },
      },
      async (request) => ({
        items: (await listChargebacks(deps, authOf(request).merchantId, request.params.id)).map(
          chargebackJson,
        ),
      }),
    )
    app.post(
      '/v1/payments/:id/chargebacks/:cbid/accept',
      {
        schema: {
          operationId: 'chargebacks.accept',
          tags,
          summary: 'Accept a chargeback (bookkeeping only; terminal)',
          params: ChargebackParams,
          body: EmptyBody,
          response: { 200: Resolution, ...errorResponses },
        },
      },
      async (request, reply) => {
        const port = request.idempotentAnswer
        return answerOnce(
          reply,
          port,
          () =>
            acceptChargeback(
              deps,
              authOf(request).merchantId,
              request.params.id,
              request.params.cbid,
              port ? (tx, c) => port.record(tx, 200, resolutionJson(c)) : undefined,
            ),
          (c) => reply.send(resolutionJson(c)),
        )
      },
    )
    app.post(
      '/v1/payments/:id/chargebacks/:cbid/evidence',
      {
        schema: {
          operationId: 'chargebacks.saveEvidence',
          tags,
          summary:
            'Save the evidence draft; submit: true renders the evidence PDF and sends it (under_review)',
          params: ChargebackParams,
          body: EvidenceBody,
          response: { 200: EvidenceSchema, ...errorResponses },
        },
      },
      async (request, reply) => {
        const port = request.idempotentAnswer
        return answerOnce(
          reply,
          port,
          () =>
            saveEvidence(
              deps,
              authOf(request).merchantId,
              request.params.id,
              request.params.cbid,
              request.body,
              port ? (tx, c) => port.record(tx, 200, evidenceJson(c)) : undefined,
            ),
          (c) => reply.send(evidenceJson(c)),
        )
      },
    )
    app.post(
      '/v1/payments/:id/chargebacks/:cbid/reverse',
      {
        schema: {
          operationId: 'chargebacks.reverse',
          tags,
          summary: 'Reverse a chargeback (representment won; terminal)',
          params: ChargebackParams,
          body: EmptyBody,
          response: { 200: Resolution, ...errorResponses },
        },
      },
      async (request, reply) => {
        const port = request.idempotentAnswer
        return answerOnce(
          reply,
          port,
          () =>
            reverseChargeback(
              deps,
              authOf(request).merchantId,
              request.params.id,
              request.params.cbid,
              port ? (tx, c) => port.record(tx, 200, resolutionJson(c)) : undefined,
            ),
          (c) => reply.send(resolutionJson(c)),
        )
      },
    )
  }
}

/** Sandbox: the card's bank raises a chargeback. */
export function disputesSandboxRoutes(deps: Deps): FastifyPluginAsync {
  return async (plain) => {
    const app = plain.withTypeProvider<TypeBoxTypeProvider>()
    app.post(
      '/v1/sandbox/payments/:id/chargebacks',
      {
        schema: {
          operationId: 'sandbox.chargebacks.create',
          tags: ['sandbox'],
          summary: "Raise a chargeback as the card's bank would",
          params: PaymentParams,
          body: RaiseBody,
          response: { 201: ChargebackSchema, ...errorResponses },
        },
      },
      async (request, reply) => {
        const cb = await receiveChargeback(deps, authOf(request).merchantId, request.params.id, {
          ...(request.body.amount !== undefined ? { amount: request.body.amount } : {}),
          ...(request.body.reasonCode !== undefined ? { reasonCode: request.body.reasonCode } : {}),
        })
        return reply.code(201).send(chargebackJson(cb))
      },
    )
  }
}
