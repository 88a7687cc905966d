import type { Deps } from '../../database.ts'
import * as repo from './figures.repository.ts'

// Figures for the merchant dashboard's overview, from the same tables the API serves. The
// definitions (docs/dashboard.md): a payment counts on the day it was created (in Turkey's
// time); gross volume is the amount of payments captured (still captured or since refunded);
// the success rate is approved ÷ (approved + failed), where approved means the bank said yes
// (authorized, captured, voided or refunded); payments still pending count in neither.
// Aggregates for display only, so they read the read pool (decision 0015).

export interface DayFigures {
  day: string
  capturedCount: number
  grossMinor: number
  approvedCount: number
  failedCount: number
}

export async function dailyPaymentFigures(
  deps: Deps,
  merchantId: string,
  range: { from: Date; to: Date; timeZone: string },
): Promise<DayFigures[]> {
  const rows = await repo.findDailyPaymentFigures(deps.readDb, { merchantId, ...range })
  return rows.map((r) => ({
    day: r.day,
    capturedCount: r.captured_count,
    grossMinor: r.captured_minor,
    approvedCount: r.approved_count,
    failedCount: r.failed_count,
  }))
}

/** Refunds completed in the range: how many and how much. */
export async function completedRefundFigures(
  deps: Deps,
  merchantId: string,
  range: { from: Date; to: Date },
): Promise<{ count: number; amountMinor: number }> {
  const row = await repo.sumCompletedRefunds(deps.readDb, { merchantId, ...range })
  return { count: row?.count ?? 0, amountMinor: row?.amount_minor ?? 0 }
}
