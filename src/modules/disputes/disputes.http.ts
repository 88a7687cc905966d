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
          description:
            "Every chargeback of the payment with its status, amount, reason code and evidence deadline (`evidenceDueBy`); not paginated. 404 SVC-RES-3301 when the payment is not this merchant's.",
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
          description:
            'The merchant takes the loss: a `received` chargeback becomes `accepted` (the money already went back to the buyer; no ledger legs move) and `chargeback.accepted` is recorded. A resolved or `under_review` chargeback is 409 SVC-STATE-3401; 404 SVC-RES-3301 for an unknown one. A `received` chargeback left past its deadline closes `accepted` with `resolution: expired` by itself.',
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
          description:
            'Saves the text and uploaded `fileIds` (from `POST /v1/files`) as the draft of a `received` chargeback; with `submit: true` the evidence is rendered to a PDF and sent, the chargeback moves to `under_review` and `chargeback.evidence_submitted` is recorded. An unknown file or an empty submission is 400 SVC-VAL-3001; a chargeback no longer `received` is 409 SVC-STATE-3401.',
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
          description:
            "Representment won: a `received` or `under_review` chargeback becomes `reversed`, its ledger legs are undone (the amount comes back to the merchant's balance) and `chargeback.reversed` is recorded. Already resolved: 409 SVC-STATE-3401.",
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
          description:
            "Sandbox only. Opens a `received` chargeback on a captured payment, for `amount` (default: all that is still disputable) with `reasonCode` (default `4837`): the amount is held from the merchant's balance and `chargeback.received` recorded; the payment's status does not change. A payment that is not captured is 409 SVC-STATE-3401; an amount over what is disputable, or overlapping a refund in flight, is 400 SVC-VAL-3001.",
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
