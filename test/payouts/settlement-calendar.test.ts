// Goal: the settlement calendar (decision 0040) — Istanbul dates, EFT business days from the
// holiday table (weekends, public and religious holidays, half-days), the rail a settlement
// takes (FAST any day up to its limit, EFT only while EFT is open), and when daily, weekly
// and monthly schedules run — across weekends and holidays of 2026 and 2027.
// Method: the pure functions with explicit instants (no clock, no timing).
import assert from 'node:assert/strict'
import { test } from 'node:test'
import {
  FAST_LIMIT_MINOR,
  eftOpenAt,
  isEftBusinessDay,
  istanbulDate,
  latestRunDate,
  nextEftBusinessDay,
  nextEftOpening,
  nextRunDate,
  settlementRail,
} from '../../src/modules/payouts/settlement-calendar.ts'
import { TR_PUBLIC_HOLIDAYS } from '../../src/modules/payouts/tr-holidays.ts'

const ist = (local: string) => new Date(`${local}+03:00`)

test('Istanbul dates: UTC+3 all year, midnight belongs to the new day', () => {
  assert.equal(istanbulDate(new Date('2026-12-01T20:59:59Z')), '2026-12-01')
  assert.equal(istanbulDate(new Date('2026-12-01T21:00:00Z')), '2026-12-02')
  assert.equal(istanbulDate(new Date('2026-06-30T21:30:00Z')), '2026-07-01')
})

test('the holiday table: 2026 and 2027, every national and religious holiday, half-days marked', () => {
  const dates = new Set(TR_PUBLIC_HOLIDAYS.map((h) => h.date))
  for (const year of ['2026', '2027']) {
    for (const md of ['01-01', '04-23', '05-01', '05-19', '07-15', '08-30', '10-28', '10-29']) {
      assert.ok(dates.has(`${year}-${md}`), `${year}-${md}`)
    }
  }
  // Ramazan Bayramı 3 days + arife, Kurban Bayramı 4 days + arife (Diyanet).
  for (const d of ['2026-03-20', '2026-03-21', '2026-03-22', '2026-05-27', '2026-05-30']) {
    assert.ok(dates.has(d), d)
  }
  for (const d of ['2027-03-09', '2027-03-11', '2027-05-16', '2027-05-19'])
    assert.ok(dates.has(d), d)
  const halves = TR_PUBLIC_HOLIDAYS.filter((h) => h.halfDay).map((h) => h.date)
  assert.deepEqual(halves, [
    '2026-03-19',
    '2026-05-26',
    '2026-10-28',
    '2027-03-08',
    '2027-05-15',
    '2027-10-28',
  ])
  assert.equal(dates.size, TR_PUBLIC_HOLIDAYS.length, 'one row per date')
})

test('EFT business days: weekends and full holidays are closed; a half-day is open until noon', () => {
  assert.equal(isEftBusinessDay('2026-12-04'), true) // Friday
  assert.equal(isEftBusinessDay('2026-12-05'), false) // Saturday
  assert.equal(isEftBusinessDay('2026-12-06'), false) // Sunday
  assert.equal(isEftBusinessDay('2026-10-29'), false) // Republic Day (Thursday)
  assert.equal(isEftBusinessDay('2026-05-27'), false) // Kurban Bayramı
  assert.equal(isEftBusinessDay('2026-05-26'), true) // its arife, a half-day
  // Kurban Bayramı 2026 runs Wednesday to Saturday: after the arife, Monday 1 June.
  assert.equal(nextEftBusinessDay('2026-05-27'), '2026-06-01')
  // Ramazan Bayramı 2027, Tuesday to Thursday: Friday 12 March.
  assert.equal(nextEftBusinessDay('2027-03-09'), '2027-03-12')
  assert.equal(nextEftBusinessDay('2027-01-01'), '2027-01-04') // a Friday holiday, then a weekend

  assert.equal(eftOpenAt(ist('2026-05-26T11:59:00')), true, 'arife morning')
  assert.equal(eftOpenAt(ist('2026-05-26T12:00:00')), false, 'arife afternoon')
  assert.equal(eftOpenAt(ist('2026-12-04T08:59:00')), false, 'before opening')
  assert.equal(eftOpenAt(ist('2026-12-04T16:29:00')), true)
  assert.equal(eftOpenAt(ist('2026-12-04T16:30:00')), false, 'after the cut-off')
  assert.equal(nextEftOpening(ist('2026-12-04T17:00:00')), '2026-12-07')
  assert.equal(nextEftOpening(ist('2026-05-26T13:00:00')), '2026-06-01')
})

test('the rail: FAST any day up to its limit; EFT above it only while EFT is open', () => {
  const saturday = ist('2026-12-05T10:00:00')
  assert.deepEqual(settlementRail(FAST_LIMIT_MINOR, saturday), {
    rail: 'fast',
    arrivalDate: '2026-12-05',
  })
  assert.deepEqual(settlementRail(FAST_LIMIT_MINOR, ist('2026-10-29T10:00:00')), {
    rail: 'fast',
    arrivalDate: '2026-10-29',
  })
  assert.equal(settlementRail(FAST_LIMIT_MINOR + 1, saturday), undefined, 'waits for Monday')
  assert.equal(settlementRail(FAST_LIMIT_MINOR + 1, ist('2026-10-29T10:00:00')), undefined)
  assert.equal(settlementRail(FAST_LIMIT_MINOR + 1, ist('2026-10-28T12:30:00')), undefined)
  assert.deepEqual(settlementRail(FAST_LIMIT_MINOR + 1, ist('2026-10-28T10:00:00')), {
    rail: 'eft',
    arrivalDate: '2026-10-28',
  })
  assert.deepEqual(settlementRail(FAST_LIMIT_MINOR + 1, ist('2026-12-07T09:00:00')), {
    rail: 'eft',
    arrivalDate: '2026-12-07',
  })
})

test('schedules: daily every day; weekly on its weekday; monthly on its day or the month end', () => {
  assert.equal(latestRunDate({ interval: 'daily', anchor: null }, '2026-12-05'), '2026-12-05')
  assert.equal(latestRunDate({ interval: 'manual', anchor: null }, '2026-12-05'), undefined)
  // 2026-12-05 is a Saturday.
  const friday = { interval: 'weekly' as const, anchor: 'friday' }
  assert.equal(latestRunDate(friday, '2026-12-05'), '2026-12-04')
  assert.equal(latestRunDate(friday, '2026-12-04'), '2026-12-04')
  assert.equal(latestRunDate(friday, '2026-12-03'), '2026-11-27')
  assert.equal(nextRunDate(friday, '2026-12-04'), '2026-12-11')
  assert.equal(latestRunDate({ interval: 'weekly', anchor: null }, '2026-12-06'), '2026-11-30')
  const monthEnd = { interval: 'monthly' as const, anchor: '31' }
  assert.equal(latestRunDate(monthEnd, '2027-02-28'), '2027-02-28', 'February ends on the 28th')
  assert.equal(latestRunDate(monthEnd, '2027-02-27'), '2027-01-31')
  assert.equal(latestRunDate(monthEnd, '2026-04-30'), '2026-04-30')
  assert.equal(nextRunDate(monthEnd, '2027-01-31'), '2027-02-28')
  assert.equal(latestRunDate({ interval: 'monthly', anchor: '15' }, '2026-03-01'), '2026-02-15')
  assert.equal(nextRunDate({ interval: 'daily', anchor: null }, '2026-12-31'), '2027-01-01')
})
