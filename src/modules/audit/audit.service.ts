import type { Db } from '../../database.ts'
import { eventTypeCounts } from '../events/index.ts'
import {
  allPaymentsLedgerTotals,
  checkLedger,
  paymentLedgerTotals,
  type PaymentLedgerTotals,
} from '../ledger/index.ts'
import { auditPaymentsPage } from '../payments/index.ts'

// The books' invariants across modules, for `kurus check-ledger` and the reliability suite:
// the ledger's own check (every entry balanced, debits = credits overall, no orphan or
// inconsistent leg), then per payment that its status, its refund records, its ledger
// entries and its outbox events tell the same story. Read-only; it pages through payments
// in id order, three queries per page, so it also runs on a large database.

const PAGE = 500
const PROBLEMS_MAX = 200

export interface AuditReport {
  ok: boolean
  problems: string[]
  payments: number
  refunds: number
}

type PageItem = Awaited<ReturnType<typeof auditPaymentsPage>>[number]

const ZERO: PaymentLedgerTotals = {
  captureEntries: 0,
  refundEntries: 0,
  chargebackEntries: 0,
  otherEntries: 0,
  capturedMinor: 0,
  commissionMinor: 0,
  refundedMinor: 0,
  commissionRefundedMinor: 0,
  chargedBackMinor: 0,
}

function sum(values: readonly number[]): number {
  return values.reduce((a, b) => a + b, 0)
}

function addTotals(a: PaymentLedgerTotals, b: PaymentLedgerTotals): PaymentLedgerTotals {
  const out = { ...a }
  for (const k of Object.keys(out) as (keyof PaymentLedgerTotals)[]) out[k] += b[k]
  return out
}

/** Everything that must hold for one payment; returns the broken rules. */
export function paymentProblems(
  item: PageItem,
  ledger: PaymentLedgerTotals,
  events: (resourceId: string, type: string) => number,
): string[] {
  const { payment: p, refunds } = item
  const problems: string[] = []
  const fail = (what: string) => problems.push(`payment ${p.id} (${p.status}): ${what}`)
  const expect = (what: string, actual: number, expected: number) => {
    if (actual !== expected) fail(`${what} is ${actual}, expected ${expected}`)
  }
  const captured = p.status === 'captured' || p.status === 'refunded'
  // Captured money can be refunded (or charged back) while more may still be captured.
  const holdsMoney = captured || p.status === 'partially_captured'
  const completedCaptures = item.captures.filter((c) => c.status === 'completed')
  const capturedMinor = sum(completedCaptures.map((c) => c.amount))

  // Captures: each completed capture has its ledger entry and its payment.captured event,
  // they add up to capturedAmount, and their commissions to the commission on it.
  if (captured || p.status === 'partially_captured') {
    if (p.capturedAmount <= 0 || p.capturedAmount > p.amount)
      fail('capturedAmount outside 1..amount')
    if (p.status === 'partially_captured' && p.capturedAmount === p.amount) {
      fail('partially_captured with nothing left to capture')
    }
  } else {
    expect('capturedAmount', p.capturedAmount, 0)
  }
  expect('completed captures', capturedMinor, p.capturedAmount)
  expect(
    'capture commissions',
    sum(completedCaptures.map((c) => c.commission)),
    p.capturedAmount > 0 ? p.commission : 0,
  )
  if (item.captures.filter((c) => c.status === 'pending').length > 1) fail('two pending captures')
  expect('capture entries', ledger.captureEntries, completedCaptures.length)
  expect('buyer_pending captured', ledger.capturedMinor, p.capturedAmount)
  expect('commission credited', ledger.commissionMinor, p.capturedAmount > 0 ? p.commission : 0)
  expect('entries of other kinds', ledger.otherEntries, 0)
  if (!holdsMoney && (ledger.refundEntries > 0 || ledger.chargebackEntries > 0)) {
    fail('refund or chargeback entries on a payment that is not captured')
  }

  // Refund records, the payment's totals and the ledger agree.
  const completed = refunds.filter((r) => r.status === 'completed')
  const pending = refunds.filter((r) => r.status === 'pending')
  const completedMinor = sum(completed.map((r) => r.amount))
  const pendingMinor = sum(pending.map((r) => r.amount))
  if (refunds.length > 0 && !holdsMoney)
    fail(`${refunds.length} refund(s) of an uncaptured payment`)
  expect('refundCompletedAmount', p.refundCompletedAmount, completedMinor)
  expect('ledger refunds', ledger.refundedMinor, completedMinor)
  expect('refund entries', ledger.refundEntries, completed.length)
  expect('refundAmount (reserved)', p.refundAmount, completedMinor + pendingMinor)
  const commissionBack = sum(completed.map((r) => r.commissionRefund ?? 0))
  expect('commissionRefunded', p.commissionRefunded, commissionBack)
  expect('ledger commission refunded', ledger.commissionRefundedMinor, commissionBack)
  expect('chargebackOpenAmount vs ledger', p.chargebackOpenAmount, ledger.chargedBackMinor)
  if (ledger.refundedMinor + ledger.chargedBackMinor > ledger.capturedMinor) {
    fail(
      `refunds ${ledger.refundedMinor} + chargebacks ${ledger.chargedBackMinor} exceed the captured ${ledger.capturedMinor}`,
    )
  }
  if (p.refundAmount + p.chargebackOpenAmount > p.capturedAmount) {
    fail(`reserved refunds + open chargebacks exceed the captured ${p.capturedAmount}`)
  }
  if ((p.status === 'refunded') !== (captured && completedMinor === p.capturedAmount)) {
    fail(`status does not match completed refunds ${completedMinor} of ${p.capturedAmount}`)
  }
  // refundableAmount is what the buyer_pending books still hold for the payment, less the
  // refunds still in flight.
  const refundable =
    p.status === 'captured' || p.status === 'partially_captured'
      ? Math.max(
          0,
          ledger.capturedMinor - ledger.refundedMinor - ledger.chargedBackMinor - pendingMinor,
        )
      : 0
  expect('refundableAmount vs ledger', p.refundableAmount, refundable)

  // The outbox: each committed state change has exactly its event.
  const authorizedFirst =
    !item.captureRequested &&
    ['authorized', 'partially_captured', 'captured', 'voided', 'refunded'].includes(p.status)
  // The rest of an authorization is released by a final capture or else by a void (or the
  // expiry), which says so with payment.remainder_released.
  const releasedByVoid =
    captured && p.capturedAmount < p.amount && !completedCaptures.some((c) => c.final)
  expect('payment.captured events', events(p.id, 'payment.captured'), completedCaptures.length)
  expect(
    'payment.remainder_released events',
    events(p.id, 'payment.remainder_released'),
    releasedByVoid ? 1 : 0,
  )
  expect('payment.authorized events', events(p.id, 'payment.authorized'), authorizedFirst ? 1 : 0)
  expect('payment.failed events', events(p.id, 'payment.failed'), p.status === 'failed' ? 1 : 0)
  expect('payment.voided events', events(p.id, 'payment.voided'), p.status === 'voided' ? 1 : 0)
  expect(
    'payment.refunded events',
    events(p.id, 'payment.refunded'),
    p.status === 'refunded' ? 1 : 0,
  )
  for (const r of refunds) {
    const of = (type: string) => events(r.id, type)
    if (of('refund.created') !== 1)
      fail(`refund ${r.id} has ${of('refund.created')} refund.created`)
    const done = r.status === 'completed' ? 1 : 0
    if (of('refund.completed') !== done) fail(`refund ${r.id} (${r.status}): refund.completed`)
    const failed = r.status === 'failed' ? 1 : 0
    if (of('refund.failed') !== failed) fail(`refund ${r.id} (${r.status}): refund.failed`)
  }
  return problems
}

/**
 * The whole check: the ledger's own invariants, every payment's, and a cross-check that the
 * ledger holds no payment entries beyond those of the payments that exist.
 */
export async function auditBooks(db: Db): Promise<AuditReport> {
  const ledger = await checkLedger(db)
  const problems = ledger.problems.map((p) => `ledger: ${p}`)
  const report = (p: string) => {
    if (problems.length < PROBLEMS_MAX) problems.push(p)
  }
  let seen = ZERO
  let payments = 0
  let refunds = 0
  for (let after = ''; ;) {
    const page = await auditPaymentsPage({ db }, after, PAGE)
    if (page.length === 0) break
    const ids = page.map((i) => i.payment.id)
    const totals = await paymentLedgerTotals(db, ids)
    const refundIds = page.flatMap((i) => i.refunds.map((r) => r.id))
    const counts = await eventTypeCounts(db, [...ids, ...refundIds])
    const events = (id: string, type: string) => counts.get(id)?.[type] ?? 0
    for (const item of page) {
      const t = totals.get(item.payment.id) ?? ZERO
      seen = addTotals(seen, t)
      for (const p of paymentProblems(item, t, events)) report(p)
    }
    payments += page.length
    refunds += refundIds.length
    after = page.at(-1)?.payment.id ?? after
  }
  const all = await allPaymentsLedgerTotals(db)
  for (const k of Object.keys(all) as (keyof PaymentLedgerTotals)[]) {
    if (all[k] !== seen[k]) {
      report(
        `ledger: ${k} over all payment entries is ${all[k]}, over existing payments ${seen[k]}`,
      )
    }
  }
  return { ok: problems.length === 0, problems, payments, refunds }
}
