import { TR_PUBLIC_HOLIDAYS, type HolidayRow } from './tr-holidays.ts'
import type { PayoutInterval, PayoutRail } from './payouts.table.ts'

// Pure calendar rules of settlement payouts (decision 0040): Istanbul dates, EFT business
// days and hours from the holiday table, when a schedule's run falls, and which rail a
// settlement takes. No I/O, no clock of its own: every function takes the instant.

// Turkey keeps UTC+3 all year (no DST since 2016).
const ISTANBUL_OFFSET_MS = 3 * 60 * 60 * 1000
const DAY_MS = 24 * 60 * 60 * 1000

/**
 * FAST's per-transaction limit (TCMB; 100,000 TL at the time of writing). A settlement up to
 * it goes over FAST, any day and hour; above it over EFT, on business days within EFT hours.
 */
export const FAST_LIMIT_MINOR = 10_000_000

/** EFT hours for customer transfers (Istanbul, minutes after midnight); half-days close at noon. */
export const EFT_OPENS_AT = 9 * 60
export const EFT_CLOSES_AT = 16 * 60 + 30
export const EFT_CLOSES_AT_HALF_DAY = 12 * 60

export const WEEKDAYS = [
  'sunday',
  'monday',
  'tuesday',
  'wednesday',
  'thursday',
  'friday',
  'saturday',
] as const
export type Weekday = (typeof WEEKDAYS)[number]

const HOLIDAYS = new Map<string, HolidayRow>(TR_PUBLIC_HOLIDAYS.map((h) => [h.date, h]))

/** The Istanbul calendar date of an instant, YYYY-MM-DD. */
export function istanbulDate(at: Date): string {
  return new Date(at.getTime() + ISTANBUL_OFFSET_MS).toISOString().slice(0, 10)
}

/** Minutes after Istanbul midnight. */
function istanbulMinutes(at: Date): number {
  const local = new Date(at.getTime() + ISTANBUL_OFFSET_MS)
  return local.getUTCHours() * 60 + local.getUTCMinutes()
}

function parseDate(date: string): Date {
  return new Date(`${date}T00:00:00Z`)
}

export function addDays(date: string, days: number): string {
  return new Date(parseDate(date).getTime() + days * DAY_MS).toISOString().slice(0, 10)
}

/** 0 = Sunday … 6 = Saturday. */
export function weekdayOf(date: string): number {
  return parseDate(date).getUTCDay()
}

export function holidayOn(date: string): HolidayRow | undefined {
  return HOLIDAYS.get(date)
}

/** A day EFT runs: Monday to Friday and not a full public holiday (a half-day is one). */
export function isEftBusinessDay(date: string): boolean {
  const dow = weekdayOf(date)
  if (dow === 0 || dow === 6) return false
  const holiday = holidayOn(date)
  return holiday === undefined || holiday.halfDay
}

/** The first EFT business day on or after `date`. */
export function nextEftBusinessDay(date: string): string {
  let d = date
  // The longest run of closed days (a bayram joined to a weekend) is far below 14.
  for (let i = 0; i < 14 && !isEftBusinessDay(d); i++) d = addDays(d, 1)
  return d
}

/** Is EFT open at this instant (a business day, within its hours)? */
export function eftOpenAt(at: Date): boolean {
  const date = istanbulDate(at)
  if (!isEftBusinessDay(date)) return false
  const minutes = istanbulMinutes(at)
  const closes = holidayOn(date)?.halfDay ? EFT_CLOSES_AT_HALF_DAY : EFT_CLOSES_AT
  return minutes >= EFT_OPENS_AT && minutes < closes
}

/**
 * The rail of a settlement of `amountMinor` made at `at`, and the day it reaches the bank:
 * FAST (at once, any day) up to its limit; EFT above it, only while EFT is open (same day).
 * Undefined: not now — the run waits for EFT to open.
 */
export function settlementRail(
  amountMinor: number,
  at: Date,
): { rail: PayoutRail; arrivalDate: string } | undefined {
  if (amountMinor <= FAST_LIMIT_MINOR) return { rail: 'fast', arrivalDate: istanbulDate(at) }
  if (!eftOpenAt(at)) return undefined
  return { rail: 'eft', arrivalDate: istanbulDate(at) }
}

/** When EFT next opens at or after `at` (for showing when a large settlement goes out). */
export function nextEftOpening(at: Date): string {
  const today = istanbulDate(at)
  const closes = holidayOn(today)?.halfDay ? EFT_CLOSES_AT_HALF_DAY : EFT_CLOSES_AT
  if (isEftBusinessDay(today) && istanbulMinutes(at) < closes) return today
  return nextEftBusinessDay(addDays(today, 1))
}

function lastDayOfMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month + 1, 0)).getUTCDate()
}

export interface ScheduleRule {
  interval: PayoutInterval
  /** weekly: a weekday name; monthly: a day of month 1–31 as text; else null. */
  anchor: string | null
}

/**
 * The schedule's latest run date on or before `today` (Istanbul dates), or undefined for a
 * manual schedule. Weekly runs on the anchor weekday (default monday); monthly on the anchor
 * day (default 1), the month's last day when it is shorter.
 */
export function latestRunDate(rule: ScheduleRule, today: string): string | undefined {
  switch (rule.interval) {
    case 'manual':
      return undefined
    case 'daily':
      return today
    case 'weekly': {
      const anchor = WEEKDAYS.indexOf((rule.anchor ?? 'monday') as Weekday)
      const back = (weekdayOf(today) - (anchor < 0 ? 1 : anchor) + 7) % 7
      return addDays(today, -back)
    }
    case 'monthly': {
      const want = Number(rule.anchor ?? '1')
      const d = parseDate(today)
      const year = d.getUTCFullYear()
      const month = d.getUTCMonth()
      const thisMonth = Math.min(want, lastDayOfMonth(year, month))
      if (d.getUTCDate() >= thisMonth) {
        return new Date(Date.UTC(year, month, thisMonth)).toISOString().slice(0, 10)
      }
      const prev = Math.min(want, lastDayOfMonth(year, month - 1))
      return new Date(Date.UTC(year, month - 1, prev)).toISOString().slice(0, 10)
    }
  }
}

/** The next run date strictly after `today`, for showing the upcoming payout. */
export function nextRunDate(rule: ScheduleRule, today: string): string | undefined {
  if (rule.interval === 'manual') return undefined
  for (let i = 1; i <= 31; i++) {
    const d = addDays(today, i)
    if (latestRunDate(rule, d) === d) return d
  }
  return undefined
}
