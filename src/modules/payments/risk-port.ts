import type { AliasedExpression, ExpressionBuilder } from 'kysely'
import type { Database, Tx } from '../../database.ts'
import type { RiskAssessment, RiskFacts } from './risk-types.ts'

export type { RiskAssessment, RiskDecision, RiskFacts } from './risk-types.ts'

// The port through which a charge asks for a risk decision (CONTRACT.md "Risk: rules,
// lists, reviews"). The risk module implements it and registerJobs (src/jobs.ts, run by the
// API and the worker) installs it: payments never
// imports risk (risk imports payments for the review's capture and void), so the two stay
// free of an import cycle. Without an installed port every charge is allowed.

/** What a charge's screen reads before its velocity is counted. */
export type ScreenFacts = Omit<RiskFacts, 'velocity'>

/**
 * One charge's screen: its columns join the statement that counts the charge's velocity (one
 * round trip for both, inside the claim transaction), and `decide` reads them from that row.
 */
export interface RiskScreen {
  columns(eb: ExpressionBuilder<Database, never>): AliasedExpression<unknown, string>[]
  decide(facts: RiskFacts, read: Readonly<Record<string, unknown>>): RiskAssessment
}

export interface RiskPort {
  screen(merchantId: string, facts: ScreenFacts): RiskScreen
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
