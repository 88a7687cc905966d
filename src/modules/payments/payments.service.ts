import { setTimeout as sleep } from 'node:timers/promises'
import type { Deps, Tx } from '../../database.ts'
import { transact } from '../../platform/db/transaction.ts'
import { AppError, validationError } from '../../platform/errors.ts'
import { binInfo, getAcquirer } from '../acquirer/index.ts'
import { getMerchant } from '../merchants/index.ts'
import { authorizeAndSettle, emit, postCaptureLegs, saveCardIfAsked } from './charge.service.ts'
import { computeCommission } from './commission.ts'
import { declinedError, paymentsError } from './payments.errors.ts'
import * as repo from './payments.repository.ts'
import { paymentRowToPayment, type Payment } from './payment-view.ts'

export async function getPayment(deps: Deps, merchantId: string, paymentId: string) {
  const row = await repo.findPaymentById(deps.db, merchantId, paymentId)
  if (!row) throw paymentsError('payment_not_found')
  return paymentRowToPayment(row)
}

/** The public status endpoint: the payment id is the bearer; nothing but the status leaves. */
export async function getPublicStatus(deps: Deps, paymentId: string) {
  const row = await repo.findPaymentStatusById(deps.db, paymentId)
  if (!row) throw paymentsError('payment_not_found')
  return { paymentId: row.id, status: row.status }
}

// A duplicate 3DS submit that lost the race waits for the winner's outcome, within bounds.
const DUPLICATE_WAIT_MS_MAX = 5_000
const DUPLICATE_POLL_MS = 50

async function waitForOutcome(deps: Deps, merchantId: string, paymentId: string) {
  for (let waited = 0; ; waited += DUPLICATE_POLL_MS) {
    const row = await repo.findPaymentById(deps.db, merchantId, paymentId)
    if (!row) throw paymentsError('payment_not_found')
    if (row.status !== 'pending' || waited >= DUPLICATE_WAIT_MS_MAX) return paymentRowToPayment(row)
    await sleep(DUPLICATE_POLL_MS)
  }
}

function answerFor(payment: Payment): Payment {
  if (payment.status === 'failed')
    throw declinedError(payment.id, payment.declineCode ?? 'declined')
  return payment
}

/**
 * Completes a 3DS challenge. The pares is verified before anything changes; a duplicate
 * submit gets the same answer as the first (the winning row, or the same 402).
 */
export async function complete3ds(
  deps: Deps,
  merchantId: string,
  paymentId: string,
  input: { pares: string; correlationId: string },
): Promise<Payment> {
  const row = await repo.findPaymentById(deps.db, merchantId, paymentId)
  if (!row) throw paymentsError('payment_not_found')
  if (!row.correlation_id || row.correlation_id !== input.correlationId) {
    throw new AppError('SVC-3DS-3601', 400, 'correlationId does not match this payment')
  }
  const { authenticated } = await getAcquirer().verifyPares(deps, {
    paymentId,
    correlationId: input.correlationId,
    pares: input.pares,
  })
  if (row.status !== 'pending_3ds')
    return answerFor(await waitForOutcome(deps, merchantId, paymentId))
  const now = deps.clock.now()
  const claimed = await transact(deps.db, async (tx) => {
    const moved = await repo.transitionPayment(tx, merchantId, paymentId, ['pending_3ds'], {
      status: authenticated ? 'pending' : 'failed',
      ...(authenticated ? {} : { decline_code: 'authentication_failed', completed_at: now }),
      updated_at: now,
    })
    if (moved && !authenticated) {
      if (moved.session_id) await repo.incrementSessionFailures(tx, moved.session_id)
      await emit(tx, moved, 'payment.failed', now)
    }
    return moved
  })
  if (!claimed) return answerFor(await waitForOutcome(deps, merchantId, paymentId))
  if (!authenticated) throw declinedError(paymentId, 'authentication_failed')
  return authorizeAndSettle(deps, merchantId, paymentId)
}

// A claimed capture or void is taken over after this long: its request is assumed dead.
const ACTION_STALE_MS = 60_000

async function waitWhileClaimed(deps: Deps, merchantId: string, paymentId: string) {
  for (let waited = 0; ; waited += DUPLICATE_POLL_MS) {
    const row = await repo.findPaymentById(deps.db, merchantId, paymentId)
    if (!row) throw paymentsError('payment_not_found')
    if (row.action_in_flight === null || waited >= DUPLICATE_WAIT_MS_MAX) return row
    await sleep(DUPLICATE_POLL_MS)
  }
}

type Action = 'capture' | 'void'

/**
 * Runs a capture or a void: claim the authorized payment (so a capture and a void never both
 * reach the bank), call the acquirer outside any transaction, then record the outcome with
 * a conditional update. A request that finds the other action claimed waits for its outcome;
 * one that finds its own action done answers with the row (both are idempotent). A claim
 * older than ACTION_STALE_MS belonged to a request that died, possibly after the bank acted:
 * whoever takes it over finishes *that* action (the bank's capture and void are idempotent
 * per payment), never its own, so a dead capture can't be followed by a void.
 */
async function settleAuthorized(
  deps: Deps,
  merchantId: string,
  paymentId: string,
  action: Action,
  voidReason: string | null,
): Promise<Payment> {
  const done = action === 'capture' ? 'captured' : 'voided'
  const refused = paymentsError(action === 'capture' ? 'not_capturable' : 'not_voidable')
  let row = await repo.findPaymentById(deps.db, merchantId, paymentId)
  if (!row) throw paymentsError('payment_not_found')
  if (row.status === 'authorized') {
    const now = deps.clock.now()
    const stale = new Date(now.getTime() - ACTION_STALE_MS)
    const owned = await repo.claimPaymentAction(deps.db, merchantId, paymentId, action, now, stale)
    if (owned === null) {
      row = await waitWhileClaimed(deps, merchantId, paymentId)
    } else if (row.acquirer_reference) {
      const reason = owned === action ? voidReason : null
      row = await performAction(deps, row.merchant_id, paymentId, row.acquirer_reference, owned, {
        amount: row.amount,
        reason,
      })
    }
  }
  if (row.status === done) return paymentRowToPayment(row)
  throw refused
}

/** The claimed action at the bank, then its outcome on the row; the row as it then is. */
async function performAction(
  deps: Deps,
  merchantId: string,
  paymentId: string,
  reference: string,
  action: Action,
  input: { amount: number; reason: string | null },
) {
  try {
    if (action === 'capture') {
      await getAcquirer().capture(deps, { paymentId, reference, amount: input.amount })
    } else {
      await getAcquirer().void(deps, { paymentId, reference })
    }
  } catch (error) {
    await repo.releasePaymentAction(deps.db, paymentId)
    throw error
  }
  const now = deps.clock.now()
  const settled = await transact(deps.db, (tx) =>
    action === 'capture'
      ? finishCapture(tx, merchantId, paymentId, now)
      : finishVoid(tx, merchantId, paymentId, now, input.reason),
  )
  if (settled?.status === 'captured') await saveCardIfAsked(deps, settled)
  const row = await repo.findPaymentById(deps.db, merchantId, paymentId)
  if (!row) throw paymentsError('payment_not_found')
  return row
}

async function finishCapture(tx: Tx, merchantId: string, paymentId: string, now: Date) {
  const moved = await repo.transitionPayment(tx, merchantId, paymentId, ['authorized'], {
    status: 'captured',
    action_in_flight: null,
    completed_at: now,
    updated_at: now,
  })
  if (!moved) return undefined
  await postCaptureLegs(tx, moved, now)
  return emit(tx, moved, 'payment.captured', now)
}

async function finishVoid(
  tx: Tx,
  merchantId: string,
  paymentId: string,
  now: Date,
  reason: string | null,
) {
  const moved = await repo.transitionPayment(tx, merchantId, paymentId, ['authorized'], {
    status: 'voided',
    action_in_flight: null,
    void_reason: reason,
    completed_at: now,
    updated_at: now,
  })
  if (!moved) return undefined
  return emit(tx, moved, 'payment.voided', now, { reason })
}

/**
 * Captures the full authorized amount. Idempotent: an already captured payment is returned
 * as it is; of 20 concurrent captures one posts the ledger legs and all answer `captured`.
 */
export function capturePayment(deps: Deps, merchantId: string, paymentId: string) {
  return settleAuthorized(deps, merchantId, paymentId, 'capture', null)
}

/** Voids an uncaptured authorization. Idempotent on a voided row. Posts no ledger legs. */
export function voidPayment(
  deps: Deps,
  merchantId: string,
  paymentId: string,
  reason: string | null,
) {
  return settleAuthorized(deps, merchantId, paymentId, 'void', reason)
}

/**
 * Finishes captures and voids whose request died holding the claim (after the bank may have
 * acted): each is taken over and completed as claimed. Returns how many were finished.
 */
export async function finishStaleActions(deps: Deps, limit: number): Promise<number> {
  const stale = new Date(deps.clock.now().getTime() - ACTION_STALE_MS)
  const rows = await repo.findStaleActions(deps.db, stale, limit)
  let finished = 0
  for (const row of rows) {
    const action = row.action_in_flight
    if (action === null) continue
    try {
      await settleAuthorized(deps, row.merchant_id, row.id, action, null)
      finished++
    } catch (error) {
      deps.log.warn({ err: error, paymentId: row.id, action }, 'could not finish a stale action')
    }
  }
  return finished
}

export interface InstallmentOption {
  installmentCount: number
  installmentAmount: number
  firstInstallmentAmount: number
  totalAmount: number
  commission: number
}

/**
 * What the card's BIN allows and what each choice costs the merchant: the same numbers the
 * charge uses. The buyer pays the amount in equal parts; the first part carries the kuruş
 * that do not divide evenly.
 */
export async function quoteInstallments(
  deps: Deps,
  merchantId: string,
  bin: string,
  amount: number,
) {
  if (!/^\d{6,8}$/.test(bin)) throw validationError('bin', 'must be the first 6 to 8 digits')
  const info = binInfo(bin.slice(0, 6))
  const merchant = await getMerchant(deps, merchantId)
  const options: InstallmentOption[] = info.installments.map((count) => ({
    installmentCount: count,
    installmentAmount: Math.floor(amount / count),
    firstInstallmentAmount: amount - Math.floor(amount / count) * (count - 1),
    totalAmount: amount,
    commission: computeCommission(merchant.pricing, amount, count),
  }))
  return { bin: info.bin, brand: info.brand, cardType: info.cardType, bank: info.bank, options }
}

/** Sandbox helper: plays the buyer at the ACS and returns what it would redirect with. */
export async function sandboxSolveChallenge(
  deps: Deps,
  merchantId: string,
  paymentId: string,
  otp: string,
) {
  const row = await repo.findPaymentById(deps.db, merchantId, paymentId)
  if (!row) throw paymentsError('payment_not_found')
  if (row.status !== 'pending_3ds' || !row.correlation_id) throw paymentsError('not_pending_3ds')
  return getAcquirer().completeChallenge(deps, {
    paymentId,
    merchantId,
    correlationId: row.correlation_id,
    otp,
  })
}
