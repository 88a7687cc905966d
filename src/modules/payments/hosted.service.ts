import type { Deps } from '../../database.ts'
import { transact } from '../../platform/db/transaction.ts'
import { paymentsError } from './payments.errors.ts'
import * as repo from './payments.repository.ts'
import * as sessionsRepo from './sessions.repository.ts'
import { findPaymentByIdUnscoped } from './hosted.repository.ts'
import { paymentRowToPayment, type Payment } from './payment-view.ts'
import { sessionRowToSession, type Session } from './sessions.service.ts'

// Use cases the hosted checkout pages need from payments: the session's live payment,
// the payment behind an ACS link, and completing a session that took no payment
// (card_update_only).

/** The session's payment that is not `failed` (the transactionId fence holds at most one). */
export async function getSessionPayment(
  deps: Deps,
  session: Session,
): Promise<Payment | undefined> {
  const row = await repo.findFencedPayment(deps.db, session.merchantId, session.transactionId)
  return row ? paymentRowToPayment(row) : undefined
}

/**
 * The payment an ACS link names, with its session. The payment id in the link is the
 * bearer (as for the public status), so the lookup spans merchants: never echo it raw.
 */
export async function getPaymentForChallenge(
  deps: Deps,
  paymentId: string,
): Promise<{ payment: Payment; session: Session | undefined }> {
  const row = await findPaymentByIdUnscoped(deps.db, paymentId)
  if (!row) throw paymentsError('payment_not_found')
  const sessionRow = row.session_id
    ? await sessionsRepo.findSessionById(deps.db, row.session_id)
    : undefined
  return {
    payment: paymentRowToPayment(row),
    session: sessionRow ? sessionRowToSession(sessionRow, deps.clock.now()) : undefined,
  }
}

/**
 * Moves an active session to `completed` (card_update_only, once the card is attached).
 * Conditional on `active`: of two concurrent completions one wins; both see `completed`.
 * An expired or cancelled session is 409.
 */
export async function completeSession(deps: Deps, sessionId: string): Promise<Session> {
  const now = deps.clock.now()
  const before = await sessionsRepo.findSessionById(deps.db, sessionId)
  if (!before) throw paymentsError('session_not_found')
  const current = sessionRowToSession(before, now)
  if (current.status === 'completed') return current
  if (current.status !== 'active') throw paymentsError('session_not_active')
  await transact(deps.db, (tx) =>
    sessionsRepo.updateSessionStatus(tx, sessionId, 'active', 'completed', now),
  )
  const after = await sessionsRepo.findSessionById(deps.db, sessionId)
  if (!after) throw paymentsError('session_not_found')
  const session = sessionRowToSession(after, now)
  if (session.status !== 'completed') throw paymentsError('session_not_active')
  return session
}
