import type { Deps, Tx } from '../../database.ts'
import type { RiskAssessment, RiskFacts } from './risk-types.ts'

export type { RiskAssessment, RiskDecision, RiskFacts } from './risk-types.ts'

// The port through which a charge asks for a risk decision (CONTRACT.md "Risk: rules,
// lists, reviews"). The risk module implements it and registerJobs (src/jobs.ts, run by the
// API and the worker) installs it: payments never
// imports risk (risk imports payments for the review's capture and void), so the two stay
// free of an import cycle. Without an installed port every charge is allowed.

export interface RiskPort {
  assess(deps: Deps, merchantId: string, facts: RiskFacts): Promise<RiskAssessment>
  /** Opens the review of a payment held at `authorized`, inside the caller's transaction. */
  openReview(
    tx: Tx,
    review: { merchantId: string; storeId: string; paymentId: string; reasons: string[]; at: Date },
  ): Promise<void>
  /** Closes the open review of a payment just captured or voided, inside that transaction. */
  closeReview(
    tx: Tx,
    payment: {
      merchantId: string
      storeId: string
      paymentId: string
      outcome: 'captured' | 'voided' | 'expired'
      at: Date
    },
  ): Promise<void>
}

let installed: RiskPort | undefined

/** Called once by the composition root (app.ts). */
export function installRiskPort(port: RiskPort): void {
  installed = port
}

export function riskPort(): RiskPort | undefined {
  return installed
}
