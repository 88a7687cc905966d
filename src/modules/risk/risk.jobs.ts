import type { Deps } from '../../database.ts'
import type { Reconciler } from '../../platform/jobs/queue.ts'
import { expireReviews } from './reviews.service.ts'

const BATCH = 100

export function riskReconcilers(deps: Deps): Reconciler[] {
  return [
    // After payments.expire_authorizations: a review whose authorization it released closes.
    { name: 'risk.expire_reviews', cron: '*/5 * * * *', run: () => expireReviews(deps, BATCH) },
  ]
}
