// The ledger's arithmetic: pure functions from a business event to the legs it posts. No I/O
// here, so the money invariants are property-tested without a database (test/ledger/).
import { assert } from '../../platform/assert.ts'
import { apportion, assertMinor, mulDivHalfUp } from '../../platform/money.ts'
import type { AccountType, Direction, OwnerType } from './ledger.table.ts'

export type { AccountType, Direction, OwnerType }

/** The owner id of the platform's own (tenant-less) accounts. */
export const PLATFORM_OWNER_ID = 'platform'

/** A gross share of a payment. The parent merchant comes first when it has one (it takes ties). */
export interface Share {
  ownerType: 'merchant' | 'submerchant'
  ownerId: string
  grossMinor: number
}

export interface Owner {
  ownerType: 'merchant' | 'submerchant'
  ownerId: string
}

export interface OwnerApportionment {
  ownerType: 'merchant' | 'submerchant'
  ownerId: string
  grossMinor: number
  commissionMinor: number
  netMinor: number
}

/** One leg before it is written: the account is named by its owner and type. */
export interface LegSpec {
  ownerType: OwnerType
  ownerId: string
  accountType: AccountType
  direction: Direction
  amount: number
}

export function accountIdFor(ownerType: OwnerType, ownerId: string, accountType: AccountType) {
  return `${ownerType}:${ownerId}:${accountType}`
}

export function ownerKey(owner: { ownerType: OwnerType; ownerId: string }): string {
  return `${owner.ownerType}:${owner.ownerId}`
}

function platformLeg(accountType: AccountType, direction: Direction, amount: number): LegSpec {
  return { ownerType: 'platform', ownerId: PLATFORM_OWNER_ID, accountType, direction, amount }
}

function ownerLeg(
  owner: Owner,
  accountType: AccountType,
  direction: Direction,
  amount: number,
): LegSpec {
  return { ownerType: owner.ownerType, ownerId: owner.ownerId, accountType, direction, amount }
}

/** Shares are non-negative integers over distinct owners that sum to the payment amount. */
export function assertShares(amount: number, shares: readonly Share[]): void {
  assertMinor(amount)
  assert(amount > 0, `ledger: amount must be positive, got ${amount}`)
  assert(shares.length > 0, 'ledger: a payment needs at least one share')
  const seen = new Set<string>()
  let sum = 0
  for (const share of shares) {
    assertMinor(share.grossMinor, 'grossMinor')
    assert(share.grossMinor >= 0, `ledger: negative share for ${share.ownerId}`)
    const key = ownerKey(share)
    assert(!seen.has(key), `ledger: owner ${key} appears twice in the shares`)
    seen.add(key)
    sum += share.grossMinor
  }
  assert(sum === amount, `ledger: shares sum to ${sum}, not the amount ${amount}`)
}

/** Like apportion(), but a zero total (or nothing to weigh) is all zeros. */
function apportionOrZero(total: number, weights: readonly number[]): number[] {
  if (total === 0) return weights.map(() => 0)
  return apportion(total, weights)
}

/**
 * The difference between apportioning the running total after and before this event: what
 * each owner takes of this event when earlier events already took their part. The running
 * totals never exceed an owner's exact share, because apportion() of the full weight sum
 * gives back the weights themselves. A step can be −1 for an owner (largest remainder is not
 * monotone in the total: the Alabama paradox); callers post that as the opposite leg.
 */
export function cumulativeDelta(
  previous: number,
  current: number,
  weights: readonly number[],
): number[] {
  assertMinor(previous, 'previous')
  assertMinor(current, 'current')
  assert(previous >= 0 && current >= 0, 'ledger: cumulative amounts are non-negative')
  const before = apportionOrZero(previous, weights)
  const after = apportionOrZero(previous + current, weights)
  return after.map((a, i) => a - (before[i] ?? 0))
}

/**
 * Commission C over the owners by their gross shares (largest remainder, ties to index 0,
 * the parent), and each owner's net = gross − its commission part. Net is never negative:
 * an owner's commission part is at most ceil(C·g/A) <= g because C <= A.
 */
export function apportionCapture(
  amount: number,
  commission: number,
  shares: readonly Share[],
): OwnerApportionment[] {
  assertShares(amount, shares)
  assertMinor(commission, 'commission')
  assert(commission >= 0 && commission <= amount, `ledger: commission ${commission} outside 0..A`)
  const commissions = apportionOrZero(
    commission,
    shares.map((s) => s.grossMinor),
  )
  return shares.map((share, i) => {
    const commissionMinor = commissions[i] ?? 0
    return {
      ownerType: share.ownerType,
      ownerId: share.ownerId,
      grossMinor: share.grossMinor,
      commissionMinor,
      netMinor: share.grossMinor - commissionMinor,
    }
  })
}

/**
 * Pro-rata commission refund, cumulative: halfUp(C × (prev + R) / A) − what was already
 * refunded, so the last kuruş of a full refund returns exactly the whole commission. Never
 * negative, never more than R.
 */
export function commissionRefundFor(
  paymentAmount: number,
  paymentCommission: number,
  previousRefunded: number,
  refundAmount: number,
  previousCommissionRefunded: number,
): number {
  for (const [name, value] of Object.entries({
    paymentAmount,
    paymentCommission,
    previousRefunded,
    refundAmount,
    previousCommissionRefunded,
  })) {
    assertMinor(value, name)
    assert(value >= 0, `ledger: ${name} must not be negative`)
  }
  assert(paymentAmount > 0, 'ledger: paymentAmount must be positive')
  assert(paymentCommission <= paymentAmount, 'ledger: commission exceeds the payment')
  assert(previousRefunded + refundAmount <= paymentAmount, 'ledger: refunds exceed the payment')
  assert(previousCommissionRefunded <= paymentCommission, 'ledger: commission over-refunded')
  const target = mulDivHalfUp(paymentCommission, previousRefunded + refundAmount, paymentAmount)
  return Math.max(0, target - previousCommissionRefunded)
}

/** DEBIT buyer_pending A; CREDIT each owner's reserve its net; CREDIT platform_commission C. */
export function captureLegs(amount: number, commission: number, shares: readonly Share[]) {
  const legs: LegSpec[] = [platformLeg('buyer_pending', 'DEBIT', amount)]
  for (const owner of apportionCapture(amount, commission, shares)) {
    if (owner.netMinor > 0) legs.push(ownerLeg(owner, 'merchant_reserve', 'CREDIT', owner.netMinor))
  }
  if (commission > 0) legs.push(platformLeg('platform_commission', 'CREDIT', commission))
  return legs
}

/**
 * The commission owed once C of an authorization A (one-shot commission K) is captured:
 * halfUp(K × C / A). Captures post the differences of this running total, so any sequence
 * of captures that reaches A charges exactly K, and every capture's part lies in 0..its
 * amount (K <= A makes the exact increments at most the capture, and half-up rounding of
 * two totals less than one kuruş apart differs by at most one).
 */
export function capturedCommission(amount: number, commission: number, captured: number): number {
  assertMinor(amount, 'amount')
  assertMinor(commission, 'commission')
  assertMinor(captured, 'captured')
  assert(amount > 0, 'ledger: amount must be positive')
  assert(commission >= 0 && commission <= amount, `ledger: commission ${commission} outside 0..A`)
  assert(captured >= 0 && captured <= amount, `ledger: captured ${captured} outside 0..A`)
  return captured === amount ? commission : mulDivHalfUp(commission, captured, amount)
}

export interface CaptureStep {
  /** The authorized amount A and its one-shot commission K. */
  amount: number
  commission: number
  shares: readonly Share[]
  /** Captured before this capture. */
  previousCapturedMinor: number
  /** This capture's amount. */
  captureAmount: number
}

/** This capture's commission: K(previous + c) − K(previous). */
export function captureStepCommission(step: CaptureStep): number {
  const { amount, commission, previousCapturedMinor: before, captureAmount } = step
  assertMinor(captureAmount, 'capture amount')
  assert(captureAmount > 0, 'ledger: a capture must be positive')
  assert(before + captureAmount <= amount, 'ledger: captures exceed the authorization')
  return (
    capturedCommission(amount, commission, before + captureAmount) -
    capturedCommission(amount, commission, before)
  )
}

/**
 * One capture of several: DEBIT buyer_pending c; CREDIT platform_commission its commission k
 * (captureStepCommission); each owner's reserve its step of the cumulative net
 * apportionment — after captures totalling C the owners hold apportion(C − K(C), nets), so a
 * full sequence credits each owner exactly its one-shot net. A step can be −1 for an owner
 * (largest remainder is not monotone: the Alabama paradox); that owner's reserve is then
 * debited that kuruş in this entry. A single capture of the whole amount is captureLegs.
 */
export function captureStepLegs(step: CaptureStep): LegSpec[] {
  const { amount, commission, shares, previousCapturedMinor: before, captureAmount } = step
  assertShares(amount, shares)
  if (before === 0 && captureAmount === amount) return captureLegs(amount, commission, shares)
  const k = captureStepCommission(step)
  const nets = apportionCapture(amount, commission, shares).map((o) => o.netMinor)
  const deltas = cumulativeDelta(
    before - capturedCommission(amount, commission, before),
    captureAmount - k,
    nets,
  )
  const legs: LegSpec[] = [platformLeg('buyer_pending', 'DEBIT', captureAmount)]
  shares.forEach((owner, i) => {
    const delta = deltas[i] ?? 0
    if (delta > 0) legs.push(ownerLeg(owner, 'merchant_reserve', 'CREDIT', delta))
    if (delta < 0) legs.push(ownerLeg(owner, 'merchant_reserve', 'DEBIT', -delta))
  })
  if (k > 0) legs.push(platformLeg('platform_commission', 'CREDIT', k))
  return legs
}

/**
 * The legs that take `delta` from each owner: a positive delta is debited from the reserve
 * as far as the reserve balance covers it and from available for the rest (funds already
 * settled; available may go negative, CONTRACT.md allows it for refunds and chargebacks); a
 * negative delta (see cumulativeDelta) is credited back to the reserve.
 */
export function ownerDebitLegs(
  owners: readonly Owner[],
  deltas: readonly number[],
  reserveBalanceOf: (owner: Owner) => number,
): LegSpec[] {
  const legs: LegSpec[] = []
  owners.forEach((owner, i) => {
    const delta = deltas[i] ?? 0
    if (delta < 0) {
      legs.push(ownerLeg(owner, 'merchant_reserve', 'CREDIT', -delta))
      return
    }
    const fromReserve = Math.min(delta, Math.max(0, reserveBalanceOf(owner)))
    if (fromReserve > 0) legs.push(ownerLeg(owner, 'merchant_reserve', 'DEBIT', fromReserve))
    if (delta > fromReserve) {
      legs.push(ownerLeg(owner, 'merchant_available', 'DEBIT', delta - fromReserve))
    }
  })
  return legs
}

export interface RefundInput {
  amount: number
  commissionRefund: number
  previousRefundedMinor: number
  previousCommissionRefundedMinor: number
  paymentAmount: number
  paymentCommission: number
  shares: readonly Share[]
  /** What was captured of paymentAmount (partial captures); the whole amount when omitted. */
  capturedMinor?: number
}

/**
 * The commission a refund returns, cumulative over the payment's refunds exactly as captures
 * charge it: once refunds total G, K(G) = halfUp(K × G / A) has come back (capturedCommission
 * of G), so this refund returns K(G + R) − K(G). It lies in 0..R, and refunds reaching the
 * captured amount C return K(C), exactly what the captures charged — whenever the captures
 * happened, before or between the refunds (a partially captured payment can be refunded).
 * Written against what was returned so far (K(G) by induction), so it is the difference to
 * the running target. For a payment captured in full this is commissionRefundFor(A, K, …).
 */
export function refundStepCommission(r: {
  amount: number
  commission: number
  captured: number
  previousRefunded: number
  previousCommissionRefunded: number
  refundAmount: number
}): number {
  assertMinor(r.refundAmount, 'refund amount')
  assert(r.refundAmount > 0, 'ledger: a refund must be positive')
  assert(
    r.previousRefunded + r.refundAmount <= r.captured,
    'ledger: refunds exceed the captured amount',
  )
  const target = capturedCommission(r.amount, r.commission, r.previousRefunded + r.refundAmount)
  return Math.max(0, target - r.previousCommissionRefunded)
}

/**
 * The owners' part of each refund, R − c, apportioned cumulatively over the owners by their
 * one-shot net shares: after refunds totalling G with commission K(G) returned, owner i has
 * given back apportion(G − K(G), nets)_i — the mirror of the captures, which credit
 * apportion(C − K(C), nets)_i once C is captured. The weights do not depend on how much is
 * captured, so refunds may come between captures, and refunds reaching C return each owner
 * exactly what its captures credited it. For a payment captured in full, at every step no
 * owner has returned more than its net credit (apportion of at most Σ nets over nets); of a
 * payment captured in part, an owner can be a kuruş ahead in between (largest remainder is
 * not monotone), which ownerDebitLegs takes from its available balance.
 */
export function refundOwnerDeltas(input: RefundInput): number[] {
  const { amount, commissionRefund } = input
  const previousNet = input.previousRefundedMinor - input.previousCommissionRefundedMinor
  const thisNet = amount - commissionRefund
  const captured = input.capturedMinor ?? input.paymentAmount
  const nets = apportionCapture(input.paymentAmount, input.paymentCommission, input.shares).map(
    (o) => o.netMinor,
  )
  const capturedK = capturedCommission(input.paymentAmount, input.paymentCommission, captured)
  assertMinor(amount, 'refund amount')
  assertMinor(commissionRefund, 'commissionRefund')
  assert(amount > 0, 'ledger: a refund must be positive')
  assert(input.previousRefundedMinor + amount <= captured, 'ledger: refunds exceed the payment')
  assert(
    commissionRefund >= 0 && input.previousCommissionRefundedMinor + commissionRefund <= capturedK,
    'ledger: commission refunds exceed the commission',
  )
  assert(previousNet >= 0 && thisNet >= 0, 'ledger: commission refunded beyond the refunds')
  assert(
    previousNet + thisNet <= captured - capturedK,
    'ledger: owners would return more than their net credit',
  )
  return cumulativeDelta(previousNet, thisNet, nets)
}

/**
 * DEBIT each owner's reserve (or available) its part of R − c; DEBIT platform_commission c;
 * CREDIT buyer_pending R.
 */
export function refundLegs(
  input: RefundInput,
  reserveBalanceOf: (owner: Owner) => number,
): LegSpec[] {
  const deltas = refundOwnerDeltas(input)
  const legs = ownerDebitLegs(input.shares, deltas, reserveBalanceOf)
  if (input.commissionRefund > 0) {
    legs.push(platformLeg('platform_commission', 'DEBIT', input.commissionRefund))
  }
  legs.push(platformLeg('buyer_pending', 'CREDIT', input.amount))
  return legs
}

export interface ChargebackInput {
  amount: number
  previousChargedBackMinor: number
  paymentAmount: number
  shares: readonly Share[]
  /** What was captured of paymentAmount (partial captures); the whole amount when omitted. */
  capturedMinor?: number
}

/**
 * The owners bear a chargeback B by their gross shares, cumulatively (the platform keeps its
 * commission, as CONTRACT.md's flow table has it); of a partly captured payment, by their
 * gross shares of what was captured.
 */
export function chargebackOwnerDeltas(input: ChargebackInput): number[] {
  assertShares(input.paymentAmount, input.shares)
  const captured = input.capturedMinor ?? input.paymentAmount
  assertMinor(captured, 'captured')
  assert(captured > 0 && captured <= input.paymentAmount, 'ledger: captured outside 1..A')
  assertMinor(input.amount, 'chargeback amount')
  assert(input.amount > 0, 'ledger: a chargeback must be positive')
  assert(
    input.previousChargedBackMinor + input.amount <= captured,
    'ledger: chargebacks exceed the captured amount',
  )
  const gross = input.shares.map((s) => s.grossMinor)
  return cumulativeDelta(
    input.previousChargedBackMinor,
    input.amount,
    captured === input.paymentAmount ? gross : apportion(captured, gross),
  )
}

/** DEBIT each owner's reserve (or available) its part of B; CREDIT buyer_pending B. */
export function chargebackLegs(
  input: ChargebackInput,
  reserveBalanceOf: (owner: Owner) => number,
): LegSpec[] {
  const legs = ownerDebitLegs(input.shares, chargebackOwnerDeltas(input), reserveBalanceOf)
  legs.push(platformLeg('buyer_pending', 'CREDIT', input.amount))
  return legs
}

/** The same accounts and amounts with every direction swapped: undoes an entry exactly. */
export function mirrorLegs(legs: readonly LegSpec[]): LegSpec[] {
  return legs.map((leg) => ({ ...leg, direction: leg.direction === 'DEBIT' ? 'CREDIT' : 'DEBIT' }))
}

/** Reserve → available for one owner. */
export function settlementLegs(owner: Owner, amount: number): LegSpec[] {
  return [
    ownerLeg(owner, 'merchant_reserve', 'DEBIT', amount),
    ownerLeg(owner, 'merchant_available', 'CREDIT', amount),
  ]
}

/** Available → the owner's payout clearing. */
export function payoutCreatedLegs(owner: Owner, amount: number): LegSpec[] {
  return [
    ownerLeg(owner, 'merchant_available', 'DEBIT', amount),
    ownerLeg(owner, 'payout_clearing', 'CREDIT', amount),
  ]
}

/** Payout clearing → the platform's bank (paid) or back to available (failed). */
export function payoutOutcomeLegs(owner: Owner, amount: number, paid: boolean): LegSpec[] {
  return [
    ownerLeg(owner, 'payout_clearing', 'DEBIT', amount),
    paid
      ? platformLeg('bank_settlement', 'CREDIT', amount)
      : ownerLeg(owner, 'merchant_available', 'CREDIT', amount),
  ]
}

/** The write-side half of the pair assertion (the database checks again at COMMIT). */
export function assertBalanced(legs: readonly LegSpec[]): void {
  assert(legs.length >= 2, `ledger: an entry needs at least 2 legs, got ${legs.length}`)
  let debits = 0
  let credits = 0
  for (const leg of legs) {
    assertMinor(leg.amount, 'leg amount')
    assert(leg.amount > 0, `ledger: leg amounts are positive, got ${leg.amount}`)
    if (leg.direction === 'DEBIT') debits += leg.amount
    else credits += leg.amount
  }
  assert(debits === credits, `ledger: unbalanced entry, debits ${debits} ≠ credits ${credits}`)
}
