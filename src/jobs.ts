import type { Deps } from './database.ts'
import type { JobQueue } from './platform/jobs/queue.ts'
import { acquirerReconcilers } from './modules/acquirer/index.ts'
import { gatewayReconcilers } from './modules/gateway/index.ts'
import { installRiskPort, paymentsReconcilers } from './modules/payments/index.ts'
import { riskPortImpl, riskReconcilers } from './modules/risk/index.ts'
import { checkoutReconcilers } from './modules/checkout/index.ts'
import { webhooksJobs, webhooksReconcilers } from './modules/webhooks/index.ts'
import { transactionsJobs, transactionsReconcilers } from './modules/transactions/index.ts'
import { payoutsJobs, payoutsReconcilers } from './modules/payouts/index.ts'
import { subscriptionsJobs, subscriptionsReconcilers } from './modules/subscriptions/index.ts'
import { invoicesReconcilers } from './modules/invoices/index.ts'
import { disputesReconcilers } from './modules/disputes/index.ts'
import { requestLogsReconcilers } from './modules/request-logs/index.ts'

// The crontab and job registry: which module's reconcilers and jobs the worker runs.
// Each task's code lives in the module that owns the data.
export function registerJobs(queue: JobQueue, deps: Deps): void {
  // Every process that settles payments (the API's charge path, the worker's reconcilers)
  // decides risk through the risk module: payments calls it through this port.
  installRiskPort(riskPortImpl)
  for (const reconciler of gatewayReconcilers(deps)) queue.defineReconciler(reconciler)
  for (const reconciler of paymentsReconcilers(deps)) queue.defineReconciler(reconciler)
  for (const reconciler of checkoutReconcilers(deps)) queue.defineReconciler(reconciler)
  // After payments: a review whose authorization just expired closes in the same run.
  for (const reconciler of riskReconcilers(deps)) queue.defineReconciler(reconciler)
  for (const job of transactionsJobs(deps)) queue.define(job)
  for (const reconciler of transactionsReconcilers(deps)) queue.defineReconciler(reconciler)
  for (const job of payoutsJobs(deps)) queue.define(job)
  for (const reconciler of payoutsReconcilers(deps)) queue.defineReconciler(reconciler)
  // After payments: a renewal whose payment was pending sees the acquirer's answer in the same run.
  for (const job of subscriptionsJobs(deps)) queue.define(job)
  for (const reconciler of subscriptionsReconcilers(deps)) queue.defineReconciler(reconciler)
  // After payments: an invoice whose payment the acquirer answered late is paid in the same run.
  for (const reconciler of invoicesReconcilers(deps)) queue.defineReconciler(reconciler)
  // Chargeback deadlines, the sandbox bank's decisions on evidence, deadline reminders.
  for (const reconciler of disputesReconcilers(deps)) queue.defineReconciler(reconciler)
  // Each bank POS against its bank's books for the day before (events in the run's transaction).
  for (const reconciler of acquirerReconcilers(deps)) queue.defineReconciler(reconciler)
  // Housekeeping: the request log's lines past their retention.
  for (const reconciler of requestLogsReconcilers(deps)) queue.defineReconciler(reconciler)
  // Keep these last: reconcilers run in registration order, so one run (and one
  // POST /v1/sandbox/reconcile) dispatches the events every other module just recorded.
  for (const reconciler of webhooksReconcilers(deps)) queue.defineReconciler(reconciler)
  for (const job of webhooksJobs(deps)) queue.define(job)
}
