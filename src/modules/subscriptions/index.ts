// Subscriptions: recurring charges of saved cards, the renewal engine and the buyer portal.
// Other modules import only this file.
export { subscriptionsRoutes } from './subscriptions.http.ts'
// The API's body schema the dashboard's cancel form is checked against (issue 36).
export { CancelBody } from './subscriptions.schemas.ts'
export { subscriptionsPublicRoutes } from './portal.http.ts'
export { subscriptionsSandboxRoutes } from './sandbox.http.ts'
export { subscriptionPagesRoutes } from './subscriptions.pages.ts'
export { subscriptionsJobs, subscriptionsReconcilers } from './subscriptions.jobs.ts'
export { createSubscription } from './create.service.ts'
export { listSubscriptionCharges, listSubscriptions } from './lists.service.ts'
export {
  cancelSubscription,
  getSubscription,
  pauseSubscription,
  resumeSubscription,
} from './subscriptions.service.ts'
export { renewDueSubscriptions, runQueuedCharge } from './renewals.service.ts'
export { addInterval, cycleDueAt } from './calendar.ts'
export type { Subscription } from './subscription-view.ts'
export type { SubscriptionStatus } from './subscriptions.table.ts'
export { subscriptionsMessages } from './subscriptions.messages.ts'
