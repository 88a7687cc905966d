// Goal: balance transactions and finance reports are the books the ledger keeps (issue 27).
// After a mixed history — charges with marketplace splits, partial refunds, a chargeback and
// its reversal, another chargeback, payouts paid and failed, a charge not settled yet — the
// sum of `net` equals available + reserved for the merchant and for each submerchant; the
// balance summary's opening + activity = closing for several periods and agrees with the
// balance transactions; each payout's reconciliation rows sum to its amount; the files parse
// back (csv-parse, pdftotext); keys see only their own owner.
// Method: everything through the signed HTTP API on PGlite; balances from GET /v1/balances.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { Kurus } from '../../sdk/index.ts'
import { startTestApp, type TestApp, type TestMerchant } from '../helpers/app.ts'
import { CARDS, charge } from '../helpers/payments.ts'
import {
  assertLedgerOk,
  balanceOf,
  newSubmerchant,
  pay as payout,
  reconcile,
  trIban,
} from '../payouts/_support.ts'
import {
  allBalanceTransactions,
  parseCsv,
  pdfText,
  reportFile,
  sumNet,
  summaryOf,
} from './_support.ts'

async function capture(
  m: TestMerchant,
  amount: number,
  splits: { submerchantId: string; amountMinor: number }[] = [],
): Promise<{ paymentId: string; commission: number }> {
  const { res } = await charge(
    m.client,
    CARDS.frictionless,
    amount,
    {},
    splits.length > 0 ? { splits } : {},
  )
  assert.equal(res.status, 201, JSON.stringify(res.body))
  const p = await m.client.request<{ commission: number }>(
    'GET',
    `/v1/payments/${res.body.paymentId}`,
  )
  return { paymentId: res.body.paymentId, commission: p.body.commission }
}

async function ok<T>(
  client: Kurus,
  method: string,
  path: string,
  body: unknown = {},
  status = 200,
): Promise<T> {
  const res = await client.request<T>(method, path, method === 'GET' ? {} : { body })
  assert.equal(res.status, status, `${method} ${path}: ${JSON.stringify(res.body)}`)
  return res.body
}

interface History {
  m: TestMerchant
  s1: Awaited<ReturnType<typeof newSubmerchant>>
  s2: Awaited<ReturnType<typeof newSubmerchant>>
  start: Date
  middle: Date
  plain: { paymentId: string; commission: number }
  late: { paymentId: string; commission: number }
  payoutIds: { merchant: string; s1: string; s2: string }
}

async function mixedHistory(h: TestApp): Promise<History> {
  const start = new Date(h.clock.now().getTime() - 1)
  const m = await h.newMerchant({ name: 'Defter Pazaryeri A.Ş.' })
  const s1 = await newSubmerchant(h, m.merchantId)
  // A submerchant whose bank account makes the sandbox rail fail its payouts.
  const s2 = await newSubmerchant(h, m.merchantId, { iban: trIban('1234567890129999') })

  const split = await capture(m, 10_000, [
    { submerchantId: s1.submerchantId, amountMinor: 3_000 },
    { submerchantId: s2.submerchantId, amountMinor: 2_000 },
  ])
  const plain = await capture(m, 5_000)
  const disputed = await capture(m, 7_000, [
    { submerchantId: s1.submerchantId, amountMinor: 1_000 },
  ])
  await reconcile(m.client) // settles every share (demo's delay is 0)

  await ok(m.client, 'POST', `/v1/payments/${split.paymentId}/refund`, { amount: 2_500 })
  await ok(m.client, 'POST', `/v1/payments/${plain.paymentId}/refund`, { amount: 1_000 })
  const cb = await ok<{ id: string }>(
    m.client,
    'POST',
    `/v1/sandbox/payments/${disputed.paymentId}/chargebacks`,
    { amount: 2_000 },
    201,
  )
  await ok(m.client, 'POST', `/v1/payments/${disputed.paymentId}/chargebacks/${cb.id}/reverse`)
  await ok(
    m.client,
    'POST',
    `/v1/sandbox/payments/${plain.paymentId}/chargebacks`,
    { amount: 500 },
    201,
  )
  const middle = new Date(h.clock.now().getTime() + 1)
  await reconcile(m.client) // the reversal's credit settles

  const p1 = await payout(m.client, s1.submerchantId, 1_000)
  assert.equal(p1.status, 201, JSON.stringify(p1.body))
  const p2 = await payout(m.client, s2.submerchantId, 500)
  assert.equal(p2.status, 201, JSON.stringify(p2.body))
  const draft = await ok<{ draftId: string }>(
    m.client,
    'POST',
    '/v1/payout-drafts',
    {
      storeId: m.storeId,
      rows: [
        {
          rail: 'fast',
          dest: trIban('5555000011112222'),
          holderName: 'Defter Pazaryeri A.Ş.',
          amountMinor: 2_000,
          currency: 'TRY',
        },
      ],
    },
    201,
  )
  const approved = await ok<{ payoutIds: string[] }>(
    m.client,
    'POST',
    `/v1/payout-drafts/${draft.draftId}/approve`,
  )
  await reconcile(m.client) // the rail: s1 and the merchant paid, s2 failed
  const paid = await ok<{ status: string }>(m.client, 'GET', `/v1/payouts/${p1.body.payoutId}`)
  assert.equal(paid.status, 'paid')
  const failed = await ok<{ status: string }>(m.client, 'GET', `/v1/payouts/${p2.body.payoutId}`)
  assert.equal(failed.status, 'failed')

  // A capture after the last reconcile: its shares wait in the reserve (pending).
  const late = await capture(m, 3_000, [{ submerchantId: s1.submerchantId, amountMinor: 600 }])
  await assertLedgerOk(h)
  return {
    m,
    s1,
    s2,
    start,
    middle,
    plain,
    late,
    payoutIds: {
      merchant: approved.payoutIds[0] ?? '',
      s1: p1.body.payoutId,
      s2: p2.body.payoutId,
    },
  }
}

// One history for the file's tests (they share the file's app and database): building it
// through the API is most of the file's time.
let shared: Promise<History> | undefined
function history(h: TestApp): Promise<History> {
  shared ??= mixedHistory(h)
  return shared
}

test('the sum of net equals available + reserved for the merchant and each submerchant', async (t) => {
  const h = await startTestApp(t)
  const x = await history(h)
  const owners: [string, Kurus][] = [
    [x.m.merchantId, x.m.client],
    [x.s1.submerchantId, x.s1.client],
    [x.s2.submerchantId, x.s2.client],
  ]
  const seen = new Set<string>()
  for (const [ownerId, client] of owners) {
    const items = await allBalanceTransactions(client)
    const balance = await balanceOf(x.m.client, ownerId)
    assert.equal(
      sumNet(items),
      balance.availableMinor + balance.reserveMinor,
      `owner ${ownerId}: ${JSON.stringify(items)}`,
    )
    for (const b of items) {
      assert.match(b.id, /^btx_[0-9a-z]{24}$/)
      assert.ok(!seen.has(b.id), 'ids are unique across owners')
      seen.add(b.id)
      assert.equal(b.amount, b.net + b.fee)
      assert.equal(b.currency, 'TRY')
    }
    // Newest first, and the same set as one big page.
    const times = items.map((b) => Date.parse(b.createdAt))
    assert.deepEqual(
      times,
      [...times].sort((a, b) => b - a),
    )
    assert.deepEqual(
      (await allBalanceTransactions(client, {}, 100)).map((b) => b.id),
      items.map((b) => b.id),
    )
  }

  const mine = await allBalanceTransactions(x.m.client)
  const types = new Set(mine.map((b) => b.type))
  for (const type of ['charge', 'refund', 'chargeback', 'chargeback_reversal', 'payout']) {
    assert.ok(types.has(type), `merchant has a ${type}`)
  }
  // The unsplit charge: amount, the payment's commission as fee, net; settled → available.
  const plain = mine.find((b) => b.type === 'charge' && b.sourceId === x.plain.paymentId)
  assert.ok(plain)
  assert.deepEqual(
    { amount: plain.amount, fee: plain.fee, net: plain.net, status: plain.status },
    {
      amount: 5_000,
      fee: x.plain.commission,
      net: 5_000 - x.plain.commission,
      status: 'available',
    },
  )
  // Its partial refund returns the commission pro rata: a negative fee.
  const refund = mine.find((b) => b.type === 'refund' && b.amount === -1_000)
  assert.ok(refund, JSON.stringify(mine.filter((b) => b.type === 'refund')))
  assert.ok(refund.fee < 0 && refund.net === refund.amount - refund.fee)
  // The late charge is not settled yet.
  const late = mine.find((b) => b.sourceId === x.late.paymentId)
  assert.equal(late?.status, 'pending')
  const payoutBtx = mine.find((b) => b.type === 'payout')
  assert.equal(payoutBtx?.payoutId, x.payoutIds.merchant)
  assert.equal(payoutBtx.net, -2_000)

  const s2 = await allBalanceTransactions(x.s2.client)
  const failure = s2.find((b) => b.type === 'payout_failure')
  assert.deepEqual(
    { net: failure?.net, payoutId: failure?.payoutId },
    { net: 500, payoutId: x.payoutIds.s2 },
  )

  // Filters: type, period; a bad cursor and from after to are 400.
  const charges = await allBalanceTransactions(x.m.client, { type: 'charge' })
  assert.deepEqual(
    charges.map((b) => b.id),
    mine.filter((b) => b.type === 'charge').map((b) => b.id),
  )
  const early = await allBalanceTransactions(x.m.client, {
    from: x.start.toISOString(),
    to: x.middle.toISOString(),
  })
  assert.deepEqual(
    early.map((b) => b.id),
    mine.filter((b) => Date.parse(b.createdAt) < x.middle.getTime()).map((b) => b.id),
  )
  const bad = await x.m.client.request<{ code: string }>(
    'GET',
    '/v1/balance-transactions?cursor=abc.def',
  )
  assert.equal(bad.status, 400)
  assert.equal(bad.body.code, 'SVC-VAL-3001')
  const backwards = await x.m.client.request<{ code: string }>(
    'GET',
    `/v1/balance-transactions?from=${x.middle.toISOString()}&to=${x.start.toISOString()}`,
  )
  assert.equal(backwards.status, 400)
  // A cursor of one owner's list is refused on another's.
  const first = await x.m.client.request<{ nextCursor: string }>(
    'GET',
    '/v1/balance-transactions?limit=1',
  )
  const foreign = await x.s1.client.request(
    'GET',
    `/v1/balance-transactions?limit=1&cursor=${encodeURIComponent(first.body.nextCursor)}`,
  )
  assert.equal(foreign.status, 400)
})

test('each payout settled balance transactions whose parts sum to its amount', async (t) => {
  const h = await startTestApp(t)
  const x = await history(h)
  const to = new Date(h.clock.now().getTime() + 1).toISOString()
  const period = { from: x.start.toISOString(), to }

  const csv = parseCsv(
    await reportFile(h, x.m, { type: 'payout_reconciliation', ...period, format: 'csv' }),
  )
  const byPayout = new Map<string, { amount: number; settled: number }>()
  for (const r of csv) {
    const p = byPayout.get(String(r['payoutId'])) ?? {
      amount: Number(r['payoutAmountMinor']),
      settled: 0,
    }
    p.settled += Number(r['settledMinor'])
    byPayout.set(String(r['payoutId']), p)
  }
  assert.deepEqual([...byPayout.keys()], [x.payoutIds.merchant])
  assert.deepEqual(byPayout.get(x.payoutIds.merchant), { amount: 2_000, settled: 2_000 })
  // The rows name the merchant's own balance transactions.
  const mine = new Map((await allBalanceTransactions(x.m.client)).map((b) => [b.id, b]))
  for (const r of csv) {
    const b = mine.get(String(r['balanceTransactionId']))
    assert.ok(b, `row ${JSON.stringify(r)}`)
    assert.equal(Number(r['netMinor']), b.net)
  }

  // The same through the list: ?payoutId= gives the transactions that payout settled.
  const settled = await allBalanceTransactions(x.m.client, { payoutId: x.payoutIds.merchant }, 2)
  assert.deepEqual(
    settled.map((b) => b.id).sort(),
    csv.map((r) => String(r['balanceTransactionId'])).sort(),
  )
  for (const b of settled) assert.equal(b.payoutId, x.payoutIds.merchant)
  // Another owner's payout is simply not in this list.
  assert.deepEqual(await allBalanceTransactions(x.m.client, { payoutId: x.payoutIds.s1 }), [])
  // The submerchants' payouts (paid and failed) through their own keys' lists.
  for (const [client, payoutId, amount] of [
    [x.s1.client, x.payoutIds.s1, 1_000],
    [x.s2.client, x.payoutIds.s2, 500],
  ] as const) {
    const rows = await allBalanceTransactions(client, { payoutId })
    assert.ok(rows.length > 0)
    assert.ok(sumNet(rows) >= amount, 'the settled transactions carry at least the payout')
  }

  const pdf = pdfText(
    await reportFile(h, x.m, { type: 'payout_reconciliation', ...period, format: 'pdf' }),
  )
  assert.match(pdf, /Ödeme Mutabakatı/)
  assert.ok(pdf.includes(x.payoutIds.merchant), pdf)
  assert.match(pdf, /Toplam \(total\)\s+20,00/)
})

test('the balance summary: opening + activity = closing, for several periods', async (t) => {
  const h = await startTestApp(t)
  const x = await history(h)
  const end = new Date(h.clock.now().getTime() + 1)
  const mine = await allBalanceTransactions(x.m.client)
  const before = (at: Date) => sumNet(mine.filter((b) => Date.parse(b.createdAt) < at.getTime()))

  const periods: [Date, Date][] = [
    [x.start, end],
    [x.start, x.middle],
    [x.middle, end],
    [new Date(x.start.getTime() - 86_400_000), new Date(x.start.getTime() - 1000)],
  ]
  let negativeCells = 0
  for (const [from, to] of periods) {
    const file = await reportFile(h, x.m, {
      type: 'balance_summary',
      from: from.toISOString(),
      to: to.toISOString(),
      format: 'csv',
    })
    const rows = parseCsv(file)
    // The formula guard leaves numbers alone (issue 36, finding 9): "-40,00" stays a number a
    // spreadsheet can sum, not the text "'-40,00".
    for (const row of rows) {
      for (const cell of Object.values(row)) {
        assert.doesNotMatch(cell, /^'-\d/, 'a negative amount is written as a number')
        if (/^-\d+,\d{2}$/.test(cell)) negativeCells++
      }
    }
    const s = summaryOf(rows)
    const activity = [...s.activity.values()].reduce((sum, a) => sum + a.net, 0)
    assert.equal(s.opening + activity, s.closing)
    assert.equal(s.opening, before(from))
    assert.equal(s.closing, before(to))
    for (const [type, a] of s.activity) {
      const inPeriod = mine.filter(
        (b) =>
          b.type === type &&
          Date.parse(b.createdAt) >= from.getTime() &&
          Date.parse(b.createdAt) < to.getTime(),
      )
      assert.equal(a.count, inPeriod.length, type)
      assert.equal(a.net, sumNet(inPeriod), type)
      assert.equal(a.amount, a.net + a.fee, type)
    }
  }
  assert.ok(negativeCells > 0, 'the period has negative amounts (fees, refunds) to look at')
  const balance = await balanceOf(x.m.client, x.m.merchantId)
  const whole = summaryOf(
    parseCsv(
      await reportFile(h, x.m, {
        type: 'balance_summary',
        from: x.start.toISOString(),
        to: end.toISOString(),
        format: 'csv',
      }),
    ),
  )
  assert.equal(whole.closing, balance.availableMinor + balance.reserveMinor)

  const pdf = pdfText(
    await reportFile(h, x.m, {
      type: 'balance_summary',
      from: x.start.toISOString(),
      to: end.toISOString(),
      format: 'pdf',
    }),
  )
  assert.match(pdf, /Bakiye Özeti/)
  assert.match(pdf, /Defter Pazaryeri A\.Ş\./)
  const lira = (minor: number) =>
    `${Math.trunc(minor / 100).toLocaleString('tr-TR')},${String(Math.abs(minor) % 100).padStart(2, '0')}`
  assert.ok(pdf.includes(`Kapanış bakiyesi (closing balance)`), pdf)
  assert.ok(pdf.includes(lira(whole.closing)), `${lira(whole.closing)} in\n${pdf}`)
})

test('reports: validation, 409 until ready, tenancy, and submerchant keys', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const other = await h.newMerchant()
  const sub = await newSubmerchant(h, m.merchantId)
  const now = h.clock.now()
  const from = new Date(now.getTime() - 3_600_000).toISOString()
  const to = now.toISOString()

  for (const body of [
    { type: 'balance_summary', from: to, to: from, format: 'csv' },
    { type: 'balance_summary', from, to, format: 'xlsx' },
    { type: 'tax_report', from, to, format: 'csv' },
    { type: 'balance_summary', from, format: 'csv' },
  ]) {
    const res = await m.client.request<{ code: string }>('POST', '/v1/reports', { body })
    assert.equal(res.status, 400, JSON.stringify(body))
    assert.equal(res.body.code, 'SVC-VAL-3001')
  }
  const created = await m.client.request<{ reportId: string; downloadUrl: string; type: string }>(
    'POST',
    '/v1/reports',
    { body: { type: 'payout_reconciliation', from, to, format: 'pdf' } },
  )
  assert.equal(created.status, 202)
  assert.equal(created.body.type, 'payout_reconciliation')
  const early = await m.client.request<{ code: string }>('GET', created.body.downloadUrl)
  assert.equal(early.status, 409)
  assert.equal(early.body.code, 'SVC-STATE-3401')
  // Reports and statements are separate resources on one queue.
  const asExport = await m.client.request(
    'GET',
    `/v1/transactions/exports/${created.body.reportId}`,
  )
  assert.equal(asExport.status, 404)
  for (const path of [
    `/v1/reports/${created.body.reportId}`,
    `/v1/reports/${created.body.reportId}/download`,
  ]) {
    const res = await other.client.request<{ code: string }>('GET', path)
    assert.equal(res.status, 404, path)
    assert.equal(res.body.code, 'SVC-RES-3301')
  }
  // The SDK's methods: create, poll, download; an Idempotency-Key retry is the same report.
  const key = crypto.randomUUID()
  const viaSdk = await m.client.createReport(
    { type: 'balance_summary', from, to, format: 'csv' },
    { idempotencyKey: key },
  )
  const again = await m.client.createReport(
    { type: 'balance_summary', from, to, format: 'csv' },
    { idempotencyKey: key },
  )
  assert.equal(again.reportId, viaSdk.reportId)
  await assert.rejects(m.client.downloadReport(viaSdk.reportId), /not ready/)
  await ok(m.client, 'POST', '/v1/sandbox/reconcile')
  assert.equal((await m.client.getReport(viaSdk.reportId)).status, 'ready')
  const text = await m.client.downloadReport(viaSdk.reportId)
  const summary = summaryOf(parseCsv(Buffer.from(text)))
  assert.deepEqual([summary.opening, summary.closing], [0, 0])
  const all = []
  for await (const b of sub.client.balanceTransactions({ limit: 5 })) all.push(b)
  assert.deepEqual(all, [])

  // A submerchant key reads its balance transactions but asks for no reports.
  const list = await sub.client.request('GET', '/v1/balance-transactions')
  assert.equal(list.status, 200)
  const refused = await sub.client.request<{ code: string }>('POST', '/v1/reports', {
    body: { type: 'balance_summary', from, to, format: 'csv' },
  })
  assert.equal(refused.status, 403)
  assert.equal(refused.body.code, 'SVC-AUTH-3201')
})
