// Payouts: bulk payout drafts, submerchant payouts, their rail lifecycle, settlement of
// captured funds, and the balance view. Other modules import only this file.
export { payoutsRoutes } from './payouts.http.ts'
export { payoutsJobs, payoutsReconcilers } from './payouts.jobs.ts'
export {
  approveDraft,
  cancelDraft,
  createDraft,
  getDraft,
  listDrafts,
  listRecentDrafts,
} from './drafts.service.ts'
export { DRAFT_CSV_COLUMNS, parseDraftCsv } from './drafts-csv.ts'
export { getBalances, getPayout, listPayouts } from './payouts.service.ts'
export { processPayout } from './processing.service.ts'
export type { DraftStatus, PayoutStatus } from './payouts.table.ts'
export type { Draft } from './drafts.service.ts'
