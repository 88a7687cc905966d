import type { Deps } from '../../database.ts'
import type { Reconciler } from '../../platform/jobs/queue.ts'
import { settleAuthorization } from './charge.service.ts'
import * as repo from './payments.repository.ts'
import { expireAuthorizations, finishStaleActions } from './captures.service.ts'
import { reconcileRefunds } from './refunds.service.ts'
import { expireSessions } from './sessions.service.ts'
import { capturesAtAuthorization } from './risk-check.ts'

// A `pending` payment no request has touched for this long was left by a crash.
const ABANDONED_AFTER_MS = 60_000
const BATCH = 200

/**
 * Resolves authorizations whose outcome is unknown by asking the acquirer: never by
 * authorizing again, so a timed-out charge can never be taken twice.
 */
export async function reconcilePendingPayments(deps: Deps): Promise<number> {
  const abandonedBefore = new Date(deps.clock.now().getTime() - ABANDONED_AFTER_MS)
  const rows = await repo.findUnsettledPayments(deps.db, abandonedBefore, BATCH)
  let moved = 0
  for (const row of rows) {
    const answer = await deps.acquirer.inquire(deps, { paymentId: row.id })
    if (answer.status === 'unknown') continue
    const settled = await settleAuthorization(
      deps,
      row.merchant_id,
      row.id,
      answer,
      capturesAtAuthorization(row),
    )
    if (settled.status !== 'pending') moved++
  }
  return moved
}

export function paymentsReconcilers(deps: Deps): Reconciler[] {
  return [
    {
      name: 'payments.reconcile_pending_payments',
      cron: '* * * * *',
      run: () => reconcilePendingPayments(deps),
    },
    {
      name: 'payments.finish_stale_actions',
      cron: '* * * * *',
      run: () => finishStaleActions(deps, BATCH),
    },
    { name: 'payments.reconcile_refunds', cron: '* * * * *', run: () => reconcileRefunds(deps) },
    {
      name: 'payments.expire_authorizations',
      cron: '*/5 * * * *',
      run: () => expireAuthorizations(deps, BATCH),
    },
    { name: 'payments.expire_sessions', cron: '* * * * *', run: () => expireSessions(deps) },
  ]
}
