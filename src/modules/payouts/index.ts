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
// The API's body schemas the dashboard's forms are checked against (issue 36).
export { BankAccountBody, CreateDraftBody, PayoutScheduleBody } from './payouts.schemas.ts'
export { getBalances, getPayout, listPayouts } from './payouts.service.ts'
export { processPayout } from './processing.service.ts'
// Settlement to the merchant's own bank account (issue 40), for the dashboard's pages.
export { getBankAccount, putBankAccount } from './bank-account.service.ts'
export type { BankAccount } from './bank-account.service.ts'
export { getSchedule, putSchedule } from './schedule.service.ts'
export type { PayoutSchedule } from './schedule.service.ts'
export { payoutReport } from './payout-lines.service.ts'
export { upcomingSettlement } from './settlement-payouts.service.ts'
export type { DraftStatus, PayoutStatus } from './payouts.table.ts'
export type { Draft } from './drafts.service.ts'
