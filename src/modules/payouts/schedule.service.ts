import type { Deps, Tx } from '../../database.ts'
import { transact } from '../../platform/db/transaction.ts'
import type { RecordAnswer } from '../../platform/http/idempotent-answer.ts'
import { validationError } from '../../platform/errors.ts'
import { WEEKDAYS } from './settlement-calendar.ts'
import * as repo from './settlement.repository.ts'
import type { PayoutInterval, ScheduleRow } from './payouts.table.ts'

// The merchant's payout schedule (CONTRACT.md): daily (the default), weekly on a weekday,
// monthly on a day of the month, or manual (no automatic payouts: the balance accrues).
// `minimumMinor`: a run pays only when the available balance reaches it.

export const INTERVALS: readonly PayoutInterval[] = ['daily', 'weekly', 'monthly', 'manual']
/** Far above any balance, far below 2^53. */
export const MINIMUM_MAX_MINOR = 100_000_000_000

export interface PayoutSchedule {
  interval: PayoutInterval
  /** weekly: monday…sunday; monthly: 1…31 (a shorter month runs on its last day); else null. */
  anchor: string | null
  minimumMinor: number
  updatedAt: Date | null
}

export const DEFAULT_SCHEDULE: PayoutSchedule = {
  interval: 'daily',
  anchor: null,
  minimumMinor: 0,
  updatedAt: null,
}

export function toSchedule(row: ScheduleRow | undefined): PayoutSchedule {
  if (!row) return DEFAULT_SCHEDULE
  return {
    interval: row.interval,
    anchor: row.anchor,
    minimumMinor: row.minimum_minor,
    updatedAt: row.updated_at,
  }
}

export async function getSchedule(deps: Deps, merchantId: string): Promise<PayoutSchedule> {
  return toSchedule(await repo.findSchedule(deps.db, merchantId))
}

/** The anchor as stored for the interval, or a 400 (an anchor is for weekly or monthly only). */
export function checkAnchor(
  interval: PayoutInterval,
  anchor: string | number | null | undefined,
): string | null {
  if (anchor === undefined || anchor === null) {
    if (interval === 'weekly') return 'monday'
    if (interval === 'monthly') return '1'
    return null
  }
  if (interval === 'weekly') {
    const day = String(anchor).toLowerCase()
    if (!(WEEKDAYS as readonly string[]).includes(day)) {
      throw validationError('anchor', `weekly: one of ${WEEKDAYS.join(', ')}`)
    }
    return day
  }
  if (interval === 'monthly') {
    const text = String(anchor)
    const day = Number(text)
    if (!/^[0-9]{1,2}$/.test(text) || day < 1 || day > 31) {
      throw validationError('anchor', 'monthly: a day of the month, 1 to 31')
    }
    return String(day)
  }
  throw validationError('anchor', `${interval}: takes no anchor`)
}

export async function putSchedule(
  deps: Deps,
  merchantId: string,
  input: { interval: PayoutInterval; anchor?: string | number | null; minimumMinor?: number },
  record?: RecordAnswer<Tx, PayoutSchedule>,
): Promise<PayoutSchedule> {
  if (!INTERVALS.includes(input.interval)) {
    throw validationError('interval', `must be one of ${INTERVALS.join(', ')}`)
  }
  const anchor = checkAnchor(input.interval, input.anchor)
  const minimum = input.minimumMinor ?? 0
  if (!Number.isSafeInteger(minimum) || minimum < 0 || minimum > MINIMUM_MAX_MINOR) {
    throw validationError(
      'minimumMinor',
      `an integer of kuruş from 0 to ${String(MINIMUM_MAX_MINOR)}`,
    )
  }
  // A transaction of its own, for the door's audit entry and the recorded answer to commit
  // in (decisions 0036, 0035).
  return transact(deps.db, async (tx) => {
    const schedule = toSchedule(
      await repo.upsertSchedule(tx, {
        merchant_id: merchantId,
        interval: input.interval,
        anchor,
        minimum_minor: minimum,
        updated_at: deps.clock.now(),
      }),
    )
    await record?.(tx, schedule)
    return schedule
  })
}
