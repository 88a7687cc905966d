// Subscriptions: recurring charges of saved cards, the renewal engine and the buyer portal.
// Other modules import only this file.
export {
  subscriptionsRoutes,
  subscriptionsPublicRoutes,
  subscriptionsSandboxRoutes,
  subscriptionJson,
} from './subscriptions.http.ts'
export { subscriptionPagesRoutes } from './subscriptions.pages.ts'
export type { SubscriptionPagesOptions } from './subscriptions.pages.ts'
export { subscriptionsJobs, subscriptionsReconcilers } from './subscriptions.jobs.ts'
export {
  cancelSubscription,
  chargeSubscriptionNow,
  createSubscription,
  getSubscription,
  listSubscriptionCharges,
  listSubscriptions,
  pauseSubscription,
  resumeSubscription,
  retrySubscription,
} from './subscriptions.service.ts'
export type { CreateSubscriptionInput } from './subscriptions.service.ts'
export {
  advanceSubscription,
  renewDueSubscriptions,
  runQueuedCharge,
  DUNNING_DELAYS_MS,
  STALE_CLAIM_MS,
  KYC_DEFER_MS,
} from './renewals.service.ts'
export { addInterval, cycleDueAt } from './calendar.ts'
export type { Subscription, SubscriptionCharge } from './subscription-view.ts'
export type { SubscriptionStatus } from './subscriptions.table.ts'
