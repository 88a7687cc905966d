import type { FastifyPluginAsync } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { Static } from 'typebox'
import type { Deps } from '../../database.ts'
import type { Db, Tx } from '../../database.ts'
import { AppError } from '../../platform/errors.ts'
import { validationError } from '../../platform/errors.ts'
import { authOf } from '../../platform/http/auth.ts'
import { errorEnvelope } from '../../platform/http/errors.ts'
import {
  answerOnce,
  recordWith,
  type IdempotentAnswer,
} from '../../platform/http/idempotent-answer.ts'
import { ErrorEnvelope, errorResponses, isoZ } from '../../platform/http/schemas.ts'
import { setKycStatus } from '../merchants/index.ts'
import { chargeCard, NO_ANSWER, type ChargeAnswer } from './charge.service.ts'
import type {
  CaptureAnswer,
  Payment,
  PaymentDetail,
  PaymentView,
  PaymentViewDetail,
} from './payment-view.ts'
import {
  CaptureBody,
  CaptureResponse,
  ChallengeBody,
  ChallengeResponse,
  ChargeBody,
  ChargeResponse,
  CreateSessionBody,
  EmptyBody,
  InstallmentsQuery,
  InstallmentsResponse,
  PaymentList,
  PaymentListQuery,
  PaymentParams,
  PaymentResponse,
  PublicStatus,
  ReconcileResponse,
  RefundBody,
  RefundList,
  RefundResponse,
  SandboxKycBody,
  SandboxKycResponse,
  SessionResponse,
  ThreeDsBody,
  ThreeDsResponse,
  UpdatePaymentBody,
  VoidBody,
  VoidResponse,
} from './payments.schemas.ts'
import {
  capturePayment,
  NO_ACTION_ANSWER,
  voidPayment,
  type ActionAnswer,
} from './captures.service.ts'
import { listPayments } from './list.service.ts'
import {
  complete3ds,
  getPaymentWithAcquirer,
  getPublicStatus,
  quoteInstallments,
  sandboxSolveChallenge,
  updatePaymentMetadata,
} from './payments.service.ts'
import {
  listRefunds,
  NO_REFUND_ANSWER,
  refundPayment,
  type Refund,
  type RefundAnswer,
  type RefundOutcome,
} from './refunds.service.ts'
import { createSession, type Session } from './sessions.service.ts'

function refundJson(r: Refund) {
  return {
    refundId: r.id,
    status: r.status,
    amount: r.amount,
    reason: r.reason,
    bankRefundId: r.bankRefundId,
    metadata: r.metadata,
    createdAt: isoZ(r.createdAt),
    completedAt: isoZ(r.completedAt),
  }
}

function threeDsStatus(p: Payment): 200 | 202 {
  return p.status === 'pending' ? 202 : 200
}

function threeDsJson(p: Payment) {
  return {
    id: p.id,
    status: p.status,
    amount: p.amount,
    currency: p.currency,
    commission: p.commission,
    netAmount: p.netAmount,
    authCode: p.authCode,
    completedAt: isoZ(p.completedAt),
  }
}

/** 200 settled (completed or failed at the bank), 202 still in flight. */
function refundStatus(out: RefundOutcome): 200 | 202 {
  return out.refund.status === 'pending' ? 202 : 200
}

function refundAnswerJson({ payment, refund }: RefundOutcome) {
  return {
    paymentId: payment.id,
    status: payment.status,
    refundAmount: payment.refundAmount,
    refundableAmount: payment.refundableAmount,
    lastRefund: refundJson(refund),
  }
}

const tags = ['payments']

function sessionJson(deps: Deps, s: Session) {
  return {
    sessionId: s.id,
    checkoutUrl: `${deps.config.checkoutUrl}/s/${s.id}`,
    expiresAt: isoZ(s.expiresAt),
    merchantId: s.merchantId,
    transactionId: s.transactionId,
    mode: s.mode,
    amount: s.amount,
    currency: s.currency,
    status: s.status,
    metadata: s.metadata,
  }
}

function captureView(p: PaymentDetail) {
  return {
    id: p.id,
    status: p.status,
    amount: p.amount,
    capturedAmount: p.capturedAmount,
    currency: p.currency,
    commission: p.commission,
    netAmount: p.netAmount,
    refundableAmount: p.refundableAmount,
    captures: p.captures.map(captureJson),
    completedAt: isoZ(p.completedAt),
  }
}

function voidView(p: PaymentDetail) {
  return {
    id: p.id,
    status: p.status,
    amount: p.amount,
    currency: p.currency,
    capturedAmount: p.capturedAmount,
  }
}

/** A capture's or void's side of the request's Idempotency-Key record (200 answers). */
function actionAnswer(
  port: IdempotentAnswer<Db> | null,
  view: (p: PaymentDetail) => unknown,
): ActionAnswer {
  if (!port) return NO_ACTION_ANSWER
  return {
    resumeId: port.resumeId,
    claim: (tx, resourceId) => port.claim(tx, resourceId),
    record: (tx, payment) => port.record(tx, 200, view(payment)),
  }
}

/** 202 while the bank's answer is unknown, 200 for a repeat met at the fence, else 201. */
function chargeStatus(out: { payment: Payment; replay: boolean }): number {
  return out.payment.status === 'pending' ? 202 : out.replay ? 200 : 201
}

function chargeJson(p: Payment, challengeUrl: string | null) {
  return {
    paymentId: p.id,
    transactionId: p.transactionId,
    status: p.status,
    amount: p.amount,
    currency: p.currency,
    commission: p.commission,
    netAmount: p.netAmount,
    cardMask: p.cardMask,
    cardBrand: p.cardBrand,
    cardType: p.cardType,
    installmentCount: p.installmentCount,
    threeDSecure: p.threeDSecure,
    authCode: p.authCode,
    ...riskJson(p),
    ...(p.status === 'pending_3ds' && p.correlationId ? { correlationId: p.correlationId } : {}),
    ...(challengeUrl ? { challengeUrl } : {}),
    metadata: p.metadata,
    createdAt: isoZ(p.createdAt),
    completedAt: isoZ(p.completedAt),
  }
}

/** The card's fingerprint, the risk check's decision and why a payment failed. */
function riskJson(p: PaymentView) {
  return {
    card: p.cardFingerprint === null ? null : { fingerprint: p.cardFingerprint },
    risk: p.risk,
    failureCode: p.status === 'failed' ? (p.declineCode ?? 'declined') : null,
  }
}

function captureJson(c: CaptureAnswer) {
  return { id: c.id, amount: c.amount, createdAt: isoZ(c.createdAt) }
}

export function paymentJson(p: PaymentViewDetail) {
  return {
    id: p.id,
    merchantId: p.merchantId,
    storeId: p.storeId,
    transactionId: p.transactionId,
    method: p.method,
    status: p.status,
    amount: p.amount,
    capturedAmount: p.capturedAmount,
    currency: p.currency,
    commission: p.commission,
    netAmount: p.netAmount,
    captures: p.captures.map(captureJson),
    cardMask: p.cardMask,
    cardBrand: p.cardBrand,
    cardType: p.cardType,
    bin: p.bin,
    installmentCount: p.installmentCount,
    threeDSecure: p.threeDSecure,
    authCode: p.authCode,
    declineCode: p.declineCode,
    ...riskJson(p),
    refundAmount: p.refundAmount,
    refundableAmount: p.refundableAmount,
    customerId: p.customerId,
    metadata: p.metadata,
    paymentLinkId: p.paymentLinkId,
    subscriptionId: p.subscriptionId,
    subscriptionCycle: p.subscriptionCycle,
    createdAt: isoZ(p.createdAt),
    completedAt: isoZ(p.completedAt),
  }
}

const withDecline = { ...errorResponses, 402: ErrorEnvelope }

/** Signed payment routes. */
export function paymentsRoutes(deps: Deps): FastifyPluginAsync {
  return async (plain) => {
    const app = plain.withTypeProvider<TypeBoxTypeProvider>()

    app.post(
      '/v1/payments/sessions',
      {
        config: { requireKyc: true },
        schema: {
          operationId: 'payments.createSession',
          tags,
          summary: 'Create a hosted-checkout session',
          description:
            "A hosted-checkout session the buyer pays on `paymentUrl` (mode `payment`, `qr` or `card_update_only`); it expires unused. `transactionId` is a fence: the same body again answers the existing session with 200, another body is 409 SVC-RES-3302. Needs KYC `approved` (403 SVC-KYC-3101); `splits` must name this merchant's submerchants and not exceed the amount (400 SVC-VAL-3001).",
          body: CreateSessionBody,
          response: { 200: SessionResponse, 201: SessionResponse, ...errorResponses },
        },
      },
      async (request, reply) => {
        const auth = authOf(request)
        // A new session and its recorded answer commit together (decision 0035).
        const port = request.idempotentAnswer
        return answerOnce(
          reply,
          port,
          () =>
            createSession(
              deps,
              { merchantId: auth.merchantId, storeId: auth.storeId ?? '' },
              request.body,
              recordWith(port, 201, (s: Session) => sessionJson(deps, s)),
            ),
          ({ session, created }) =>
            reply.code(created ? 201 : 200).send(sessionJson(deps, session)),
        )
      },
    )

    app.post(
      '/v1/payments/card',
      {
        // The charge writes its Idempotency-Key record in its own claim transaction.
        config: { requireKyc: true, deferredIdempotency: true },
        schema: {
          operationId: 'payments.charge',
          tags,
          summary: 'Charge a vault card token',
          description:
            "Charges a vault card token against the active `payment` session with this `transactionId` (`amount` must equal the session's). 201: authorized or captured; 202: `pending_3ds` with a `challengeUrl`, or `pending` when the bank's answer is late (retry with the same Idempotency-Key); 402 SVC-PAY-3501: declined, with the failed payment's id. A repeat of the same charge is answered 200 from the payment; another payload under the `transactionId` is 409 SVC-GW-2001. Other answers: 404 SVC-RES-3301 (no session), 409 SVC-STATE-3401 (session not active or not a card session, token revoked), 429 SVC-GW-1004 (too many failed attempts on the session); needs KYC `approved`.",
          body: ChargeBody,
          response: {
            200: ChargeResponse,
            201: ChargeResponse,
            202: ChargeResponse,
            ...withDecline,
          },
        },
      },
      async (request, reply) => {
        const port = request.idempotentAnswer
        const answer: ChargeAnswer = port
          ? {
              resumeId: port.resumeId,
              claim: (tx: Tx, paymentId: string) => port.claim(tx, paymentId),
              record: (tx: Tx, result) =>
                result instanceof AppError
                  ? port.record(tx, result.status, errorEnvelope(request.id, result))
                  : port.record(
                      tx,
                      chargeStatus(result),
                      chargeJson(result.payment, result.challengeUrl),
                    ),
            }
          : NO_ANSWER
        return answerOnce(
          reply,
          port,
          () => chargeCard(deps, { merchantId: authOf(request).merchantId }, request.body, answer),
          (out) => reply.code(chargeStatus(out)).send(chargeJson(out.payment, out.challengeUrl)),
        )
      },
    )

    app.post(
      '/v1/payments/:id/3ds-callback',
      {
        // Claim (pending_3ds → pending) and outcome record the Idempotency-Key (decision 0035).
        config: { deferredIdempotency: true },
        schema: {
          operationId: 'payments.complete3ds',
          tags,
          summary: 'Complete a 3DS challenge',
          description:
            "Sends the bank's `pares` and the payment's `correlationId` after the buyer's 3DS challenge: `pending_3ds` → authorized or captured (200), `pending` while the bank answers (202), or 402 SVC-PAY-3501 `authentication_failed`. A `correlationId` or `pares` that is not this payment's is 400 SVC-3DS-3601; a duplicate submit gets the first one's answer.",
          params: PaymentParams,
          body: ThreeDsBody,
          response: { 200: ThreeDsResponse, 202: ThreeDsResponse, ...withDecline },
        },
      },
      async (request, reply) => {
        const port = request.idempotentAnswer
        const answer: ChargeAnswer = port
          ? {
              resumeId: port.resumeId,
              claim: (tx: Tx, paymentId: string) => port.claim(tx, paymentId),
              record: (tx: Tx, result) =>
                result instanceof AppError
                  ? port.record(tx, result.status, errorEnvelope(request.id, result))
                  : port.record(tx, threeDsStatus(result.payment), threeDsJson(result.payment)),
            }
          : NO_ANSWER
        return answerOnce(
          reply,
          port,
          () =>
            complete3ds(deps, authOf(request).merchantId, request.params.id, request.body, answer),
          (p) => reply.code(threeDsStatus(p)).send(threeDsJson(p)),
        )
      },
    )

    app.post(
      '/v1/payments/:id/capture',
      {
        config: { requireKyc: true, deferredIdempotency: true },
        schema: {
          operationId: 'payments.capture',
          tags,
          summary: 'Capture all or part of an authorization',
          description:
            'Several captures may follow one another (final: false keeps the authorization open). ' +
            'More than the uncaptured remainder: 400 SVC-VAL-3001. A capture without amount of a ' +
            'captured payment answers it as it is (idempotent); with an amount: 409 SVC-STATE-3401.',
          params: PaymentParams,
          body: CaptureBody,
          response: { 200: CaptureResponse, ...errorResponses },
        },
      },
      async (request, reply) => {
        // A capture may come without a body at all (the spec's full capture).
        const body = (request.body as Static<typeof CaptureBody> | undefined) ?? {}
        const input = {
          ...(body.amount !== undefined ? { amount: body.amount } : {}),
          ...(body.final !== undefined ? { final: body.final } : {}),
        }
        const port = request.idempotentAnswer
        return answerOnce(
          reply,
          port,
          () =>
            capturePayment(
              deps,
              authOf(request).merchantId,
              request.params.id,
              input,
              actionAnswer(request.idempotentAnswer, captureView),
            ),
          (p) => reply.send(captureView(p)),
        )
      },
    )

    app.post(
      '/v1/payments/:id/void',
      {
        config: { deferredIdempotency: true },
        schema: {
          operationId: 'payments.void',
          tags,
          summary: 'Void an uncaptured authorization',
          description:
            'Releases an open authorization: with nothing captured the payment becomes `voided` (`payment.voided`); a `partially_captured` payment releases the remainder and becomes `captured`. A voided payment is answered as it is; any other status is 409 SVC-STATE-3401, as is a capture or void of the same payment still running. Posts no ledger legs.',
          params: PaymentParams,
          body: VoidBody,
          response: { 200: VoidResponse, ...errorResponses },
        },
      },
      async (request, reply) =>
        answerOnce(
          reply,
          request.idempotentAnswer,
          () =>
            voidPayment(
              deps,
              authOf(request).merchantId,
              request.params.id,
              request.body.reason ?? null,
              actionAnswer(request.idempotentAnswer, voidView),
            ),
          (p) => reply.send(voidView(p)),
        ),
    )

    app.get(
      '/v1/payments',
      {
        schema: {
          operationId: 'payments.list',
          tags,
          summary: "List the merchant's payments, newest first",
          description:
            'Each item is the payment as `GET /v1/payments/{id}` answers it. The filters are ' +
            "those of `GET /v1/transactions` (the read model's shorter rows): `status`, " +
            '`storeId`, `customerId`, `method`, `from`/`to` (createdAt), `amountMin`/`amountMax` ' +
            '(kuruş) and one `metadata.<key>=<value>`. Keyset pages: pass `nextCursor` back as ' +
            '`cursor` with the same filters; a page never skips or repeats a payment when new ' +
            'ones arrive. Example: `GET /v1/payments?status=captured&limit=2`.',
          querystring: PaymentListQuery,
          response: { 200: PaymentList, ...errorResponses },
        },
      },
      async (request) => {
        const { limit, cursor, from, to, ...query } = request.query
        const filters: Record<string, unknown> = {}
        const pairs: { key: string; value: string }[] = []
        for (const [name, value] of Object.entries(query)) {
          if (name.startsWith('metadata.')) pairs.push({ key: name.slice(9), value: String(value) })
          else filters[name] = value
        }
        if (pairs.length > 1)
          throw validationError('metadata', 'one metadata.<key> filter at a time')
        const page = await listPayments(
          deps,
          authOf(request).merchantId,
          {
            ...(filters as Omit<typeof query, `metadata.${string}`>),
            ...(pairs[0] ? { metadata: pairs[0] } : {}),
            ...(from !== undefined ? { from: new Date(from) } : {}),
            ...(to !== undefined ? { to: new Date(to) } : {}),
          },
          { limit, ...(cursor !== undefined ? { cursor } : {}) },
        )
        return { items: page.items.map(paymentJson), nextCursor: page.nextCursor }
      },
    )

    app.get(
      '/v1/payments/:id',
      {
        schema: {
          operationId: 'payments.get',
          tags,
          summary: 'Retrieve a payment',
          description:
            "The payment with its captures, refund totals, risk outcome and card facts (masked number, brand, BIN); 404 SVC-RES-3301 for another merchant's payment.",
          params: PaymentParams,
          response: { 200: PaymentResponse, ...errorResponses },
        },
      },
      async (request) => {
        const { payment, acquirer } = await getPaymentWithAcquirer(
          deps,
          authOf(request).merchantId,
          request.params.id,
        )
        return { ...paymentJson(payment), ...(acquirer ? { acquirer } : {}) }
      },
    )

    app.patch(
      '/v1/payments/:id',
      {
        schema: {
          operationId: 'payments.update',
          tags,
          summary: "Update a payment's metadata",
          description:
            'Merges `metadata` into the payment\'s (a key set to "" is removed), in one ' +
            'transaction; records `payment.updated`. At most 50 keys after the merge.',
          params: PaymentParams,
          body: UpdatePaymentBody,
          response: { 200: PaymentResponse, ...errorResponses },
        },
      },
      async (request, reply) => {
        const port = request.idempotentAnswer
        return answerOnce(
          reply,
          port,
          () =>
            updatePaymentMetadata(
              deps,
              authOf(request).merchantId,
              request.params.id,
              request.body.metadata,
              recordWith(port, 200, paymentJson),
            ),
          (payment) => reply.send(paymentJson(payment)),
        )
      },
    )

    app.post(
      '/v1/payments/:id/refund',
      {
        // The refund writes its Idempotency-Key record in its own claim and outcome
        // transactions (decision 0035).
        config: { deferredIdempotency: true },
        schema: {
          operationId: 'payments.refund',
          tags,
          summary: 'Refund all or part of a captured payment',
          description:
            '200: settled now. 202: in flight; retry with the same Idempotency-Key to learn the outcome.',
          params: PaymentParams,
          body: RefundBody,
          response: { 200: RefundResponse, 202: RefundResponse, ...errorResponses },
        },
      },
      async (request, reply) => {
        const key = request.headers['idempotency-key']
        const port = request.idempotentAnswer
        const answer: RefundAnswer = port
          ? {
              resumeId: port.resumeId,
              claim: (tx: Tx, refundId: string) => port.claim(tx, refundId),
              record: (tx: Tx, result) =>
                result instanceof AppError
                  ? port.record(tx, result.status, errorEnvelope(request.id, result))
                  : port.record(tx, refundStatus(result), refundAnswerJson(result)),
            }
          : NO_REFUND_ANSWER
        return answerOnce(
          reply,
          port,
          () =>
            refundPayment(
              deps,
              authOf(request).merchantId,
              request.params.id,
              {
                ...(request.body.amount !== undefined ? { amount: request.body.amount } : {}),
                ...(request.body.reason !== undefined ? { reason: request.body.reason } : {}),
                ...(request.body.metadata !== undefined ? { metadata: request.body.metadata } : {}),
                ...(typeof key === 'string' ? { idempotencyKey: key } : {}),
              },
              answer,
            ),
          (out) => reply.code(refundStatus(out)).send(refundAnswerJson(out)),
        )
      },
    )

    app.get(
      '/v1/payments/:id/refunds',
      {
        schema: {
          operationId: 'payments.listRefunds',
          tags,
          summary: 'Every refund record of a payment',
          description:
            "Every refund of the payment, whatever its status (`pending`, `completed`, `failed`), oldest first; not paginated. 404 SVC-RES-3301 when the payment is not this merchant's.",
          params: PaymentParams,
          response: { 200: RefundList, ...errorResponses },
        },
      },
      async (request) => ({
        items: (await listRefunds(deps, authOf(request).merchantId, request.params.id)).map(
          refundJson,
        ),
      }),
    )

    app.get(
      '/v1/installments',
      {
        schema: {
          operationId: 'payments.installments',
          tags,
          summary: 'Installment options and costs for a card BIN',
          description:
            "For `bin` (the card's first 6–8 digits, else 400 SVC-VAL-3001) and `amount`: the installment counts the card's BIN allows, each with the per-installment amount (the first carries the remainder) and the merchant's commission, as the charge will compute them.",
          querystring: InstallmentsQuery,
          response: { 200: InstallmentsResponse, ...errorResponses },
        },
      },
      async (request) =>
        quoteInstallments(
          deps,
          authOf(request).merchantId,
          request.query.bin,
          request.query.amount,
        ),
    )
  }
}

/** Routes that need no signature: the payment id is the bearer. */
export function paymentsPublicRoutes(deps: Deps): FastifyPluginAsync {
  return async (plain) => {
    const app = plain.withTypeProvider<TypeBoxTypeProvider>()
    app.get(
      '/v1/payments/:id/public-status',
      {
        schema: {
          operationId: 'public.payments.status',
          tags,
          summary: 'Public payment status (no signature; the payment id is the bearer)',
          description:
            "Only the payment's id and status, for a buyer's page to poll: no signature, the id is the bearer. 404 SVC-RES-3301 when there is no such payment; rate-limited per client (429).",
          security: [],
          params: PaymentParams,
          response: { 200: PublicStatus, 404: ErrorEnvelope, 429: ErrorEnvelope },
        },
      },
      async (request) => getPublicStatus(deps, request.params.id),
    )
  }
}

/** Sandbox helpers, registered only in `demo`. */
export function paymentsSandboxRoutes(deps: Deps): FastifyPluginAsync {
  return async (plain) => {
    const app = plain.withTypeProvider<TypeBoxTypeProvider>()
    app.post(
      '/v1/sandbox/payments/:id/3ds-challenge',
      {
        schema: {
          operationId: 'sandbox.payments.answer3ds',
          tags: ['sandbox'],
          summary: 'Answer a 3DS challenge as the buyer would at the ACS',
          description:
            "Sandbox only. Plays the buyer on the bank's challenge page of a `pending_3ds` payment: `otp` `123456` passes on the challenge test card, anything else fails. Returns `{correlationId, pares}` to send to `POST /v1/payments/{id}/3ds-callback`; 409 SVC-STATE-3401 when the payment is not waiting for 3DS.",
          params: PaymentParams,
          body: ChallengeBody,
          response: { 200: ChallengeResponse, ...errorResponses },
        },
      },
      async (request) =>
        sandboxSolveChallenge(
          deps,
          authOf(request).merchantId,
          request.params.id,
          request.body.otp,
        ),
    )
    app.post(
      '/v1/sandbox/kyc',
      {
        schema: {
          operationId: 'sandbox.setKyc',
          tags: ['sandbox'],
          summary: "Set the calling merchant's KYC status",
          description:
            'Only `approved` may take money in; any other status makes those calls 403 SVC-KYC-3101.',
          body: SandboxKycBody,
          response: { 200: SandboxKycResponse, ...errorResponses },
        },
      },
      async (request) => {
        const m = await setKycStatus(deps, authOf(request).merchantId, request.body.status)
        return { merchantId: m.id, status: m.kycStatus, decidedAt: isoZ(m.kycDecidedAt) }
      },
    )
    app.post(
      '/v1/sandbox/reconcile',
      {
        schema: {
          operationId: 'sandbox.reconcile',
          tags: ['sandbox'],
          summary: 'Run every due background job and reconciler once, now',
          description:
            "Sandbox only. Runs every background job that is due (reconcilers, webhook deliveries, expiries, renewals) once, now, and answers how many ran — instead of waiting for the worker's schedule.",
          body: EmptyBody,
          response: { 200: ReconcileResponse, ...errorResponses },
        },
      },
      async () => ({ ran: await deps.jobs.runDueOnce() }),
    )
  }
}
