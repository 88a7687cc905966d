import type { Deps } from '../../database.ts'
import type { JobDefinition, Reconciler } from '../../platform/jobs/queue.ts'
import {
  BUILD_EXPORT_JOB,
  EXPORT_ATTEMPTS_MAX,
  buildExport,
  reconcileExports,
} from './exports.service.ts'

function assertExportJob(data: unknown): asserts data is { exportId: string } {
  if (
    typeof data !== 'object' ||
    data === null ||
    typeof (data as { exportId?: unknown }).exportId !== 'string'
  ) {
    throw new Error(`${BUILD_EXPORT_JOB}: payload must be {exportId}`)
  }
}

export function transactionsJobs(deps: Deps): JobDefinition<{ exportId: string }>[] {
  return [
    {
      name: BUILD_EXPORT_JOB,
      handler: async (data) => {
        assertExportJob(data)
        // The payload's export id names this job; the job builds whichever export is fairest.
        await buildExport(deps, data.exportId)
      },
      retryLimit: EXPORT_ATTEMPTS_MAX - 1,
      retryDelaySeconds: 30,
      // A 100,000-row PDF takes well under a minute (bench/RESULTS.md); a job still running
      // after 30 minutes is presumed dead and retried as a new attempt.
      expireInSeconds: 30 * 60,
    },
  ]
}

export function transactionsReconcilers(deps: Deps): Reconciler[] {
  return [
    {
      name: 'transactions.reconcile_exports',
      cron: '*/10 * * * *',
      run: () => reconcileExports(deps),
    },
  ]
}
