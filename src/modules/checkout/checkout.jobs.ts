import type { Deps } from '../../database.ts'
import type { Reconciler } from '../../platform/jobs/queue.ts'
import { purgeTokenizationLog } from './checkout.service.ts'

export function checkoutReconcilers(deps: Deps): Reconciler[] {
  return [
    {
      // The guard only looks 10 minutes back; older rows are dead weight.
      name: 'checkout.purge_tokenization_log',
      cron: '*/10 * * * *',
      run: () => purgeTokenizationLog(deps),
    },
  ]
}
