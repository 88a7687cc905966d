import type { Deps } from '../../database.ts'
import type { Reconciler } from '../../platform/jobs/queue.ts'
import { purgeExpiredIdempotencyKeys } from './gateway.service.ts'

/** The gateway's housekeeping: idempotency records past their 24 hours are deleted. */
export function gatewayReconcilers(deps: Deps): Reconciler[] {
  return [
    {
      name: 'gateway.purge_idempotency_keys',
      cron: '*/10 * * * *',
      run: () => purgeExpiredIdempotencyKeys(deps),
    },
  ]
}
