// Disputes: bank-raised chargebacks and their resolution.
export { disputesRoutes, disputesSandboxRoutes, chargebackJson } from './disputes.http.ts'
export {
  receiveChargeback,
  acceptChargeback,
  reverseChargeback,
  listChargebacks,
  listMerchantChargebacks,
  getChargeback,
  evidenceDueBy,
  EVIDENCE_DAYS,
  countChargebacks,
  openChargebackFigures,
} from './disputes.service.ts'
export type { Chargeback } from './disputes.service.ts'
