// Goal: for any history of captures (split or not), partial refunds, chargebacks and their
// reversals, settlements, and payouts paid or failed, and for any period: the balance summary's
// opening + activity = closing, the closing equals the balance before the period's end, the
// sum of every balance transaction's net equals reserve + available, and each payout's
// reconciliation parts sum to its amount — for the merchant and for its submerchant.
// Method: fast-check generates the histories; each is posted through the ledger's own posting
// functions (the ones payments, disputes and payouts call) into the real database (PGlite),
// one fresh merchant per run, at times a second apart so periods can cut anywhere; the reads
// go through the functions behind GET /v1/balance-transactions and POST /v1/reports.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import fc from 'fast-check'
import {
  balanceBefore,
  balanceSummary,
  commissionRefundFor,
  listBalanceTransactions,
  listUnsettledReserveCredits,
  ownerBalance,
  payoutAllocationBatches,
  payoutBatches,
  postCapture,
  postChargeback,
  postChargebackReversal,
  postPayoutCreated,
  postPayoutFailed,
  postPayoutPaid,
  postRefund,
  settleReserveCredit,
  type BalanceOwner,
  type BalanceTransaction,
  type PayoutHeader,
  type Share,
} from '../../src/modules/ledger/index.ts'
import { transact } from '../../src/platform/db/transaction.ts'
import { startTestApp, type TestApp } from '../helpers/app.ts'
import { newSubmerchant } from '../payouts/_support.ts'

type Op =
  | { t: 'capture'; amount: number; subPart: number }
  | { t: 'refund'; which: number; part: number }
  | { t: 'chargeback'; which: number; part: number }
  | { t: 'reverse'; which: number }
  | { t: 'settle' }
  | { t: 'payout'; sub: boolean; part: number }
  | { t: 'outcome'; which: number; paid: boolean }

const part = fc.integer({ min: 1, max: 100 })
const op: fc.Arbitrary<Op> = fc.oneof(
  {
    arbitrary: fc.record({
      t: fc.constant('capture' as const),
      amount: fc.integer({ min: 100, max: 500_000 }),
      subPart: fc.integer({ min: 0, max: 100 }),
    }),
    weight: 4,
  },
  { arbitrary: fc.record({ t: fc.constant('refund' as const), which: fc.nat(), part }), weight: 2 },
  {
    arbitrary: fc.record({ t: fc.constant('chargeback' as const), which: fc.nat(), part }),
    weight: 1,
  },
  { arbitrary: fc.record({ t: fc.constant('reverse' as const), which: fc.nat() }), weight: 1 },
  { arbitrary: fc.record({ t: fc.constant('settle' as const) }), weight: 2 },
  {
    arbitrary: fc.record({ t: fc.constant('payout' as const), sub: fc.boolean(), part }),
    weight: 2,
  },
  {
    arbitrary: fc.record({
      t: fc.constant('outcome' as const),
      which: fc.nat(),
      paid: fc.boolean(),
    }),
    weight: 2,
  },
)

interface Capture {
  paymentId: string
  amount: number
  commission: number
  shares: Share[]
  refunded: number
  commissionRefunded: number
  chargedBack: number
}

async function play(h: TestApp, ops: readonly Op[], base: number): Promise<BalanceOwner[]> {
  const m = await h.newMerchant()
  const sub = await newSubmerchant(h, m.merchantId)
  const owners: BalanceOwner[] = [
    {
      merchantId: m.merchantId,
      ownerType: 'merchant',
      ownerId: m.merchantId,
      settlementDelaySeconds: 0,
    },
    {
      merchantId: m.merchantId,
      ownerType: 'submerchant',
      ownerId: sub.submerchantId,
      settlementDelaySeconds: 0,
    },
  ]
  const db = h.deps.db
  const captures: Capture[] = []
  const chargebacks: { id: string; capture: Capture; amount: number; reversed: boolean }[] = []
  const payouts: { id: string; done: boolean }[] = []
  let n = 0
  for (const [i, o] of ops.entries()) {
    const at = new Date(base + i * 1000)
    const id = `${m.merchantId}-${String(i)}`
    if (o.t === 'capture') {
      const subGross = Math.floor((o.amount * o.subPart) / 100)
      const shares: Share[] = []
      if (o.amount - subGross > 0) {
        shares.push({
          ownerType: 'merchant',
          ownerId: m.merchantId,
          grossMinor: o.amount - subGross,
        })
      }
      if (subGross > 0) {
        shares.push({ ownerType: 'submerchant', ownerId: sub.submerchantId, grossMinor: subGross })
      }
      const commission = Math.min(o.amount, Math.floor((o.amount * 249) / 10_000) + 25)
      const c: Capture = {
        paymentId: `pay_${id}`,
        amount: o.amount,
        commission,
        shares,
        refunded: 0,
        commissionRefunded: 0,
        chargedBack: 0,
      }
      await transact(db, (tx) =>
        postCapture(tx, {
          merchantId: m.merchantId,
          paymentId: c.paymentId,
          amount: c.amount,
          commission,
          shares,
          at,
        }),
      )
      captures.push(c)
    } else if (o.t === 'refund' && captures.length > 0) {
      const c = captures[o.which % captures.length]
      assert.ok(c)
      const room = c.amount - c.refunded - c.chargedBack
      const amount = Math.floor((room * o.part) / 100)
      if (amount <= 0) continue
      const commissionRefund = commissionRefundFor(
        c.amount,
        c.commission,
        c.refunded,
        amount,
        c.commissionRefunded,
      )
      await transact(db, (tx) =>
        postRefund(tx, {
          merchantId: m.merchantId,
          paymentId: c.paymentId,
          refundId: `rfn_${id}`,
          amount,
          commissionRefund,
          previousRefundedMinor: c.refunded,
          previousCommissionRefundedMinor: c.commissionRefunded,
          paymentAmount: c.amount,
          paymentCommission: c.commission,
          shares: c.shares,
          at,
        }),
      )
      c.refunded += amount
      c.commissionRefunded += commissionRefund
    } else if (o.t === 'chargeback' && captures.length > 0) {
      const c = captures[o.which % captures.length]
      assert.ok(c)
      const room = c.amount - c.refunded - c.chargedBack
      const amount = Math.floor((room * o.part) / 100)
      if (amount <= 0) continue
      await transact(db, (tx) =>
        postChargeback(tx, {
          merchantId: m.merchantId,
          paymentId: c.paymentId,
          chargebackId: `cbk_${id}`,
          amount,
          previousChargedBackMinor: c.chargedBack,
          paymentAmount: c.amount,
          shares: c.shares,
          at,
        }),
      )
      c.chargedBack += amount
      chargebacks.push({ id: `cbk_${id}`, capture: c, amount, reversed: false })
    } else if (o.t === 'reverse') {
      const open = chargebacks.filter((cb) => !cb.reversed)
      const cb = open[o.which % Math.max(1, open.length)]
      if (!cb) continue
      await transact(db, (tx) =>
        postChargebackReversal(tx, { merchantId: m.merchantId, chargebackId: cb.id, at }),
      )
      cb.reversed = true
      cb.capture.chargedBack -= cb.amount
    } else if (o.t === 'settle') {
      let after: Awaited<ReturnType<typeof listUnsettledReserveCredits>>[number] | undefined
      for (;;) {
        const page = await listUnsettledReserveCredits(db, after, 200)
        for (const credit of page.filter((cr) => cr.merchantId === m.merchantId)) {
          await transact(db, (tx) =>
            settleReserveCredit(tx, {
              merchantId: m.merchantId,
              entryId: credit.entryId,
              ownerType: credit.ownerType,
              ownerId: credit.ownerId,
              maturedBefore: at,
              at,
            }),
          )
        }
        after = page.at(-1)
        if (page.length < 200) break
      }
    } else if (o.t === 'payout') {
      const owner = o.sub ? owners[1] : owners[0]
      assert.ok(owner)
      const balance = await ownerBalance(db, m.merchantId, owner.ownerType, owner.ownerId)
      const amount = Math.floor((balance.availableMinor * o.part) / 100)
      if (amount <= 0) continue
      const payoutId = `po-${id}`
      await transact(db, (tx) =>
        postPayoutCreated(tx, {
          merchantId: m.merchantId,
          ownerType: owner.ownerType,
          ownerId: owner.ownerId,
          payoutId,
          amount,
          at,
        }),
      )
      payouts.push({ id: payoutId, done: false })
    } else if (o.t === 'outcome') {
      const open = payouts.filter((p) => !p.done)
      const p = open[o.which % Math.max(1, open.length)]
      if (!p) continue
      await transact(db, (tx) =>
        (o.paid ? postPayoutPaid : postPayoutFailed)(tx, {
          merchantId: m.merchantId,
          payoutId: p.id,
          at,
        }),
      )
      p.done = true
    }
    n++
  }
  assert.ok(n >= 0)
  return owners
}

async function everyTransaction(h: TestApp, owner: BalanceOwner): Promise<BalanceTransaction[]> {
  const all: BalanceTransaction[] = []
  let after: BalanceTransaction['position'] | undefined
  for (;;) {
    const page = await listBalanceTransactions(h.deps.db, owner, {
      ...(after ? { after } : {}),
      limit: 50,
    })
    all.push(...page)
    const last = page.at(-1)
    if (page.length < 50 || !last) return all
    after = last.position
  }
}

const sumNet = (xs: readonly BalanceTransaction[]) => xs.reduce((s, x) => s + x.net, 0)

test('opening + activity = closing, Σ net = balance and payouts add up, over random histories', async (t) => {
  const h = await startTestApp(t)
  const base0 = h.clock.now().getTime() - 30 * 86_400_000
  let run = 0
  await fc.assert(
    fc.asyncProperty(
      fc.array(op, { minLength: 4, maxLength: 20 }),
      fc.array(fc.tuple(fc.integer({ min: -1, max: 25 }), fc.integer({ min: 0, max: 26 })), {
        minLength: 1,
        maxLength: 3,
      }),
      async (ops, cuts) => {
        // Each run's history sits in a day of its own, so runs never share a period.
        const base = base0 + run++ * 86_400_000
        const owners = await play(h, ops, base)
        for (const owner of owners) {
          const all = await everyTransaction(h, owner)
          const balance = await ownerBalance(
            h.deps.db,
            owner.merchantId,
            owner.ownerType,
            owner.ownerId,
          )
          assert.equal(sumNet(all), balance.reserveMinor + balance.availableMinor)
          for (const b of all) assert.equal(b.amount, b.net + b.fee)

          for (const [a, b] of cuts) {
            // Period boundaries half a second off the posting times, either order normalised.
            const [lo, hi] = a <= b ? [a, b] : [b, a]
            const from = new Date(base + lo * 1000 + 500)
            const to = new Date(base + hi * 1000 + 500)
            const s = await balanceSummary(h.deps.db, owner, { from, to })
            const activity = s.activity.reduce((sum, line) => sum + line.net, 0)
            assert.equal(s.opening + activity, s.closing)
            assert.equal(s.opening, await balanceBefore(h.deps.db, owner, from))
            assert.equal(s.closing, await balanceBefore(h.deps.db, owner, to))
            assert.equal(
              activity,
              sumNet(all.filter((x) => x.createdAt >= from && x.createdAt < to)),
            )
          }

          for await (const batch of payoutBatches(h.deps.db, owner, {})) {
            for (const p of batch) {
              let settled = 0
              for await (const rows of payoutAllocationBatches(h.deps.db, owner, p, 3)) {
                for (const r of rows) settled += r.settled
              }
              assert.equal(settled, p.amount, `payout ${p.payoutId}`)
            }
          }
        }
      },
    ),
    { numRuns: 8 },
  )
})

test('the worked example of docs/reports.md adds up to the kuruş', async (t) => {
  const h = await startTestApp(t)
  const db = h.deps.db
  const m = await h.newMerchant()
  const merchantId = m.merchantId
  const owner: BalanceOwner = {
    merchantId,
    ownerType: 'merchant',
    ownerId: merchantId,
    settlementDelaySeconds: 86_400,
  }
  const hour = 3_600_000
  const d1 = Date.UTC(2026, 0, 5) // any two days in the past
  const d2 = d1 + 24 * hour
  const d3 = d2 + 24 * hour
  const at = (day: number, h24: number) => new Date(day + h24 * hour)
  const shares = (gross: number): Share[] => [
    { ownerType: 'merchant', ownerId: merchantId, grossMinor: gross },
  ]
  await transact(db, (tx) =>
    postCapture(tx, {
      merchantId,
      paymentId: `pay_A${merchantId}`,
      amount: 100_000,
      commission: 2_515,
      shares: shares(100_000),
      at: at(d1, 10),
    }),
  )
  await transact(db, (tx) =>
    postCapture(tx, {
      merchantId,
      paymentId: `pay_B${merchantId}`,
      amount: 50_000,
      commission: 1_270,
      shares: shares(50_000),
      at: at(d1, 11),
    }),
  )
  // The settlement reconciler at D2 10:00 and 11:00 (delay 1 day).
  for (const hourOfD2 of [10, 11]) {
    const now = at(d2, hourOfD2)
    const page = await listUnsettledReserveCredits(db, undefined, 1000)
    for (const credit of page.filter((c) => c.merchantId === merchantId)) {
      if (credit.creditedAt.getTime() > now.getTime() - 24 * hour) continue
      await transact(db, (tx) =>
        settleReserveCredit(tx, {
          merchantId,
          entryId: credit.entryId,
          ownerType: 'merchant',
          ownerId: merchantId,
          maturedBefore: new Date(now.getTime() - 24 * hour),
          at: now,
        }),
      )
    }
  }
  const commissionBack = commissionRefundFor(50_000, 1_270, 0, 20_000, 0)
  assert.equal(commissionBack, 508)
  await transact(db, (tx) =>
    postRefund(tx, {
      merchantId,
      paymentId: `pay_B${merchantId}`,
      refundId: `rfn_B${merchantId}`,
      amount: 20_000,
      commissionRefund: commissionBack,
      previousRefundedMinor: 0,
      previousCommissionRefundedMinor: 0,
      paymentAmount: 50_000,
      paymentCommission: 1_270,
      shares: shares(50_000),
      at: at(d2, 12),
    }),
  )
  await transact(db, (tx) =>
    postChargeback(tx, {
      merchantId,
      paymentId: `pay_A${merchantId}`,
      chargebackId: `cbk_A${merchantId}`,
      amount: 10_000,
      previousChargedBackMinor: 0,
      paymentAmount: 100_000,
      shares: shares(100_000),
      at: at(d2, 13),
    }),
  )
  await transact(db, (tx) =>
    postChargebackReversal(tx, { merchantId, chargebackId: `cbk_A${merchantId}`, at: at(d2, 14) }),
  )
  for (const [payoutId, amount, hourOfD2] of [
    [`P1${merchantId}`, 100_000, 15],
    [`P2${merchantId}`, 5_000, 16],
  ] as const) {
    await transact(db, (tx) =>
      postPayoutCreated(tx, {
        merchantId,
        ownerType: 'merchant',
        ownerId: merchantId,
        payoutId,
        amount,
        at: at(d2, hourOfD2),
      }),
    )
  }
  await transact(db, (tx) =>
    postPayoutPaid(tx, { merchantId, payoutId: `P1${merchantId}`, at: at(d2, 17) }),
  )
  await transact(db, (tx) =>
    postPayoutFailed(tx, { merchantId, payoutId: `P2${merchantId}`, at: at(d2, 17) }),
  )

  const all = (await everyTransaction(h, owner)).reverse()
  assert.deepEqual(
    all.map((b) => [b.type, b.amount, b.fee, b.net, b.status]),
    [
      ['charge', 100_000, 2_515, 97_485, 'available'],
      ['charge', 50_000, 1_270, 48_730, 'available'],
      ['refund', -20_000, -508, -19_492, 'available'],
      ['chargeback', -10_000, 0, -10_000, 'available'],
      ['chargeback_reversal', 10_000, 0, 10_000, 'available'],
      ['payout', -100_000, 0, -100_000, 'available'],
      ['payout', -5_000, 0, -5_000, 'available'],
      ['payout_failure', 5_000, 0, 5_000, 'available'],
    ],
  )
  assert.deepEqual(
    all.slice(0, 2).map((b) => b.availableOn.toISOString()),
    [at(d2, 10).toISOString(), at(d2, 11).toISOString()],
  )
  assert.equal(sumNet(all), 26_723)
  const balance = await ownerBalance(db, merchantId, 'merchant', merchantId)
  assert.deepEqual([balance.reserveMinor, balance.availableMinor], [0, 26_723])

  const day1 = await balanceSummary(db, owner, { from: new Date(d1), to: new Date(d2) })
  const line = (s: typeof day1, type: string) => s.activity.find((a) => a.type === type)
  assert.equal(day1.opening, 0)
  assert.deepEqual(line(day1, 'charge'), {
    type: 'charge',
    count: 2,
    amount: 150_000,
    fee: 3_785,
    net: 146_215,
  })
  assert.equal(day1.closing, 146_215)
  const day2 = await balanceSummary(db, owner, { from: new Date(d2), to: new Date(d3) })
  assert.equal(day2.opening, 146_215)
  assert.deepEqual(
    day2.activity.filter((a) => a.count > 0).map((a) => [a.type, a.count, a.amount, a.fee, a.net]),
    [
      ['refund', 1, -20_000, -508, -19_492],
      ['chargeback', 1, -10_000, 0, -10_000],
      ['chargeback_reversal', 1, 10_000, 0, 10_000],
      ['payout', 2, -105_000, 0, -105_000],
      ['payout_failure', 1, 5_000, 0, 5_000],
    ],
  )
  assert.equal(day2.closing, 26_723)

  const parts: [string, string, [string, number][]][] = []
  for await (const batch of payoutBatches(db, owner, { from: new Date(d2), to: new Date(d3) })) {
    for (const p of batch) {
      const rows: [string, number][] = []
      for await (const page of payoutAllocationBatches(db, owner, p)) {
        for (const r of page) rows.push([r.transaction.sourceId, r.settled])
      }
      parts.push([p.payoutId, p.status, rows])
    }
  }
  assert.deepEqual(parts, [
    [
      `P1${merchantId}`,
      'paid',
      [
        [`pay_A${merchantId}`, 97_485],
        [`pay_B${merchantId}`, 2_515],
      ],
    ],
    [`P2${merchantId}`, 'failed', [[`pay_B${merchantId}`, 5_000]]],
  ])

  // P3 of the remaining 26,723 draws the refund, the chargeback, its reversal and the failure.
  await transact(db, (tx) =>
    postPayoutCreated(tx, {
      merchantId,
      ownerType: 'merchant',
      ownerId: merchantId,
      payoutId: `P3${merchantId}`,
      amount: 26_723,
      at: at(d2, 18),
    }),
  )
  let p3: PayoutHeader | undefined
  for await (const batch of payoutBatches(db, owner, { from: at(d2, 18) })) p3 = batch[0]
  assert.ok(p3)
  const p3Rows: [string, number][] = []
  for await (const page of payoutAllocationBatches(db, owner, p3)) {
    for (const r of page) p3Rows.push([r.transaction.type, r.settled])
  }
  assert.deepEqual(p3Rows, [
    ['charge', 26_723],
    ['refund', -5_000],
    ['chargeback', -10_000],
    ['chargeback_reversal', 10_000],
    ['payout_failure', 5_000],
  ])
})
