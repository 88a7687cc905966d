// Risk: card block lists, JSON Logic rules, the score, backtests and the review queue.
import type { RiskPort } from '../payments/index.ts'
import { closeReviewWithPayment, openReview } from './reviews.service.ts'
import { screenCharge } from './risk.service.ts'

export { riskRoutes } from './risk.http.ts'
export { riskReconcilers } from './risk.jobs.ts'
export { FACTS as RISK_FACTS } from './risk.conditions.ts'
export {
  LIST_NAMES,
  addListItem,
  backtestRule,
  createRule,
  deleteRule,
  getRule,
  listListItems,
  listNamed,
  listRules,
  removeListItem,
  updateRule,
  type Backtest,
  type Rule,
} from './risk.service.ts'
export {
  approveReview,
  countOpenReviews,
  getReview,
  listReviews,
  rejectReview,
  type Review,
} from './reviews.service.ts'
export type { RiskAction, RiskListName } from './risk.table.ts'

/** What the payments module calls for each charge (installed by registerJobs, src/jobs.ts). */
export const riskPortImpl: RiskPort = {
  screen: screenCharge,
  openReview,
  closeReview: closeReviewWithPayment,
}
// The API's body schemas the dashboard's forms are checked against (issue 36).
export { AddListItemBody, BacktestBody, CreateRuleBody, UpdateRuleBody } from './risk.schemas.ts'
