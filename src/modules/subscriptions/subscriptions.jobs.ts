import type { Deps } from '../../database.ts'
import type { JobDefinition, Reconciler } from '../../platform/jobs/queue.ts'
import { renewDueSubscriptions, runQueuedCharge } from './renewals.service.ts'
import { CHARGE_NOW_JOB } from './subscription-view.ts'

/** Every minute: finished update-card sessions, leftover charges, then every due renewal. */
export function subscriptionsReconcilers(deps: Deps): Reconciler[] {
  return [
    {
      name: 'subscriptions.renew_due',
      cron: '* * * * *',
      run: () => renewDueSubscriptions(deps),
    },
  ]
}

/** A merchant's charge-now, enqueued in the transaction that moved the row to `charging`. */
export function subscriptionsJobs(deps: Deps): JobDefinition<{ subscriptionId: string }>[] {
  return [
    {
      name: CHARGE_NOW_JOB,
      handler: (data) => runQueuedCharge(deps, data.subscriptionId),
      // The claim makes a rerun harmless; a failed run is retried, and after that the
      // renewal reconciler takes the row over once its claim is stale.
      retryLimit: 3,
      retryDelaySeconds: 5,
    },
  ]
}
