// The shapes of a risk check (CONTRACT.md "Risk"): imported by the payments table and the
// risk port alike, so this file imports nothing.

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
