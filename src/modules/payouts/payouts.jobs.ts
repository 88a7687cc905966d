import type { Deps } from '../../database.ts'
import { assert } from '../../platform/assert.ts'
import type { JobDefinition, Reconciler } from '../../platform/jobs/queue.ts'
import { PROCESS_PAYOUT_JOB, processPayout, reconcileStalePayouts } from './payouts.service.ts'
import { settleFunds } from './settlement.service.ts'

interface ProcessPayoutData {
  merchantId: string
  payoutId: string
}

function assertProcessPayoutData(data: unknown): asserts data is ProcessPayoutData {
  const d = data as Partial<Record<keyof ProcessPayoutData, unknown>> | null
  assert(
    typeof d?.merchantId === 'string' && typeof d.payoutId === 'string',
    `${PROCESS_PAYOUT_JOB}: bad payload`,
  )
}

export function payoutsJobs(deps: Deps): JobDefinition<ProcessPayoutData>[] {
  return [
    {
      name: PROCESS_PAYOUT_JOB,
      // Ids only; the handler re-reads the payout and each step is conditional, so a retry
      // after a crash (at least once delivery) is safe.
      handler: async (data) => {
        assertProcessPayoutData(data)
        await processPayout(deps, data.merchantId, data.payoutId)
      },
      retryLimit: 8,
      retryDelaySeconds: 15,
    },
  ]
}

export function payoutsReconcilers(deps: Deps): Reconciler[] {
  return [
    { name: 'payouts.settle_funds', cron: '* * * * *', run: () => settleFunds(deps) },
    {
      name: 'payouts.reconcile_payouts',
      cron: '*/5 * * * *',
      run: () => reconcileStalePayouts(deps),
    },
  ]
}
