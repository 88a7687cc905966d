// Subscriptions: recurring charges of saved cards, the renewal engine and the buyer portal.
// Other modules import only this file.
export {
  subscriptionsRoutes,
  subscriptionsPublicRoutes,
  subscriptionsSandboxRoutes,
} from './subscriptions.http.ts'
export { subscriptionPagesRoutes } from './subscriptions.pages.ts'
export { subscriptionsJobs, subscriptionsReconcilers } from './subscriptions.jobs.ts'
export {
  cancelSubscription,
  createSubscription,
  getSubscription,
  listSubscriptionCharges,
  listSubscriptions,
  pauseSubscription,
  resumeSubscription,
} from './subscriptions.service.ts'
export { renewDueSubscriptions, runQueuedCharge } from './renewals.service.ts'
export { addInterval, cycleDueAt } from './calendar.ts'
export type { Subscription } from './subscription-view.ts'
export type { SubscriptionStatus } from './subscriptions.table.ts'
