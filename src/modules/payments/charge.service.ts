import { isIP } from 'node:net'
import type { Deps, Tx } from '../../database.ts'
import { sha256Hex } from '../../platform/crypto.ts'
import { isUniqueViolation, transact } from '../../platform/db/transaction.ts'
import { AppError, isNotFound, validationError } from '../../platform/errors.ts'
import { checkMetadata } from '../../platform/metadata.ts'
import { newId } from '../../platform/ids.ts'
import { failpoint } from '../../platform/failpoints.ts'
import { countPaymentOutcome } from '../../platform/metrics.ts'
import { stableStringify } from '../../platform/json.ts'
import { binInfo, type AuthorizeResult } from '../acquirer/index.ts'
import { recordEvent } from '../events/index.ts'
import { postCapture, type Share } from '../ledger/index.ts'
import { attachCardToCustomer, getCustomer, type Customer } from '../customers/index.ts'
import { getMerchant } from '../merchants/index.ts'
import { depsOnClock } from '../test-clocks/index.ts'
import { cardTokenFromColumn, claimCardToken } from '../vault/index.ts'
import { computeCommission } from './commission.ts'
import { declinedError, paymentsError } from './payments.errors.ts'
import * as repo from './payments.repository.ts'
import * as sessionsRepo from './sessions.repository.ts'
import { cardMask, paymentEventData, paymentRowToPayment, type Payment } from './payment-view.ts'
import type { NewPayment, PaymentRow, ShareRow, SplitRow } from './payments.table.ts'
import { sessionRowToSession } from './sessions.service.ts'
import {
  capturesAtAuthorization,
  checkRisk,
  riskBlockedError,
  velocityLocksOf,
} from './risk-check.ts'
import { riskPort } from './risk-port.ts'

export const FAILED_ATTEMPTS_MAX = 5

export interface ChargeInput {
  transactionId: string
  amount: number
  currency: 'TRY'
  cardToken: string
  installmentCount?: number
  threeDSecure?: boolean
  customerId?: string
  saveCard?: boolean
  capture?: boolean
  metadata?: Record<string, string>
  /** The buyer's IP as the merchant saw it: the risk check's `ip` fact. */
  ip?: string
}

/** How a charge ended, for the HTTP layer: 201 new, 200 fence replay, 202 outcome unknown. */
export interface ChargeOutcome {
  payment: Payment
  replay: boolean
  challengeUrl: string | null
}

/** The parent merchant first (it takes ties), then each split's submerchant. */
export function sharesFor(merchantId: string, amount: number, splits: SplitRow[]): ShareRow[] {
  const splitTotal = splits.reduce((sum, s) => sum + s.amountMinor, 0)
  return [
    { ownerType: 'merchant' as const, ownerId: merchantId, grossMinor: amount - splitTotal },
    ...splits.map((s) => ({
      ownerType: 'submerchant' as const,
      ownerId: s.submerchantId,
      grossMinor: s.amountMinor,
    })),
  ].filter((s) => s.grossMinor > 0)
}

function challengeUrlFor(deps: Deps, payment: Payment): string | null {
  if (payment.status !== 'pending_3ds' || !payment.correlationId) return null
  return `${deps.config.checkoutUrl}/3ds/${payment.id}?correlationId=${encodeURIComponent(payment.correlationId)}`
}

/**
 * The charge's side of its Idempotency-Key record (decision 0035). `claim` runs in the claim
 * transaction (the intent and its risk decision), `record` in the outcome transaction, with
 * the final answer: the payment (201) or the refusal it ended in (402). NO_ANSWER without a
 * key (and for the checkout page, which has no key).
 */
export interface ChargeAnswer {
  /** The payment an earlier attempt with this key claimed and never answered: resumed. */
  readonly resumeId: string | null
  claim(tx: Tx, paymentId: string): Promise<void>
  record(tx: Tx, result: ChargeOutcome | AppError): Promise<void>
}

export const NO_ANSWER: ChargeAnswer = {
  resumeId: null,
  claim: async () => undefined,
  record: async () => undefined,
}

/** What a charge that ended as `row` answers, inside its outcome transaction. */
async function recordCharge(
  deps: Deps,
  tx: Tx,
  row: PaymentRow,
  answer: ChargeAnswer,
): Promise<ChargeOutcome> {
  const payment = paymentRowToPayment(row)
  const outcome = { payment, replay: false, challengeUrl: challengeUrlFor(deps, payment) }
  // A pending payment (the bank did not answer) is no answer yet: 202, re-evaluated on retry.
  if (row.status === 'pending') return outcome
  const refusal = chargeRefusal(row)
  await answer.record(tx, refusal ?? outcome)
  return outcome
}

/** The 402 a failed charge answers: a risk block, or the bank's decline. */
function chargeRefusal(row: PaymentRow): AppError | null {
  if (row.status !== 'failed') return null
  return row.decline_code === 'blocked'
    ? riskBlockedError(row.id)
    : declinedError(row.id, row.decline_code ?? 'declined')
}

/**
 * A retry of a charge whose first attempt died after its claim committed: the same payment,
 * carried on from where it stands (to the bank under the same order id, the payment id,
 * which never authorizes twice), or answered as it ended. Never a second payment.
 */
async function resumeCharge(
  wall: Deps,
  merchantId: string,
  paymentId: string,
  answer: ChargeAnswer,
): Promise<ChargeOutcome> {
  const found = await repo.findPaymentById(wall.db, merchantId, paymentId)
  if (!found) throw paymentsError('payment_not_found')
  const deps = await depsOnClock(wall, found.test_clock_id)
  if (found.status === 'pending') return proceedCharge(deps, found, answer)
  return answerSettled(deps, found, answer)
}

/**
 * A payment that is past its request's phases, answered as it stands: the answer recorded
 * in a transaction of its own (nothing else changes), then a refusal thrown as the 402 it is.
 */
export async function answerSettled(
  deps: Deps,
  found: PaymentRow,
  answer: ChargeAnswer,
): Promise<ChargeOutcome> {
  const outcome = await transact(deps.db, (tx) => recordCharge(deps, tx, found, answer))
  const refusal = chargeRefusal(found)
  if (refusal) throw refusal
  return outcome
}

function replayOrConflict(deps: Deps, existing: PaymentRow, fingerprint: string): ChargeOutcome {
  if (existing.fingerprint !== fingerprint) throw paymentsError('fence_conflict')
  const payment = paymentRowToPayment(existing)
  return { payment, replay: true, challengeUrl: challengeUrlFor(deps, payment) }
}

/**
 * The charge's customer, read once (the risk check's email fact and, in the sandbox, the
 * test clock the charge lives on). An unknown id is no customer: the charge does not depend
 * on it, as before.
 */
async function chargeCustomer(
  deps: Deps,
  merchantId: string,
  customerId: string | null,
): Promise<Customer | null> {
  if (customerId === null) return null
  try {
    return await getCustomer(deps, merchantId, customerId)
  } catch (error) {
    if (isNotFound(error)) return null
    throw error
  }
}

/**
 * Charges a vault token against an active checkout session in two transactions, so no
 * network call happens inside one (decision 0035): (1) the claim — the intent as a `pending`
 * payment, the Idempotency-Key naming it, the risk decision; (2) the acquirer, with the
 * payment id as its order id; (3) the outcome — status, ledger legs, outbox event, session,
 * and the recorded answer. A crash between (1) and (3) leaves a `pending` payment that a
 * retry with the key resumes (resumeCharge) or the reconciler settles.
 */
export async function chargeCard(
  wall: Deps,
  caller: { merchantId: string },
  input: ChargeInput,
  answer: ChargeAnswer = NO_ANSWER,
): Promise<ChargeOutcome> {
  const fingerprint = sha256Hex(stableStringify(input))
  const { merchantId } = caller
  if (answer.resumeId !== null) return resumeCharge(wall, merchantId, answer.resumeId, answer)
  // The session and the card token in one statement; the token is looked at once the
  // session has passed its checks, as when it was read on its own.
  const found = await sessionsRepo.findSessionWithCardToken(
    wall.db,
    merchantId,
    input.transactionId,
    input.cardToken,
  )
  if (!found) throw paymentsError('session_not_found')
  const { charge_card_token: tokenColumn, ...sessionRow } = found
  const session = sessionRowToSession(sessionRow, wall.clock.now())
  if (session.mode !== 'payment') throw paymentsError('session_mode_mismatch')
  if (session.status !== 'active') {
    // A session is completed by its payment: a repeat of that charge is answered from it.
    const fenced = await repo.findFencedPayment(wall.db, merchantId, input.transactionId)
    if (fenced) return replayOrConflict(wall, fenced, fingerprint)
    throw paymentsError('session_not_active')
  }
  if (input.amount !== session.amount) throw paymentsError('amount_mismatch')
  if (input.ip !== undefined && isIP(input.ip) === 0) {
    throw validationError('ip', 'must be an IPv4 or IPv6 address')
  }
  // The session's metadata, with the charge's own keys over it (docs/payments.md).
  const metadata = Object.fromEntries([
    ...Object.entries(session.metadata),
    ...Object.entries(input.metadata ?? {}),
  ])
  checkMetadata(metadata)
  if (session.failedAttempts >= FAILED_ATTEMPTS_MAX) throw paymentsError('too_many_failed_attempts')

  const token = cardTokenFromColumn(tokenColumn)
  if (token.status !== 'active') throw paymentsError('card_token_revoked')
  // A token from Kuruş.js (the buyer's browser) pays for this one order only (decision 0038).
  if (token.singleUse) await claimCardToken(wall, merchantId, input.cardToken, input.transactionId)
  const installmentCount = input.installmentCount ?? 1
  const bin = binInfo(token.bin)
  if (!bin.installments.includes(installmentCount)) {
    throw validationError(
      'installmentCount',
      `this card allows ${bin.installments.join(', ')} installment(s)`,
    )
  }
  const merchant = await getMerchant(wall, merchantId)
  const customerId = input.customerId ?? session.customerId
  const customer = await chargeCustomer(wall, merchantId, customerId)
  // A customer on a sandbox test clock: the payment lives at the clock's time (dated on it,
  // its authorization expires only as the clock advances; decision 0034). No statement is
  // added without one. A deleted clock leaves wall time, and the payment off any clock.
  const deps = await depsOnClock(wall, customer?.testClockId ?? null)
  const testClockId = deps === wall ? null : (customer?.testClockId ?? null)
  const now = deps.clock.now()
  // No bank can take it (live without a usable POS): 402 before anything is recorded.
  await deps.acquirer.assertCanCharge?.(deps, {
    merchantId,
    threeDSecure: input.threeDSecure ?? true,
  })
  const paymentId = newId('pay')
  let intent: PaymentRow
  let blocked = false
  try {
    // The claim: one transaction, committed without waiting for the WAL flush (the vault's
    // synchronous audit of the card's read flushes it before any bank sees the card; a
    // block, answered at once, commits synchronously). A payment still in flight (pending,
    // or waiting for 3DS) keeps its session active; a repeat of its charge under another
    // key meets the transactionId fence here and is answered from it.
    intent = await transact(deps.db, async (tx) => {
      // The key first: a concurrent request with the same key waits here for this claim to
      // commit and is then refused as in flight (409 SVC-GW-2002), rather than meeting the
      // transactionId fence below and being answered with this payment while it is pending.
      await answer.claim(tx, paymentId)
      const intentRow: NewPayment = {
        id: paymentId,
        merchant_id: merchantId,
        store_id: session.storeId,
        session_id: session.id,
        transaction_id: input.transactionId,
        method: 'card',
        status: 'pending',
        amount: input.amount,
        currency: 'TRY',
        commission: computeCommission(merchant.pricing, input.amount, installmentCount),
        installment_count: installmentCount,
        card_token: token.cardToken,
        card_mask: cardMask(token.bin, token.last4, token.brand),
        card_brand: token.brand,
        card_type: token.cardType,
        bin: token.bin,
        three_d_secure: input.threeDSecure ?? true,
        capture_requested: input.capture ?? true,
        auth_code: null,
        acquirer_reference: null,
        decline_code: null,
        correlation_id: null,
        customer_id: customerId,
        // Save-card is honoured only for the customer the merchant bound to the session.
        save_card:
          (input.saveCard ?? false) &&
          session.customerId !== null &&
          customerId === session.customerId,
        callback_url: session.callbackUrl,
        shares: JSON.stringify(sharesFor(merchantId, input.amount, session.splits)),
        metadata: JSON.stringify(metadata),
        payment_link_id: session.paymentLinkId,
        card_fingerprint: token.fingerprint,
        client_ip: input.ip ?? null,
        fingerprint,
        void_reason: null,
        test_clock_id: testClockId,
        created_at: now,
        authorized_at: null,
        completed_at: null,
        updated_at: now,
      }
      const row = await repo.insertCardIntent(tx, intentRow, velocityLocksOf(intentRow))
      // Lists and rules (risk-check.ts): require_3ds forces the challenge; a block fails it.
      const decided = await checkRisk(deps, tx, row, customer?.email ?? null)
      if (decided.blocked) {
        blocked = true
        await answer.record(tx, riskBlockedError(paymentId))
      }
      return decided.row
    })
  } catch (error) {
    if (!isUniqueViolation(error)) throw error
    // A concurrent identical charge holds the fence: answer as a repeat would.
    const winner = await repo.findFencedPayment(deps.db, merchantId, input.transactionId)
    if (!winner) throw error
    return replayOrConflict(deps, winner, fingerprint)
  }
  if (blocked) throw riskBlockedError(paymentId)
  failpoint('charge.after_intent')
  return proceedCharge(deps, intent, answer)
}

/** From a claimed `pending` payment to its outcome: 3DS when asked, else the bank. */
async function proceedCharge(
  deps: Deps,
  intent: PaymentRow,
  answer: ChargeAnswer,
): Promise<ChargeOutcome> {
  const { merchant_id: merchantId, id: paymentId } = intent
  if (intent.three_d_secure && intent.card_token) {
    // The ACS answers a repeat for one payment as it answered the first.
    const start = await deps.acquirer.start3ds(deps, {
      paymentId,
      merchantId,
      cardToken: intent.card_token,
      amount: intent.amount,
      forceChallenge: intent.risk?.decision === 'require_3ds',
      installmentCount: intent.installment_count,
      capture: capturesAtAuthorization(intent),
    })
    if (start.kind === 'challenge') {
      return transact(deps.db, async (tx) => {
        const moved = await repo.transitionPayment(tx, merchantId, paymentId, ['pending'], {
          status: 'pending_3ds',
          correlation_id: start.correlationId,
          updated_at: deps.clock.now(),
        })
        const row = moved ?? (await repo.findPaymentById(tx, merchantId, paymentId))
        if (!row) throw paymentsError('payment_not_found')
        return recordCharge(deps, tx, row, answer)
      })
    }
  }
  const payment = await authorizeAndSettle(deps, merchantId, paymentId, intent, answer)
  return { payment, replay: false, challengeUrl: null }
}

/**
 * Steps 2 and 3 of a charge, shared by the 3DS callback. Throws 402 on a decline. `intent`
 * is the payment row when the caller has just written it (saves a read).
 */
export async function authorizeAndSettle(
  wall: Deps,
  merchantId: string,
  paymentId: string,
  intent?: PaymentRow,
  answer: ChargeAnswer = NO_ANSWER,
): Promise<Payment> {
  const row = intent ?? (await repo.findPaymentById(wall.db, merchantId, paymentId))
  if (!row?.card_token) throw paymentsError('payment_not_found')
  // The 3DS callback comes at wall time; a payment on a test clock is dated on the clock.
  const deps = intent ? wall : await depsOnClock(wall, row.test_clock_id)
  const result = await deps.acquirer.authorize(deps, {
    paymentId,
    merchantId,
    cardToken: row.card_token,
    amount: row.amount,
    installmentCount: row.installment_count,
    capture: capturesAtAuthorization(row),
  })
  failpoint('charge.after_acquirer')
  const settled = await settleAuthorization(
    deps,
    merchantId,
    paymentId,
    result,
    capturesAtAuthorization(row),
    answer,
  )
  failpoint('charge.after_commit')
  if (settled.status === 'failed')
    throw declinedError(settled.id, settled.declineCode ?? 'declined')
  return settled
}

/**
 * Records the acquirer's answer for a `pending` payment in one transaction: the status,
 * the ledger legs (on capture), the outbox event and the session's completion. Used by the
 * charge path and by the reconciler; whichever comes second finds the row already moved
 * and returns it as it is.
 */
export async function settleAuthorization(
  deps: Deps,
  merchantId: string,
  paymentId: string,
  result: AuthorizeResult,
  /** The payment's capture_requested (fixed when it was created). */
  capture: boolean,
  answer: ChargeAnswer = NO_ANSWER,
): Promise<Payment> {
  const settled = await recordAuthorization(deps, merchantId, paymentId, result, capture, answer)
  countPaymentOutcome(settled.status)
  if (settled.status === 'captured') await saveCardIfAsked(deps, settled)
  return settled
}

/**
 * Save-card: after a captured payment whose buyer asked for it, the card is attached to the
 * session's customer. The payment has succeeded whatever happens here, so a failure (the
 * customer was deleted meanwhile, the token belongs to another customer) is logged, not thrown.
 */
export async function saveCardIfAsked(deps: Deps, payment: Payment): Promise<void> {
  if (!payment.saveCard || !payment.customerId || !payment.cardToken) return
  try {
    await attachCardToCustomer(deps, payment.merchantId, payment.customerId, payment.cardToken)
  } catch (error) {
    deps.log.warn({ err: error, paymentId: payment.id }, 'save-card after capture failed')
  }
}

async function recordAuthorization(
  deps: Deps,
  merchantId: string,
  paymentId: string,
  result: AuthorizeResult,
  capture: boolean,
  answer: ChargeAnswer,
): Promise<Payment> {
  if (result.status === 'unknown') {
    await repo.markOutcomeUnknown(deps.db, paymentId, deps.clock.now())
    const row = await repo.findPaymentById(deps.db, merchantId, paymentId)
    if (!row) throw paymentsError('payment_not_found')
    return paymentRowToPayment(row)
  }
  return transact(deps.db, async (tx) => {
    const now = deps.clock.now()
    // The conditional update is the claim: whoever records second (the charge path or the
    // reconciler) moves nothing and answers with the row as the first one left it.
    const settledBefore = async () => {
      const current = await repo.findPaymentById(tx, merchantId, paymentId)
      if (!current) throw paymentsError('payment_not_found')
      return (await recordCharge(deps, tx, current, answer)).payment
    }
    if (result.status === 'declined') {
      const row = await repo.transitionPayment(tx, merchantId, paymentId, ['pending'], {
        status: 'failed',
        decline_code: result.declineCode,
        completed_at: now,
        updated_at: now,
      })
      if (!row) return settledBefore()
      if (row.session_id) await sessionsRepo.incrementSessionFailures(tx, row.session_id)
      await recordCharge(deps, tx, row, answer)
      return emit(tx, row, 'payment.failed', now)
    }
    // The move, the session's completion and a whole capture in one statement.
    const settled = await repo.settleApprovedPayment(
      tx,
      merchantId,
      paymentId,
      {
        status: capture ? 'captured' : 'authorized',
        auth_code: result.authCode,
        acquirer_reference: result.reference,
        authorized_at: now,
        completed_at: capture ? now : null,
        updated_at: now,
      },
      capture ? { captureId: fullCaptureId(paymentId), at: now } : null,
    )
    if (!settled) return settledBefore()
    const { row } = settled
    // A review holds the payment at `authorized` (capture was withheld above) until approved.
    if (row.status === 'authorized' && row.risk?.decision === 'review') {
      await riskPort()?.openReview(tx, {
        merchantId: row.merchant_id,
        storeId: row.store_id,
        paymentId: row.id,
        reasons: row.risk.reasons,
        at: now,
      })
    }
    const payment = settled.capture
      ? await emit(
          tx,
          row,
          'payment.captured',
          now,
          await postFullCapture(tx, row, now, settled.capture),
        )
      : await emit(tx, row, 'payment.authorized', now)
    await recordCharge(deps, tx, row, answer)
    failpoint('charge.before_commit')
    return payment
  })
}

/** The id of a capture of the whole authorization at once: one per payment, so derived. */
export function fullCaptureId(paymentId: string): string {
  return `cap_${paymentId.slice(paymentId.indexOf('_') + 1)}`
}

/**
 * A capture of the whole amount at once (a charge with capture, a QR payment): its capture
 * row and ledger legs, inside the caller's transaction. Returns what `payment.captured`
 * carries about it.
 */
export async function recordFullCapture(tx: Tx, row: PaymentRow, at: Date) {
  const capture = await repo.insertCapture(tx, {
    id: fullCaptureId(row.id),
    merchant_id: row.merchant_id,
    payment_id: row.id,
    amount: row.amount,
    commission: row.commission,
    final: true,
    status: 'completed',
    created_at: at,
    completed_at: at,
  })
  return postFullCapture(tx, row, at, capture)
}

/** The ledger legs of a whole capture whose row is written (`recordFullCapture`'s second half). */
async function postFullCapture(
  tx: Tx,
  row: PaymentRow,
  at: Date,
  capture: { id: string; amount: number },
) {
  await postCaptureLegs(tx, row, at, capture)
  return { captureId: capture.id, amount: capture.amount, authorizedAmount: row.amount }
}

/**
 * The ledger legs of one capture: the whole authorization at once (`capture:<paymentId>`) or
 * one of several (`capture:<captureId>`, its step of the cumulative apportionment). `row` is
 * the payment as it was before this capture.
 */
export async function postCaptureLegs(
  tx: Tx,
  row: PaymentRow,
  at: Date,
  capture: { id: string; amount: number },
  previousCapturedMinor = 0,
): Promise<void> {
  const shares: Share[] = row.shares.map((s) => ({ ...s }))
  await postCapture(tx, {
    merchantId: row.merchant_id,
    paymentId: row.id,
    amount: row.amount,
    commission: row.commission,
    shares,
    at,
    captureId: capture.id,
    previousCapturedMinor,
    captureAmount: capture.amount,
  })
}

export async function emit(
  tx: Tx,
  row: PaymentRow,
  type: string,
  at: Date,
  extra: Record<string, unknown> = {},
): Promise<Payment> {
  const payment = paymentRowToPayment(row)
  await recordEvent(tx, {
    merchantId: row.merchant_id,
    storeId: row.store_id,
    type,
    resourceType: 'payment',
    resourceId: row.id,
    data: { ...paymentEventData(payment), ...extra },
    callbackUrl: row.callback_url,
    at,
  })
  return payment
}
