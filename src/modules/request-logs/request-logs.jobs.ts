import type { Deps } from '../../database.ts'
import type { Reconciler } from '../../platform/jobs/queue.ts'
import { purgeRequestLogs } from './request-logs.service.ts'

/** Requests past the retention are deleted (the worker's crontab, any number of workers). */
export function requestLogsReconcilers(deps: Deps): Reconciler[] {
  return [{ name: 'request_logs.purge', cron: '*/15 * * * *', run: () => purgeRequestLogs(deps) }]
}
