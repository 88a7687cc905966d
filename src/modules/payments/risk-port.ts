import type { Deps, Tx } from '../../database.ts'

// The port through which a charge asks for a risk decision (CONTRACT.md "Risk: rules,
// lists, reviews"). The risk module implements it and app.ts installs it: payments never
// imports risk (risk imports payments for the review's capture and void), so the two stay
// free of an import cycle. Without an installed port every charge is allowed.

/** What a rule's condition may read: the facts of one card charge (docs/risk.md). */
export interface RiskFacts {
  amount: number
  installmentCount: number
  card: {
    brand: string | null
    bin: string | null
    binCountry: string | null
    funding: string | null
    fingerprint: string | null
  }
  customer: { id: string | null; email: string | null }
  ip: string | null
  velocity: {
    /** Card payments with this fingerprint in the last hour, this one included. */
    cardAttempts1h: number
    /** Failed card payments with this fingerprint in the last 24 hours. */
    cardDeclines24h: number
    /** Payments from this IP in the last hour, this one included. */
    ipAttempts1h: number
    /** Kuruş of this customer's payments in the last 24 hours (failed ones excepted), this one included. */
    customerAmount24h: number
  }
}

export type RiskDecision = 'allow' | 'review' | 'require_3ds' | 'block'

export interface RiskAssessment {
  decision: RiskDecision
  /** 0–99, the sum of the weighted signals (docs/risk.md). */
  score: number
  reasons: string[]
  ruleIds: string[]
}

export interface RiskPort {
  assess(deps: Deps, merchantId: string, facts: RiskFacts): Promise<RiskAssessment>
  /** Opens the review of a payment held at `authorized`, inside the caller's transaction. */
  openReview(
    tx: Tx,
    review: { merchantId: string; storeId: string; paymentId: string; reasons: string[]; at: Date },
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
