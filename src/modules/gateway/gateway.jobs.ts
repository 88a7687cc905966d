import type { Deps } from '../../database.ts'
import type { Reconciler } from '../../platform/jobs/queue.ts'
import { purgeExpiredAcceptedSignatures, purgeExpiredIdempotencyKeys } from './gateway.service.ts'

/**
 * The gateway's housekeeping: idempotency records past their 24 hours and accepted signatures
 * past their window are deleted.
 */
export function gatewayReconcilers(deps: Deps): Reconciler[] {
  return [
    {
      name: 'gateway.purge_idempotency_keys',
      cron: '*/10 * * * *',
      run: () => purgeExpiredIdempotencyKeys(deps),
    },
    {
      name: 'gateway.purge_accepted_signatures',
      cron: '* * * * *',
      run: () => purgeExpiredAcceptedSignatures(deps),
    },
  ]
}
