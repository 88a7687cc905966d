import type { RiskFacts } from '../payments/index.ts'

// The risk score: 0–99, the sum of a few weighted signals, capped at 99. Transparent on
// purpose: each signal that adds points is named in the payment's `risk.reasons`, and the
// table below is docs/risk.md's. The score informs; it decides nothing by itself (rules do).

export interface Signal {
  name: string
  points: number
}

const TRY = 100 // kuruş

/** Each signal with its points for these facts (only those that add something). */
export function scoreSignals(f: RiskFacts): Signal[] {
  const v = f.velocity
  const signals: Signal[] = [
    // the same card tried again within the hour: 8 per extra attempt, at most 32
    { name: 'card_attempts_1h', points: Math.min(32, 8 * Math.max(0, v.cardAttempts1h - 1)) },
    // the card was declined (or blocked) in the last day: 12 per decline, at most 36
    { name: 'card_declines_24h', points: Math.min(36, 12 * v.cardDeclines24h) },
    // several payments from one IP within the hour: 4 per extra attempt, at most 16
    { name: 'ip_attempts_1h', points: Math.min(16, 4 * Math.max(0, v.ipAttempts1h - 1)) },
    // the customer's day total over 50,000 TRY
    { name: 'customer_amount_24h', points: v.customerAmount24h > 50_000 * TRY ? 10 : 0 },
    // a single amount of 20,000 TRY or more
    { name: 'high_amount', points: f.amount >= 20_000 * TRY ? 10 : 0 },
    // an issuer the BIN table does not know, or one outside Turkey
    { name: 'bin_country', points: f.card.binCountry === 'TR' ? 0 : 10 },
    // a guest charge: no customer to tie history to
    { name: 'no_customer', points: f.customer.id === null ? 3 : 0 },
  ]
  return signals.filter((s) => s.points > 0)
}

export function scoreOf(signals: readonly Signal[]): number {
  return Math.min(
    99,
    signals.reduce((sum, s) => sum + s.points, 0),
  )
}
