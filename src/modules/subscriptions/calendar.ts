import type { IntervalUnit } from './subscriptions.table.ts'

// Calendar arithmetic for billing cycles, in Turkey's civil time: UTC+03:00 all year (no
// daylight saving since 2016), so "the 31st" and "the end of the month" are what a Turkish
// buyer sees on the calendar, not UTC's view of it. Months and years clamp to the month's
// last day: Jan 31 + 1 month = Feb 28 (Feb 29 in a leap year); the next cycle is computed
// from the anchor again, so Mar 31 follows, not Mar 28.

const TURKEY_OFFSET_MS = 3 * 60 * 60 * 1000
const DAY_MS = 24 * 60 * 60 * 1000

function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month + 1, 0)).getUTCDate()
}

function addMonths(date: Date, months: number): Date {
  const local = new Date(date.getTime() + TURKEY_OFFSET_MS)
  const total = local.getUTCMonth() + months
  const year = local.getUTCFullYear() + Math.floor(total / 12)
  const month = ((total % 12) + 12) % 12
  const day = Math.min(local.getUTCDate(), daysInMonth(year, month))
  const shifted = Date.UTC(
    year,
    month,
    day,
    local.getUTCHours(),
    local.getUTCMinutes(),
    local.getUTCSeconds(),
    local.getUTCMilliseconds(),
  )
  return new Date(shifted - TURKEY_OFFSET_MS)
}

/** `date` plus `count` × `unit` on the calendar. */
export function addInterval(date: Date, unit: IntervalUnit, count: number): Date {
  switch (unit) {
    case 'day':
      return new Date(date.getTime() + count * DAY_MS)
    case 'week':
      return new Date(date.getTime() + count * 7 * DAY_MS)
    case 'month':
      return addMonths(date, count)
    case 'year':
      return addMonths(date, 12 * count)
  }
}

/** When `cycle` is due, for a schedule whose cycle `anchorCycle` was due at `anchorAt`. */
export function cycleDueAt(
  schedule: { anchorAt: Date; anchorCycle: number; unit: IntervalUnit; count: number },
  cycle: number,
): Date {
  return addInterval(
    schedule.anchorAt,
    schedule.unit,
    schedule.count * (cycle - schedule.anchorCycle),
  )
}

/** The longest cycle we bill: one year, as card schemes expect of recurring charges. */
export const INTERVAL_COUNT_MAX: Record<IntervalUnit, number> = {
  day: 365,
  week: 52,
  month: 12,
  year: 1,
}
