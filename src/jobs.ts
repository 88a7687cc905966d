import type { Deps } from './database.ts'
import type { JobQueue } from './platform/jobs/queue.ts'
import { paymentsReconcilers } from './modules/payments/index.ts'
import { transactionsJobs, transactionsReconcilers } from './modules/transactions/index.ts'

// The crontab and job registry: which module's reconcilers and jobs the worker runs.
// Each task's code lives in the module that owns the data.
export function registerJobs(queue: JobQueue, deps: Deps): void {
  for (const reconciler of paymentsReconcilers(deps)) queue.defineReconciler(reconciler)
  for (const job of transactionsJobs(deps)) queue.define(job)
  for (const reconciler of transactionsReconcilers(deps)) queue.defineReconciler(reconciler)
}
