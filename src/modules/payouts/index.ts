// Payouts: bulk payout drafts, submerchant payouts, their rail lifecycle, settlement of
// captured funds, and the balance view. Other modules import only this file.
export { payoutsRoutes } from './payouts.http.ts'
export { payoutsJobs, payoutsReconcilers } from './payouts.jobs.ts'
export { processPayout } from './payouts.service.ts'
