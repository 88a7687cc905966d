// Disputes: bank-raised chargebacks and their resolution.
export { disputesRoutes, disputesSandboxRoutes } from './disputes.http.ts'
export { disputesReconcilers } from './disputes.jobs.ts'
export {
  acceptChargeback,
  reverseChargeback,
  listChargebacks,
  listMerchantChargebacks,
  getChargeback,
  evidenceDueBy,
  countChargebacks,
  openChargebackFigures,
  expireClockChargebacks,
  nextChargebackDeadlineOnClock,
} from './disputes.service.ts'
export type { Chargeback } from './disputes.service.ts'
export type { ChargebackStatus } from './disputes.table.ts'
export { ChargebackStatus as ChargebackStatusSchema } from './disputes.schemas.ts'
export { saveEvidence } from './evidence.service.ts'
// The API's body schema the dashboard's evidence form is checked against (issue 36).
export { EvidenceBody } from './disputes.schemas.ts'
export { reasonCodeInfo } from './reason-codes.ts'
