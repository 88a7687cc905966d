// Goal: billing cycles follow the calendar — month ends clamp (Jan 31 → Feb 28/29 → Mar 31),
// years clamp Feb 29, days and weeks are exact, all in Turkey time. Method: the calendar
// functions directly, then the renewal engine over HTTP with h.clock set to month ends.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { addInterval, cycleDueAt } from '../../src/modules/subscriptions/index.ts'
import { startTestApp } from '../helpers/app.ts'
import { getSub, reconcile, subscribed } from './_support.ts'

const at = (iso: string) => new Date(iso)

test('months clamp to the last day of the month; the next cycle counts from the anchor again', () => {
  // 12:00 in Istanbul is 09:00Z.
  const anchor = at('2027-01-31T09:00:00.000Z')
  const schedule = { anchorAt: anchor, anchorCycle: 1, unit: 'month' as const, count: 1 }
  assert.equal(cycleDueAt(schedule, 2).toISOString(), '2027-02-28T09:00:00.000Z')
  assert.equal(cycleDueAt(schedule, 3).toISOString(), '2027-03-31T09:00:00.000Z')
  assert.equal(cycleDueAt(schedule, 4).toISOString(), '2027-04-30T09:00:00.000Z')
  assert.equal(cycleDueAt(schedule, 13).toISOString(), '2028-01-31T09:00:00.000Z')
  assert.equal(cycleDueAt(schedule, 14).toISOString(), '2028-02-29T09:00:00.000Z', 'leap year')
  assert.equal(
    addInterval(at('2027-08-31T09:00:00Z'), 'month', 6).toISOString(),
    '2028-02-29T09:00:00.000Z',
  )
  assert.equal(
    addInterval(at('2027-03-31T09:00:00Z'), 'month', -1).toISOString(),
    '2027-02-28T09:00:00.000Z',
  )
})

test('years clamp Feb 29; days and weeks are exact', () => {
  assert.equal(
    addInterval(at('2028-02-29T09:00:00Z'), 'year', 1).toISOString(),
    '2029-02-28T09:00:00.000Z',
  )
  assert.equal(
    addInterval(at('2028-02-29T09:00:00Z'), 'year', 4).toISOString(),
    '2032-02-29T09:00:00.000Z',
  )
  assert.equal(
    addInterval(at('2027-02-27T09:00:00Z'), 'day', 2).toISOString(),
    '2027-03-01T09:00:00.000Z',
  )
  assert.equal(
    addInterval(at('2027-12-29T09:00:00Z'), 'week', 1).toISOString(),
    '2028-01-05T09:00:00.000Z',
  )
})

test('the calendar is Turkey time: late on Jan 31 UTC is already Feb 1 in Istanbul', () => {
  // 2027-01-31T22:30Z is 01:30 on 1 February in Istanbul: a month later is 1 March there.
  assert.equal(
    addInterval(at('2027-01-31T22:30:00Z'), 'month', 1).toISOString(),
    '2027-02-28T22:30:00.000Z',
  )
  // 2027-03-30T21:30Z is 00:30 on 31 March in Istanbul: a month later clamps to 30 April there.
  assert.equal(
    addInterval(at('2027-03-30T21:30:00Z'), 'month', 1).toISOString(),
    '2027-04-29T21:30:00.000Z',
  )
})

test('the engine bills Jan 31, Feb 28, Mar 31, Apr 30 for a monthly subscription made on Jan 31', async (t) => {
  const h = await startTestApp(t)
  h.clock.set(at('2027-01-31T09:00:00.000Z'))
  const { m, sub } = await subscribed(h)
  await reconcile(m)
  const seen: string[] = []
  for (const due of ['2027-02-28', '2027-03-31', '2027-04-30']) {
    const s = await getSub(m, sub.id)
    assert.equal(s.nextChargeAt?.slice(0, 10), due)
    seen.push(s.nextChargeAt ?? '')
    h.clock.set(new Date(Date.parse(s.nextChargeAt ?? '') + 1000))
    await reconcile(m)
  }
  const last = await getSub(m, sub.id)
  assert.equal(last.cycleNumber, 4)
  assert.equal(last.nextChargeAt?.slice(0, 10), '2027-05-31', 'back to the 31st')
  // Every due time keeps the subscription's time of day.
  assert.ok(seen.every((iso) => iso.endsWith(sub.createdAt.slice(10))))
})

test('a leap-year Feb 29 yearly subscription renews on Feb 28 in the years between', async (t) => {
  const h = await startTestApp(t)
  h.clock.set(at('2028-02-29T10:00:00.000Z'))
  const { m, sub } = await subscribed(h, { extra: { intervalUnit: 'year' } })
  await reconcile(m)
  const first = await getSub(m, sub.id)
  assert.equal(first.nextChargeAt?.slice(0, 10), '2029-02-28')
  // Just past the due time: the test clock runs on from where it was set, so the due time of
  // day is the creation's (10:00 plus however long the setup took), not 10:00 itself.
  h.clock.set(new Date(Date.parse(first.nextChargeAt ?? '') + 1000))
  await reconcile(m)
  const s = await getSub(m, sub.id)
  assert.equal(s.cycleNumber, 2)
  // The anchor stays Feb 29: 2032's renewal is on the 29th again (cycleDueAt, first test).
  assert.equal(s.nextChargeAt?.slice(0, 10), '2030-02-28')
})
