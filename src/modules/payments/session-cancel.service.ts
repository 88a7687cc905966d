import type { Deps } from '../../database.ts'
import { transact } from '../../platform/db/transaction.ts'
import { paymentsError } from './payments.errors.ts'
import * as sessionsRepo from './sessions.repository.ts'
import { sessionRowToSession, type Session } from './sessions.service.ts'

/**
 * Cancels a checkout session the service opened for one of its own resources (an invoice
 * that is cancelled or expires). Conditional on `active`: a session that has already
 * completed, expired or been cancelled is returned as it is, so of a cancel and a
 * completion racing, exactly one wins. Another merchant's session is 404.
 */
export async function cancelSession(
  deps: Deps,
  merchantId: string,
  sessionId: string,
): Promise<Session> {
  const now = deps.clock.now()
  const before = await sessionsRepo.findSessionById(deps.db, sessionId)
  if (before?.merchant_id !== merchantId) throw paymentsError('session_not_found')
  const current = sessionRowToSession(before, now)
  if (current.status !== 'active') return current
  await transact(deps.db, (tx) =>
    sessionsRepo.updateSessionStatus(tx, sessionId, 'active', 'cancelled', now),
  )
  const after = await sessionsRepo.findSessionById(deps.db, sessionId)
  if (!after) throw paymentsError('session_not_found')
  return sessionRowToSession(after, now)
}
