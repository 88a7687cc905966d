// Disputes: bank-raised chargebacks and their resolution.
export { disputesRoutes, disputesSandboxRoutes } from './disputes.http.ts'
export { listChargebacks, countChargebacks, openChargebackFigures } from './disputes.service.ts'
