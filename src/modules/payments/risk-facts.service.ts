import type { Deps } from '../../database.ts'
import * as riskFactsRepo from './risk-facts.repository.ts'
import type { RiskFacts } from './risk-port.ts'

/** The stored facts of the merchant's card payments since `from`, newest first (backtests). */
export async function riskFactsSince(
  deps: Deps,
  merchantId: string,
  from: Date,
  limit: number,
): Promise<{ paymentId: string; amount: number; facts: RiskFacts }[]> {
  const rows = await riskFactsRepo.findRiskFactsSince(deps.db, merchantId, from, limit)
  return rows.flatMap((r) =>
    r.risk_facts === null ? [] : [{ paymentId: r.id, amount: r.amount, facts: r.risk_facts }],
  )
}

/**
 * The facts stored with one of the merchant's payments (null for payments made before risk
 * checks or without a card). Another merchant's or no payment: null, as the caller has
 * already read the payment itself through getPayment (which is the 404).
 */
export async function getPaymentRiskFacts(
  deps: Deps,
  merchantId: string,
  paymentId: string,
): Promise<RiskFacts | null> {
  const row = await riskFactsRepo.findRiskFactsByPaymentId(deps.db, merchantId, paymentId)
  return row?.risk_facts ?? null
}
