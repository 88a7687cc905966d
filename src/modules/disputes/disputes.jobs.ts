import type { Deps } from '../../database.ts'
import type { Reconciler } from '../../platform/jobs/queue.ts'
import { expireOverdueChargebacks } from './disputes.service.ts'

/**
 * Every minute: chargebacks left unanswered past `evidenceDueBy` close as `accepted` with
 * `resolution: expired`.
 */
export function disputesReconcilers(deps: Deps): Reconciler[] {
  return [
    {
      name: 'disputes.expire_chargebacks',
      cron: '* * * * *',
      run: () => expireOverdueChargebacks(deps),
    },
  ]
}
