import type { Deps } from '../../database.ts'
import {
  TIME_ZONE,
  istanbulDayKey,
  istanbulDayStart,
  startOfIstanbulDay,
} from '../../platform/web/format.ts'
import { openChargebackFigures } from '../disputes/index.ts'
import { countOpenReviews } from '../risk/index.ts'
import { balancesFor } from '../ledger/index.ts'
import { completedRefundFigures, dailyPaymentFigures, type DayFigures } from '../payments/index.ts'

// The overview's figures, gathered from the modules that own them (the same services and
// tables as the API; no SQL here). Days are Turkish calendar days; "30 days" is today and the
// 29 days before it.

export const OVERVIEW_DAYS = 30
const DAY_MS = 24 * 60 * 60_000

export interface PeriodFigures {
  grossMinor: number
  capturedCount: number
  /** approved ÷ (approved + failed); null when nothing was decided yet. */
  successRate: number | null
}

export interface Overview {
  today: PeriodFigures
  last30: PeriodFigures
  refunds30: { count: number; amountMinor: number }
  openChargebacks: { count: number; amountMinor: number }
  openReviews: number
  availableMinor: number
  reservedMinor: number
  /** One entry per day, oldest first, zero-filled. */
  days: DayFigures[]
}

function period(days: readonly DayFigures[]): PeriodFigures {
  const sum = (f: (d: DayFigures) => number) => days.reduce((a, d) => a + f(d), 0)
  const approved = sum((d) => d.approvedCount)
  const decided = approved + sum((d) => d.failedCount)
  return {
    grossMinor: sum((d) => d.grossMinor),
    capturedCount: sum((d) => d.capturedCount),
    successRate: decided === 0 ? null : approved / decided,
  }
}

/** The last OVERVIEW_DAYS Turkish days, oldest first, ending today. */
function dayKeys(now: Date): string[] {
  const today = startOfIstanbulDay(now)
  // Noon of each day: a step of 24 h from there never lands on the wrong day.
  return Array.from({ length: OVERVIEW_DAYS }, (_, i) =>
    istanbulDayKey(new Date(today.getTime() + 12 * 3600_000 - (OVERVIEW_DAYS - 1 - i) * DAY_MS)),
  )
}

export async function merchantOverview(deps: Deps, merchantId: string): Promise<Overview> {
  const now = deps.clock.now()
  const keys = dayKeys(now)
  const from = istanbulDayStart(keys[0] ?? '') ?? startOfIstanbulDay(now)
  // The end of today: payments created "now" in a moved test clock still count.
  const to = new Date(startOfIstanbulDay(now).getTime() + DAY_MS)
  const [daily, refunds30, openChargebacks, openReviews, balances] = await Promise.all([
    dailyPaymentFigures(deps, merchantId, { from, to, timeZone: TIME_ZONE }),
    completedRefundFigures(deps, merchantId, { from, to }),
    openChargebackFigures(deps, merchantId),
    countOpenReviews(deps, merchantId),
    balancesFor(deps.db, merchantId),
  ])
  const byDay = new Map(daily.map((d) => [d.day, d]))
  const days = keys.map(
    (day) =>
      byDay.get(day) ?? { day, capturedCount: 0, grossMinor: 0, approvedCount: 0, failedCount: 0 },
  )
  const todayKey = keys.at(-1)
  return {
    today: period(days.filter((d) => d.day === todayKey)),
    last30: period(days),
    refunds30,
    openChargebacks,
    openReviews,
    availableMinor: balances.reduce((a, b) => a + b.availableMinor, 0),
    reservedMinor: balances.reduce((a, b) => a + b.reserveMinor, 0),
    days,
  }
}
