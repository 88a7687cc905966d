// Goal: the ledger's arithmetic keeps every money invariant for any amount, commission, split
// and sequence of captures, refunds or chargebacks: every entry balances, shares sum exactly,
// net = gross − commission part, captures in parts charge exactly the one-shot commission and
// credit exactly the one-shot nets, cumulative refunds never take more than an owner's net
// credit and a full refund returns exactly the commission and every net credit, also when
// refunds come between partial captures.
// Method: fast-check over the pure leg builders (no database), simulating account balances
// by applying the legs; invalid inputs must be refused.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import fc from 'fast-check'
import {
  apportionCapture,
  capturedCommission,
  captureLegs,
  captureStepCommission,
  captureStepLegs,
  chargebackLegs,
  commissionRefundFor,
  mirrorLegs,
  ownerKey,
  refundLegs,
  refundStepCommission,
  settlementLegs,
  type LegSpec,
  type Owner,
  type Share,
} from '../../src/modules/ledger/ledger.postings.ts'
import { apportion, mulDivHalfUp } from '../../src/platform/money.ts'

const AMOUNT_MIN = 100
const AMOUNT_MAX = 10_000_000_000

interface Scenario {
  amount: number
  commission: number
  shares: Share[]
  /** Fraction (per million) of each owner's net already settled to available before refunds. */
  settledPpm: number
  /** The refund (or chargeback) amounts, in order. */
  steps: number[]
  full: boolean
}

/** A payment with 0..5 submerchants whose gross shares sum to <= amount; the parent takes the rest. */
const scenario: fc.Arbitrary<Scenario> = fc
  .integer({ min: AMOUNT_MIN, max: AMOUNT_MAX })
  .chain((amount) =>
    fc.record({
      amount: fc.constant(amount),
      commission: fc.oneof(
        fc.integer({ min: 0, max: amount }),
        fc.integer({ min: 0, max: Math.min(amount, 5_000) }),
        fc.constantFrom(0, amount, amount - 1),
      ),
      splits: fc.array(
        fc.oneof(fc.integer({ min: 0, max: amount }), fc.integer({ min: 0, max: 1_000 })),
        { maxLength: 5 },
      ),
      dropEmptyParent: fc.boolean(),
      settledPpm: fc.integer({ min: 0, max: 1_000_000 }),
      cuts: fc.array(fc.integer({ min: 1, max: 1_000_000 }), { minLength: 1, maxLength: 6 }),
      totalPpm: fc.integer({ min: 1, max: 1_000_000 }),
      full: fc.boolean(),
    }),
  )
  .map((s) => {
    let left = s.amount
    const subs: Share[] = s.splits.map((wanted, i) => {
      const grossMinor = Math.min(wanted, left)
      left -= grossMinor
      return { ownerType: 'submerchant', ownerId: `sub_${i}`, grossMinor }
    })
    const parent: Share = { ownerType: 'merchant', ownerId: 'mrc_parent', grossMinor: left }
    // The payments module drops zero shares (a parent whose splits took everything).
    const shares = [parent, ...subs].filter((x) => x.grossMinor > 0 || !s.dropEmptyParent)
    const total = s.full ? s.amount : Math.max(1, mulDivHalfUp(s.amount, s.totalPpm, 1_000_000))
    const steps = apportion(total, s.cuts).filter((x) => x > 0)
    return {
      amount: s.amount,
      commission: s.commission,
      shares,
      settledPpm: s.settledPpm,
      steps,
      full: s.full,
    }
  })

function sum(values: readonly number[]): number {
  return values.reduce((a, b) => a + b, 0)
}

function assertBalancedLegs(legs: readonly LegSpec[]): void {
  assert.ok(legs.length >= 2, 'an entry has at least two legs')
  for (const leg of legs) assert.ok(Number.isSafeInteger(leg.amount) && leg.amount > 0)
  const debits = sum(legs.filter((l) => l.direction === 'DEBIT').map((l) => l.amount))
  const credits = sum(legs.filter((l) => l.direction === 'CREDIT').map((l) => l.amount))
  assert.equal(debits, credits, 'debits equal credits')
}

/** Signed credit-normal balances per account, built by applying legs. */
class Books {
  readonly balances = new Map<string, number>()
  apply(legs: readonly LegSpec[]): void {
    assertBalancedLegs(legs)
    for (const leg of legs) {
      const key = `${leg.ownerType}:${leg.ownerId}:${leg.accountType}`
      const signed = leg.direction === 'CREDIT' ? leg.amount : -leg.amount
      this.balances.set(key, (this.balances.get(key) ?? 0) + signed)
    }
  }
  of(owner: Owner | { ownerType: 'platform'; ownerId: string }, accountType: string): number {
    return this.balances.get(`${ownerKey(owner)}:${accountType}`) ?? 0
  }
  reserveOf = (owner: Owner): number => this.of(owner, 'merchant_reserve')
  /** What the owner holds in total (reserve + available). */
  heldBy(owner: Owner): number {
    return this.of(owner, 'merchant_reserve') + this.of(owner, 'merchant_available')
  }
}

const PLATFORM = { ownerType: 'platform' as const, ownerId: 'platform' }

test('capture: shares sum exactly, net = gross − commission part, legs balance', () => {
  fc.assert(
    fc.property(scenario, ({ amount, commission, shares }) => {
      const owners = apportionCapture(amount, commission, shares)
      assert.equal(sum(owners.map((o) => o.grossMinor)), amount)
      assert.equal(sum(owners.map((o) => o.commissionMinor)), commission)
      for (const o of owners) {
        assert.equal(o.netMinor, o.grossMinor - o.commissionMinor)
        assert.ok(o.netMinor >= 0 && o.commissionMinor >= 0)
        // Largest remainder never strays a whole kuruş from the exact proportion.
        const exact = (commission * o.grossMinor) / amount
        assert.ok(Math.abs(o.commissionMinor - exact) < 1)
      }
      const legs = captureLegs(amount, commission, shares)
      assertBalancedLegs(legs)
      const books = new Books()
      books.apply(legs)
      assert.equal(books.of(PLATFORM, 'buyer_pending'), -amount)
      assert.equal(books.of(PLATFORM, 'platform_commission'), commission)
      for (const o of owners) assert.equal(books.reserveOf(o), o.netMinor)
    }),
    { numRuns: 1000 },
  )
})

test('commission ties go to the parent (index 0)', () => {
  const shares: Share[] = [
    { ownerType: 'merchant', ownerId: 'mrc_p', grossMinor: 100 },
    { ownerType: 'submerchant', ownerId: 'sub_a', grossMinor: 100 },
  ]
  const [parent, sub] = apportionCapture(200, 1, shares)
  assert.equal(parent?.commissionMinor, 1)
  assert.equal(sub?.commissionMinor, 0)
})

test('refund sequences: balanced, bounded by each net credit, a full refund is exact', () => {
  fc.assert(
    fc.property(scenario, ({ amount, commission, shares, settledPpm, steps, full }) => {
      const owners = apportionCapture(amount, commission, shares)
      const books = new Books()
      books.apply(captureLegs(amount, commission, shares))
      for (const o of owners) {
        const settled = mulDivHalfUp(o.netMinor, settledPpm, 1_000_000)
        if (settled > 0) books.apply(settlementLegs(o, settled))
      }
      let refunded = 0
      let commissionRefunded = 0
      for (const refund of steps) {
        const c = commissionRefundFor(amount, commission, refunded, refund, commissionRefunded)
        assert.ok(c >= 0 && c <= refund, 'a commission refund is within 0..R')
        const legs = refundLegs(
          {
            amount: refund,
            commissionRefund: c,
            previousRefundedMinor: refunded,
            previousCommissionRefundedMinor: commissionRefunded,
            paymentAmount: amount,
            paymentCommission: commission,
            shares,
          },
          books.reserveOf,
        )
        books.apply(legs)
        refunded += refund
        commissionRefunded += c
        const buyerCredit = legs.find(
          (l) => l.accountType === 'buyer_pending' && l.direction === 'CREDIT',
        )
        assert.equal(buyerCredit?.amount, refund)
        for (const o of owners) {
          const returned = o.netMinor - books.heldBy(o)
          assert.ok(returned >= 0, `${o.ownerId} was credited beyond its capture`)
          assert.ok(returned <= o.netMinor, `${o.ownerId} returned more than its net share`)
          assert.ok(books.reserveOf(o) >= 0, 'a refund takes from the reserve only what it holds')
        }
        assert.equal(books.of(PLATFORM, 'platform_commission'), commission - commissionRefunded)
      }
      if (full) {
        assert.equal(refunded, amount)
        assert.equal(commissionRefunded, commission, 'a full refund returns the whole commission')
        for (const o of owners) assert.equal(books.heldBy(o), 0)
        assert.equal(books.of(PLATFORM, 'buyer_pending'), 0)
        assert.equal(books.of(PLATFORM, 'platform_commission'), 0)
      }
    }),
    { numRuns: 500 },
  )
})

test('chargebacks: owners bear at most their gross share; the reversal mirrors exactly', () => {
  fc.assert(
    fc.property(scenario, ({ amount, commission, shares, settledPpm, steps, full }) => {
      const owners = apportionCapture(amount, commission, shares)
      const books = new Books()
      books.apply(captureLegs(amount, commission, shares))
      for (const o of owners) {
        const settled = mulDivHalfUp(o.netMinor, settledPpm, 1_000_000)
        if (settled > 0) books.apply(settlementLegs(o, settled))
      }
      let chargedBack = 0
      for (const chargeback of steps) {
        const input = {
          amount: chargeback,
          previousChargedBackMinor: chargedBack,
          paymentAmount: amount,
          shares,
        }
        const legs = chargebackLegs(input, books.reserveOf)
        // Received then reversed leaves every account as it was.
        const before = new Map(books.balances)
        books.apply(legs)
        books.apply(mirrorLegs(legs))
        assert.deepEqual(
          [...books.balances].filter(([, v]) => v !== 0),
          [...before].filter(([, v]) => v !== 0),
        )
        books.apply(legs)
        chargedBack += chargeback
        for (const o of owners) {
          const borne = o.netMinor - books.heldBy(o)
          assert.ok(borne >= 0 && borne <= o.grossMinor, `${o.ownerId} bears ${borne}`)
        }
      }
      if (full) for (const o of owners) assert.equal(books.heldBy(o), o.netMinor - o.grossMinor)
    }),
    { numRuns: 300 },
  )
})

test('commissionRefundFor is cumulative half-up and exact at the full refund', () => {
  fc.assert(
    fc.property(
      fc
        .integer({ min: AMOUNT_MIN, max: AMOUNT_MAX })
        .chain((amount) =>
          fc.tuple(
            fc.constant(amount),
            fc.integer({ min: 0, max: amount }),
            fc.array(fc.integer({ min: 1, max: 1_000_000 }), { minLength: 1, maxLength: 8 }),
          ),
        ),
      ([amount, commission, cuts]) => {
        let refunded = 0
        let returned = 0
        for (const refund of apportion(amount, cuts).filter((x) => x > 0)) {
          const c = commissionRefundFor(amount, commission, refunded, refund, returned)
          refunded += refund
          returned += c
          assert.equal(returned, mulDivHalfUp(commission, refunded, amount))
        }
        assert.equal(returned, commission)
      },
    ),
    { numRuns: 500 },
  )
})

/** Capture amounts in order: parts of `total`, which is the amount or less (released rest). */
const captureCuts = fc.record({
  cuts: fc.array(fc.integer({ min: 1, max: 1_000_000 }), { minLength: 1, maxLength: 6 }),
  keepPpm: fc.oneof(fc.constant(1_000_000), fc.integer({ min: 1, max: 1_000_000 })),
})

function captureSteps(amount: number, c: { cuts: number[]; keepPpm: number }): number[] {
  const total = Math.max(1, mulDivHalfUp(amount, c.keepPpm, 1_000_000))
  return apportion(total, c.cuts).filter((x) => x > 0)
}

test('captures in parts: each entry balances; commission and nets add up to the one-shot', () => {
  fc.assert(
    fc.property(scenario, captureCuts, ({ amount, commission, shares }, cuts) => {
      const owners = apportionCapture(amount, commission, shares)
      const nets = owners.map((o) => o.netMinor)
      const books = new Books()
      let captured = 0
      let commissionTaken = 0
      for (const part of captureSteps(amount, cuts)) {
        const step = {
          amount,
          commission,
          shares,
          previousCapturedMinor: captured,
          captureAmount: part,
        }
        const k = captureStepCommission(step)
        assert.ok(k >= 0 && k <= part, `a capture's commission ${k} lies in 0..${part}`)
        const legs = captureStepLegs(step)
        assertBalancedLegs(legs)
        books.apply(legs)
        captured += part
        commissionTaken += k
        // Cumulative half-up of the one-shot commission, and the owners hold the cumulative
        // apportionment of what is left after it: never more than their one-shot net.
        assert.equal(commissionTaken, capturedCommission(amount, commission, captured))
        assert.equal(commissionTaken, mulDivHalfUp(commission, captured, amount))
        assert.equal(books.of(PLATFORM, 'buyer_pending'), -captured)
        assert.equal(books.of(PLATFORM, 'platform_commission'), commissionTaken)
        const ownersPart = captured - commissionTaken
        const held = ownersPart > 0 ? apportion(ownersPart, nets) : nets.map(() => 0)
        owners.forEach((o, i) => {
          assert.equal(books.reserveOf(o), held[i])
          assert.ok(books.reserveOf(o) <= o.netMinor, `${o.ownerId} over its one-shot net`)
        })
      }
      if (captured === amount) {
        assert.equal(commissionTaken, commission, 'the captures charge the one-shot commission')
        for (const o of owners) assert.equal(books.reserveOf(o), o.netMinor)
      }
    }),
    { numRuns: 1000 },
  )
})

test('refunds between and after partial captures: each balances, full refunds return exactly the captures', () => {
  fc.assert(
    fc.property(scenario, captureCuts, fc.integer({ min: 0, max: 1_000_000 }), (sc, cuts, ppm) => {
      const { amount, commission, shares, full, settledPpm } = sc
      const books = new Books()
      let captured = 0
      let refunded = 0
      let commissionRefunded = 0
      const credited = new Map(shares.map((o) => [ownerKey(o), 0]))
      const refund = (r: number) => {
        const c = refundStepCommission({
          amount,
          commission,
          captured,
          previousRefunded: refunded,
          previousCommissionRefunded: commissionRefunded,
          refundAmount: r,
        })
        assert.ok(c >= 0 && c <= r, `a refund's commission ${c} lies in 0..${r}`)
        books.apply(
          refundLegs(
            {
              amount: r,
              commissionRefund: c,
              previousRefundedMinor: refunded,
              previousCommissionRefundedMinor: commissionRefunded,
              paymentAmount: amount,
              paymentCommission: commission,
              shares,
              capturedMinor: captured,
            },
            books.reserveOf,
          ),
        )
        refunded += r
        commissionRefunded += c
        assert.equal(commissionRefunded, capturedCommission(amount, commission, refunded))
        for (const o of shares) {
          const returned = (credited.get(ownerKey(o)) ?? 0) - books.heldBy(o)
          // Up to the Alabama kuruş in between (docs/payments.md).
          assert.ok(returned >= -1 && returned <= (credited.get(ownerKey(o)) ?? 0) + 1, o.ownerId)
        }
      }
      for (const part of captureSteps(amount, cuts)) {
        const before = new Map(shares.map((o) => [ownerKey(o), books.reserveOf(o)]))
        books.apply(
          captureStepLegs({
            amount,
            commission,
            shares,
            previousCapturedMinor: captured,
            captureAmount: part,
          }),
        )
        captured += part
        for (const o of shares) {
          const k = ownerKey(o)
          credited.set(k, (credited.get(k) ?? 0) + books.reserveOf(o) - (before.get(k) ?? 0))
          const settled = mulDivHalfUp(Math.max(0, books.reserveOf(o)), settledPpm, 1_000_000)
          if (settled > 0) books.apply(settlementLegs(o, settled))
        }
        // A refund of part of what is refundable now, before the next capture.
        const r = mulDivHalfUp(captured - refunded, ppm, 1_000_000)
        if (r > 0) refund(r)
      }
      if (full && captured > refunded) refund(captured - refunded)
      if (full) {
        assert.equal(commissionRefunded, capturedCommission(amount, commission, captured))
        for (const o of shares) assert.equal(books.heldBy(o), 0, `${o.ownerId} returned exactly`)
        assert.equal(books.of(PLATFORM, 'buyer_pending'), 0)
        assert.equal(books.of(PLATFORM, 'platform_commission'), 0)
      }
      // A chargeback of everything captured: owners bear their gross share of the capture.
      const legs = chargebackLegs(
        {
          amount: captured,
          previousChargedBackMinor: 0,
          paymentAmount: amount,
          shares,
          capturedMinor: captured,
        },
        () => 0,
      )
      assertBalancedLegs(legs)
      assert.throws(() =>
        chargebackLegs(
          {
            amount: captured + 1,
            previousChargedBackMinor: 0,
            paymentAmount: amount,
            shares,
            capturedMinor: captured,
          },
          () => 0,
        ),
      )
    }),
    { numRuns: 1000 },
  )
})

test('invalid inputs are refused, not posted', () => {
  const shares: Share[] = [
    { ownerType: 'merchant', ownerId: 'mrc_p', grossMinor: 600 },
    { ownerType: 'submerchant', ownerId: 'sub_a', grossMinor: 400 },
  ]
  assert.throws(() => captureLegs(1000, 1001, shares), /commission/)
  assert.throws(() => captureLegs(1000, -1, shares), /commission/)
  assert.throws(() => captureLegs(999, 10, shares), /shares sum/)
  assert.throws(() => captureLegs(1000, 10.5, shares), /safe integer/)
  assert.throws(
    () =>
      captureLegs(1000, 10, [
        ...shares,
        { ownerType: 'submerchant', ownerId: 'sub_a', grossMinor: 0 },
      ]),
    /twice/,
  )
  assert.throws(() => commissionRefundFor(1000, 30, 900, 101, 27), /exceed/)
  const step = { amount: 1000, commission: 30, shares, previousCapturedMinor: 600 }
  assert.throws(() => captureStepLegs({ ...step, captureAmount: 401 }), /exceed/)
  assert.throws(() => captureStepLegs({ ...step, captureAmount: 0 }), /positive/)
  assert.throws(() => capturedCommission(1000, 30, 1001), /captured/)
  const refund = {
    amount: 100,
    commissionRefund: 3,
    previousRefundedMinor: 0,
    previousCommissionRefundedMinor: 0,
    paymentAmount: 1000,
    paymentCommission: 30,
    shares,
  }
  assert.throws(() => refundLegs({ ...refund, commissionRefund: 31 }, () => 0), /commission/)
  assert.throws(() => refundLegs({ ...refund, amount: 0 }, () => 0), /positive/)
  assert.throws(() => refundLegs({ ...refund, previousRefundedMinor: 901 }, () => 0), /exceed/)
  assert.throws(
    () =>
      chargebackLegs(
        { amount: 1, previousChargedBackMinor: 1000, paymentAmount: 1000, shares },
        () => 0,
      ),
    /exceed/,
  )
})
