import { mulDivHalfUp } from '../../platform/money.ts'
import type { Pricing } from '../merchants/index.ts'

/**
 * The merchant's commission for a payment: the installment count's rate in basis points,
 * half-up to the kuruş, plus the fixed fee; never more than the amount itself, so the
 * merchant's net is never negative. QR payments are priced like one installment.
 */
export function computeCommission(pricing: Pricing, amount: number, installmentCount: number) {
  const rateBps =
    pricing.rateBpsByInstallment[installmentCount - 1] ?? pricing.rateBpsByInstallment.at(-1) ?? 0
  return Math.min(amount, mulDivHalfUp(amount, rateBps, 10_000) + pricing.fixedMinor)
}
