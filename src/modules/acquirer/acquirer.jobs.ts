import type { Deps } from '../../database.ts'
import type { Reconciler } from '../../platform/jobs/queue.ts'
import { reconcileYesterday } from './reconciliation.service.ts'

// The daily reconciliation of every bank POS against its bank (reconciliation.service.ts).
export function acquirerReconcilers(deps: Deps): Reconciler[] {
  return [
    {
      name: 'acquirer.reconcile_pos_days',
      // 01:30 UTC is 04:30 in Istanbul: the banks' end of day (about 23:00–24:00) is past.
      cron: '30 1 * * *',
      run: () => reconcileYesterday(deps),
    },
  ]
}
