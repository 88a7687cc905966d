// Goal: every merchant gets its own available balance paid to its own bank account on its
// schedule (issue 40): the bank account and schedule through the API (input rules, the owner
// told of a change); a daily run pays yesterday's captures today, once, explained line by line
// (the lines sum to the amount); a failed payout's money comes back and goes out with the next
// one; a chargeback after a payout makes the balance negative, which no run pays and the next
// payout nets (shown as a line); the ledger stays balanced.
// Method: signed HTTP against the real app; the test clock sets the Istanbul day, and
// POST /v1/sandbox/reconcile runs the reconcilers (settlement, then the settlement payout run)
// and drains the rail jobs.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { eventsForResource } from '../../src/modules/events/index.ts'
import { listMailbox } from '../../src/modules/mail/index.ts'
import type { TestApp, TestMerchant } from '../helpers/app.ts'
import { startTestApp } from '../helpers/app.ts'
import { CARDS, charge } from '../helpers/payments.ts'
import { raise } from '../disputes/_support.ts'
import { newDashboardMerchant } from '../dashboard/_web.ts'
import { assertLedgerOk, balanceOf, reconcile, trIban, type PayoutBody } from './_support.ts'

interface SettlementPayout extends PayoutBody {
  kind: string
  arrivalDate: string | null
  bankAccountLast4: string | null
}

interface Line {
  balanceTransactionId: string
  type: string
  sourceId: string
  amountMinor: number
  feeMinor: number
  netMinor: number
  settledMinor: number
}

/** Istanbul wall time → the instant (UTC+3 all year). */
function istanbul(local: string): Date {
  return new Date(`${local}+03:00`)
}

async function setAccount(m: TestMerchant, iban: string, holderName = 'Anadolu Kitap Ltd. Şti.') {
  const res = await m.client.request<Record<string, unknown>>('PUT', '/v1/bank-account', {
    body: { iban, holderName },
  })
  assert.equal(res.status, 200, JSON.stringify(res.body))
  return res.body
}

async function settlementPayouts(m: TestMerchant): Promise<SettlementPayout[]> {
  const res = await m.client.request<{ items: SettlementPayout[] }>('GET', '/v1/payouts')
  assert.equal(res.status, 200)
  return res.body.items.filter((p) => p.kind === 'settlement')
}

async function linesOf(m: TestMerchant, payoutId: string): Promise<Line[]> {
  const lines: Line[] = []
  let cursor: string | null = null
  do {
    const q: string = cursor ? `?limit=2&cursor=${encodeURIComponent(cursor)}` : '?limit=2'
    const res = await m.client.request<{ items: Line[]; nextCursor: string | null }>(
      'GET',
      `/v1/payouts/${payoutId}/balance-transactions${q}`,
    )
    assert.equal(res.status, 200, JSON.stringify(res.body))
    lines.push(...res.body.items)
    cursor = res.body.nextCursor
  } while (cursor)
  return lines
}

async function assertExplained(m: TestMerchant, p: SettlementPayout): Promise<Line[]> {
  const lines = await linesOf(m, p.payoutId)
  assert.equal(
    lines.reduce((s, l) => s + l.settledMinor, 0),
    p.amountMinor,
    `payout ${p.payoutId}: its lines sum to its amount`,
  )
  return lines
}

async function capture(m: TestMerchant, amount: number): Promise<string> {
  const { res } = await charge(m.client, CARDS.frictionless, amount)
  assert.equal(res.status, 201, JSON.stringify(res.body))
  return res.body.paymentId
}

async function at(h: TestApp, m: TestMerchant, local: string) {
  h.clock.set(istanbul(local))
  return reconcile(m.client)
}

test('bank account: TR IBAN checksum and holder rules (400, nothing stored), masked reads, owners emailed', async (t) => {
  const h = await startTestApp(t)
  const m = await newDashboardMerchant(h)
  const none = await m.client.request<{ code: string }>('GET', '/v1/bank-account')
  assert.equal(none.status, 404)
  assert.equal(none.body.code, 'SVC-RES-3301')

  const good = trIban('1234567890121326')
  const bad: [Record<string, unknown>, RegExp][] = [
    [
      { iban: good.slice(0, -1) + (good.endsWith('0') ? '1' : '0'), holderName: 'Ayşe' },
      /iban: IBAN check digits/,
    ],
    [{ iban: 'DE89370400440532013000', holderName: 'Ayşe' }, /iban: IBAN must be a Turkish/],
    [{ iban: 'TR12', holderName: 'Ayşe' }, /iban:/],
    [{ iban: good, holderName: ' ' }, /holderName: must have at least 2/],
    [{ iban: good, holderName: '<script>x</script>' }, /holderName: may contain only/],
    [{ iban: good, holderName: '12 34' }, /holderName: must contain a letter/],
    [{ iban: good, holderName: 'x'.repeat(141) }, /holderName: must have at most 140/],
    [{ iban: good }, /holderName/],
    [{ iban: good, holderName: 'Ayşe', extra: 1 }, /./],
  ]
  for (const [body, message] of bad) {
    const res = await m.client.request<{ code: string; message: string }>(
      'PUT',
      '/v1/bank-account',
      { body },
    )
    assert.equal(res.status, 400, JSON.stringify({ body, res: res.body }))
    assert.equal(res.body.code, 'SVC-VAL-3001')
    assert.match(res.body.message, message)
  }
  assert.equal((await m.client.request('GET', '/v1/bank-account')).status, 404, 'nothing stored')

  // Spaces and lower case are accepted and normalised; the IBAN is never echoed.
  const spaced = good.toLowerCase().replace(/(.{4})/g, '$1 ')
  const set = await setAccount(m, spaced, '  Anadolu   Kitap  Ltd. Şti. ')
  assert.equal(set['last4'], '1326')
  assert.equal(set['holderName'], 'Anadolu Kitap Ltd. Şti.')
  assert.equal(set['ibanMasked'], `${good.slice(0, 4)}${'*'.repeat(18)}1326`)
  assert.equal(set['payoutsHeldUntil'], null, 'no hold in demo')
  assert.ok(!JSON.stringify(set).includes(good.slice(4, 22)))
  const read = await m.client.request<Record<string, unknown>>('GET', '/v1/bank-account')
  assert.deepEqual(read.body, set)

  await reconcile(m.client) // the notification job
  const mails = await listMailbox(h.deps, { to: m.email })
  const changed = mails.filter((x) => x.subject.includes('bank account was changed'))
  assert.equal(changed.length, 1)
  assert.match(changed[0]?.text ?? '', /IBAN ending 1326/)
  assert.ok(!(changed[0]?.text ?? '').includes(good), 'the mail shows only the last four')

  // The same account again is no change: no second mail.
  await setAccount(m, good, 'Anadolu Kitap Ltd. Şti.')
  await reconcile(m.client)
  const again = (await listMailbox(h.deps, { to: m.email })).filter((x) =>
    x.subject.includes('bank account was changed'),
  )
  assert.equal(again.length, 1)
})

test('payout schedule: default daily; weekly/monthly anchors; bad input is 400 and changes nothing', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  h.clock.set(istanbul('2026-12-02T10:00:00')) // a Wednesday
  const def = await m.client.request<Record<string, unknown>>('GET', '/v1/payout-schedule')
  assert.equal(def.status, 200)
  assert.equal(def.body['interval'], 'daily')
  assert.equal(def.body['minimumMinor'], 0)
  assert.equal(def.body['nextRunDate'], '2026-12-03')

  const weekly = await m.client.request<Record<string, unknown>>('PUT', '/v1/payout-schedule', {
    body: { interval: 'weekly', anchor: 'friday', minimumMinor: 5_000 },
  })
  assert.equal(weekly.status, 200, JSON.stringify(weekly.body))
  assert.deepEqual(
    [
      weekly.body['interval'],
      weekly.body['anchor'],
      weekly.body['minimumMinor'],
      weekly.body['nextRunDate'],
    ],
    ['weekly', 'friday', 5_000, '2026-12-04'],
  )
  const monthly = await m.client.request<Record<string, unknown>>('PUT', '/v1/payout-schedule', {
    body: { interval: 'monthly', anchor: 31 },
  })
  assert.equal(monthly.status, 200, JSON.stringify(monthly.body))
  assert.equal(monthly.body['nextRunDate'], '2026-12-31')

  for (const body of [
    { interval: 'hourly' },
    { interval: 'weekly', anchor: 'funday' },
    { interval: 'monthly', anchor: 0 },
    { interval: 'monthly', anchor: 32 },
    { interval: 'daily', anchor: 'monday' },
    { interval: 'daily', minimumMinor: -1 },
    { interval: 'daily', minimumMinor: 1.5 },
  ]) {
    const res = await m.client.request<{ code: string }>('PUT', '/v1/payout-schedule', { body })
    assert.equal(res.status, 400, JSON.stringify(body))
    assert.equal(res.body.code, 'SVC-VAL-3001')
  }
  const after = await m.client.request<Record<string, unknown>>('GET', '/v1/payout-schedule')
  assert.equal(after.body['interval'], 'monthly')
  assert.equal(after.body['anchor'], '31')
})

test("daily: yesterday's captures are paid out today, once, to the bank account, explained line by line", async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  await setAccount(m, trIban('5555000011112222'))
  await at(h, m, '2026-12-01T09:00:00') // Tuesday: nothing yet, today's run is recorded empty
  const first = await capture(m, 10_000)
  const second = await capture(m, 5_000)
  await at(h, m, '2026-12-01T18:00:00')
  assert.deepEqual(await settlementPayouts(m), [], "the day's run already happened")
  const { availableMinor } = await balanceOf(m.client, m.merchantId)
  assert.ok(availableMinor > 0)

  await at(h, m, '2026-12-02T00:30:00') // Wednesday's run
  await reconcile(m.client) // the rail answers
  const [payout, ...more] = await settlementPayouts(m)
  assert.ok(payout)
  assert.equal(more.length, 0)
  assert.equal(payout.kind, 'settlement')
  assert.equal(payout.status, 'paid')
  assert.equal(payout.rail, 'fast')
  assert.equal(payout.arrivalDate, '2026-12-02')
  assert.equal(payout.bankAccountLast4, '2222')
  assert.equal(payout.ownerType, 'merchant')
  assert.equal(payout.amountMinor, availableMinor)
  const lines = await assertExplained(m, payout)
  assert.deepEqual(
    lines.map((l) => [l.type, l.sourceId]),
    [
      ['charge', first],
      ['charge', second],
    ],
  )
  for (const l of lines) {
    assert.equal(l.amountMinor, l.netMinor + l.feeMinor)
    assert.ok(l.feeMinor > 0, 'the fee is shown')
    assert.equal(l.settledMinor, l.netMinor)
  }
  assert.deepEqual(
    (await eventsForResource(h.deps.db, m.merchantId, payout.payoutId)).map((e) => e.type),
    ['payout.created', 'payout.paid'],
  )
  const after = await balanceOf(m.client, m.merchantId)
  assert.equal(after.availableMinor, 0)
  assert.equal(after.payoutPendingMinor, 0)

  // Later ticks of the same day make nothing more, even with new money.
  await capture(m, 2_000)
  await at(h, m, '2026-12-02T15:00:00')
  assert.equal((await settlementPayouts(m)).length, 1)
  await assertLedgerOk(h)
})

test('a merchant without a bank account accrues; manual never pays; a minimum waits', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  await at(h, m, '2026-12-07T09:00:00')
  await capture(m, 10_000)
  await at(h, m, '2026-12-08T09:00:00')
  assert.deepEqual(await settlementPayouts(m), [])
  const accrued = (await balanceOf(m.client, m.merchantId)).availableMinor
  assert.ok(accrued > 0)

  await m.client.request('PUT', '/v1/payout-schedule', { body: { interval: 'manual' } })
  await setAccount(m, trIban('7777'))
  await at(h, m, '2026-12-09T09:00:00')
  assert.deepEqual(await settlementPayouts(m), [])

  await m.client.request('PUT', '/v1/payout-schedule', {
    body: { interval: 'daily', minimumMinor: accrued + 1 },
  })
  await at(h, m, '2026-12-10T09:00:00')
  assert.deepEqual(await settlementPayouts(m), [], 'below the minimum')
  await capture(m, 1_000)
  await at(h, m, '2026-12-11T09:00:00')
  await reconcile(m.client)
  const [p] = await settlementPayouts(m)
  assert.ok(p)
  assert.equal(
    p.amountMinor,
    (await linesOf(m, p.payoutId)).reduce((s, l) => s + l.settledMinor, 0),
  )
  assert.equal(p.status, 'paid')
  await assertLedgerOk(h)
})

test('a failed payout returns the money (a balance transaction) and the next payout carries it', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  await setAccount(m, trIban('9999')) // the sandbox rail fails IBANs ending 9999
  await at(h, m, '2026-12-14T09:00:00')
  await capture(m, 10_000)
  await at(h, m, '2026-12-15T09:00:00')
  await reconcile(m.client)
  const [failed] = await settlementPayouts(m)
  assert.ok(failed)
  assert.equal(failed.status, 'failed')
  assert.equal(failed.failureCode, 'account_closed')
  assert.deepEqual(
    (await eventsForResource(h.deps.db, m.merchantId, failed.payoutId)).map((e) => e.type),
    ['payout.created', 'payout.failed'],
  )
  const back = await balanceOf(m.client, m.merchantId)
  assert.equal(back.availableMinor, failed.amountMinor, 'the money is available again')
  const btx = await m.client.request<{
    items: { type: string; net: number; payoutId: string | null }[]
  }>('GET', '/v1/balance-transactions?type=payout_failure')
  assert.equal(btx.status, 200, JSON.stringify(btx.body))
  assert.deepEqual(
    btx.body.items.map((i) => [i.type, i.net, i.payoutId]),
    [['payout_failure', failed.amountMinor, failed.payoutId]],
  )

  await setAccount(m, trIban('4444'))
  await capture(m, 3_000)
  await at(h, m, '2026-12-16T09:00:00')
  await reconcile(m.client)
  const next = (await settlementPayouts(m)).find((p) => p.payoutId !== failed.payoutId)
  assert.ok(next)
  assert.equal(next.status, 'paid')
  assert.equal(next.bankAccountLast4, '4444')
  const lines = await assertExplained(m, next)
  assert.deepEqual(
    lines.map((l) => l.type),
    ['payout_failure', 'charge'],
    'the failed payout came back; the new sale',
  )
  await assertExplained(m, failed)
  await assertLedgerOk(h)
})

test('a chargeback after a payout: the balance goes negative, no run pays it, the next payout nets it', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  await setAccount(m, trIban('3333'))
  await at(h, m, '2026-12-21T09:00:00')
  const sale = await capture(m, 10_000)
  await at(h, m, '2026-12-22T09:00:00')
  await reconcile(m.client)
  const [paid] = await settlementPayouts(m)
  assert.ok(paid)
  assert.equal(paid.status, 'paid')

  const cb = await raise(m, sale)
  assert.equal(cb.status, 201, JSON.stringify(cb.body))
  const negative = await balanceOf(m.client, m.merchantId)
  assert.equal(negative.availableMinor, -cb.body.amount, 'shown negative')
  await at(h, m, '2026-12-23T09:00:00')
  assert.equal((await settlementPayouts(m)).length, 1, 'a negative balance is never paid out')

  const sale2 = await capture(m, 30_000)
  await at(h, m, '2026-12-24T09:00:00')
  await reconcile(m.client)
  const netted = (await settlementPayouts(m)).find((p) => p.payoutId !== paid.payoutId)
  assert.ok(netted)
  const lines = await assertExplained(m, netted)
  assert.deepEqual(
    lines.map((l) => [
      l.type,
      l.sourceId === sale2 || l.sourceId === cb.body.id || l.sourceId === sale,
    ]),
    [
      ['chargeback', true],
      ['charge', true],
    ],
  )
  const chargeback = lines.find((l) => l.type === 'chargeback')
  assert.equal(chargeback?.settledMinor, -cb.body.amount, 'the chargeback is netted, line by line')
  assert.equal((await balanceOf(m.client, m.merchantId)).availableMinor, 0)
  await assertLedgerOk(h)
})

test('another merchant’s payout lines are 404; a submerchant key may not touch the bank account', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const other = await h.newMerchant()
  await setAccount(m, trIban('2468'))
  await at(h, m, '2026-12-28T09:00:00')
  await capture(m, 10_000)
  await at(h, m, '2026-12-29T09:00:00')
  const [p] = await settlementPayouts(m)
  assert.ok(p)
  const res = await other.client.request<{ code: string }>(
    'GET',
    `/v1/payouts/${p.payoutId}/balance-transactions`,
  )
  assert.equal(res.status, 404)
  const forged = await m.client.request<{ code: string }>(
    'GET',
    `/v1/payouts/${p.payoutId}/balance-transactions?cursor=abc`,
  )
  assert.equal(forged.status, 400)
})

test('above the FAST limit: a Saturday run waits for EFT on Monday (after the weekend), then pays once by EFT', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  await setAccount(m, trIban('8888'))
  await at(h, m, '2026-12-04T09:00:00') // Friday
  await capture(m, 10_500_000) // nets above 100,000 TL
  await at(h, m, '2026-12-05T09:00:00') // Saturday
  await at(h, m, '2026-12-06T12:00:00') // Sunday
  assert.deepEqual(await settlementPayouts(m), [], 'no EFT at the weekend')
  await at(h, m, '2026-12-07T08:30:00') // Monday, before EFT opens
  assert.deepEqual(await settlementPayouts(m), [])
  await at(h, m, '2026-12-07T09:05:00')
  await reconcile(m.client)
  const [p, ...more] = await settlementPayouts(m)
  assert.ok(p)
  assert.equal(more.length, 0)
  assert.equal(p.rail, 'eft')
  assert.equal(p.arrivalDate, '2026-12-07')
  assert.equal(p.status, 'paid')
  await assertExplained(m, p)
  await at(h, m, '2026-12-07T15:00:00')
  assert.equal((await settlementPayouts(m)).length, 1)
})

test('weekly on Thursday: the Republic Day run pays by FAST; later days of the week wait for the next Thursday', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  await setAccount(m, trIban('6666'))
  await m.client.request('PUT', '/v1/payout-schedule', {
    body: { interval: 'weekly', anchor: 'thursday' },
  })
  await at(h, m, '2026-10-26T10:00:00') // Monday: last Thursday's run, nothing yet
  await capture(m, 10_000)
  await at(h, m, '2026-10-27T10:00:00')
  await at(h, m, '2026-10-28T10:00:00')
  assert.deepEqual(await settlementPayouts(m), [], 'not before Thursday')
  await at(h, m, '2026-10-29T10:00:00') // Thursday, Republic Day: FAST runs on holidays
  await reconcile(m.client)
  const [p] = await settlementPayouts(m)
  assert.ok(p)
  assert.equal(p.rail, 'fast')
  assert.equal(p.arrivalDate, '2026-10-29')
  await capture(m, 5_000)
  await at(h, m, '2026-10-30T10:00:00')
  await at(h, m, '2026-11-04T10:00:00')
  assert.equal((await settlementPayouts(m)).length, 1, 'Friday to Wednesday: no run')
  await at(h, m, '2026-11-05T10:00:00')
  assert.equal((await settlementPayouts(m)).length, 2)
})
