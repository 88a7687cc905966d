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

/** The longest custom range (a year and a day: a whole leap year). */
export const RANGE_DAYS_MAX = 366
const DAY_MS = 24 * 60 * 60_000

export type RangeKey = 'today' | '7' | '30' | '90' | 'custom'
export const RANGE_KEYS: readonly RangeKey[] = ['today', '7', '30', '90', 'custom']

/** A period of Turkish calendar days, both ends included. */
export interface OverviewRange {
  key: RangeKey
  fromDay: string
  toDay: string
}

export interface PeriodFigures {
  grossMinor: number
  capturedCount: number
  /** approved ÷ (approved + failed); null when nothing was decided yet. */
  successRate: number | null
}

export interface Overview {
  range: OverviewRange
  /** The period of the same length just before it. */
  previousRange: { fromDay: string; toDay: string }
  today: PeriodFigures
  period: PeriodFigures
  previous: PeriodFigures
  refunds: { count: number; amountMinor: number }
  openChargebacks: { count: number; amountMinor: number }
  openReviews: number
  availableMinor: number
  reservedMinor: number
  /** One entry per day of the period, oldest first, zero-filled. */
  days: DayFigures[]
  /** The previous period's days, aligned with `days` (same index, same distance). */
  previousDays: DayFigures[]
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

/** Noon (UTC) of a day key: a step of 24 h from there never lands on the wrong day. */
function noonOf(day: string): number {
  return Date.parse(`${day}T12:00:00Z`)
}

/** `count` Turkish day keys ending with `lastDay`, oldest first. */
function daysEnding(lastDay: string, count: number): string[] {
  const last = noonOf(lastDay)
  return Array.from({ length: count }, (_, i) =>
    istanbulDayKey(new Date(last - (count - 1 - i) * DAY_MS)),
  )
}

/**
 * The period a page asked for (`?range=7`, or `?range=custom&from=…&to=…`), or undefined when
 * a custom one is not a period we show: no end before its start, nothing after today, at most
 * RANGE_DAYS_MAX days. No range is the last 30 days.
 */
export function resolveRange(
  now: Date,
  query: { range?: string; from?: string; to?: string },
): OverviewRange | undefined {
  const today = istanbulDayKey(now)
  const key = (RANGE_KEYS as readonly string[]).includes(query.range ?? '')
    ? (query.range as RangeKey)
    : '30'
  if (key === 'today') return { key, fromDay: today, toDay: today }
  if (key !== 'custom') {
    const days = daysEnding(today, Number(key))
    return { key, fromDay: days[0] ?? today, toDay: today }
  }
  const from = istanbulDayStart(query.from ?? '')
  const to = istanbulDayStart(query.to ?? '')
  if (!from || !to || !query.from || !query.to) return undefined
  const length = Math.round((noonOf(query.to) - noonOf(query.from)) / DAY_MS) + 1
  if (length < 1 || length > RANGE_DAYS_MAX || query.to > today) return undefined
  return { key, fromDay: query.from, toDay: query.to }
}

export async function merchantOverview(
  deps: Deps,
  merchantId: string,
  range: OverviewRange,
): Promise<Overview> {
  const now = deps.clock.now()
  const length = Math.round((noonOf(range.toDay) - noonOf(range.fromDay)) / DAY_MS) + 1
  const keys = daysEnding(range.toDay, length)
  const previousKeys = daysEnding(istanbulDayKey(new Date(noonOf(range.fromDay) - DAY_MS)), length)
  const todayKey = istanbulDayKey(now)
  const start = (day: string | undefined) => istanbulDayStart(day ?? '') ?? startOfIstanbulDay(now)
  const from = start(previousKeys[0])
  const periodFrom = start(keys[0])
  const periodTo = new Date(start(range.toDay).getTime() + DAY_MS)
  // The end of today: payments created "now" in a moved test clock still count.
  const to = new Date(startOfIstanbulDay(now).getTime() + DAY_MS)
  const [daily, refunds, openChargebacks, openReviews, balances] = await Promise.all([
    dailyPaymentFigures(deps, merchantId, { from, to, timeZone: TIME_ZONE }),
    completedRefundFigures(deps, merchantId, { from: periodFrom, to: periodTo }),
    openChargebackFigures(deps, merchantId),
    countOpenReviews(deps, merchantId),
    balancesFor(deps.db, merchantId),
  ])
  const byDay = new Map(daily.map((d) => [d.day, d]))
  const dayOf = (day: string) =>
    byDay.get(day) ?? { day, capturedCount: 0, grossMinor: 0, approvedCount: 0, failedCount: 0 }
  const days = keys.map(dayOf)
  const previousDays = previousKeys.map(dayOf)
  return {
    range,
    previousRange: { fromDay: previousKeys[0] ?? '', toDay: previousKeys.at(-1) ?? '' },
    today: period([dayOf(todayKey)]),
    period: period(days),
    previous: period(previousDays),
    refunds,
    openChargebacks,
    openReviews,
    availableMinor: balances.reduce((a, b) => a + b.availableMinor, 0),
    reservedMinor: balances.reduce((a, b) => a + b.reserveMinor, 0),
    days,
    previousDays,
  }
}
