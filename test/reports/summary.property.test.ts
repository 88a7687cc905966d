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
  let after: { createdAt: Date; entryId: string } | undefined
  for (;;) {
    const page = await listBalanceTransactions(h.deps.db, owner, {
      ...(after ? { after } : {}),
      limit: 50,
    })
    all.push(...page)
    const last = page.at(-1)
    if (page.length < 50 || !last) return all
    after = { createdAt: last.createdAt, entryId: last.entryId }
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
