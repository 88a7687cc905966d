import { createHash } from 'node:crypto'
import type { Db } from '../../database.ts'
import { assert } from '../../platform/assert.ts'
import { apportion } from '../../platform/money.ts'
import * as repo from './balance.repository.ts'
import type { MovementRow, OwnerRef } from './balance.repository.ts'

// Balance transactions: the owner's own view of the ledger (docs/reports.md). One balance
// transaction per (journal entry, owner) whose net change of the owner's reserve + available
// balance is not zero, so the sum of `net` over all of them is reserve + available. Nothing
// is stored: everything here is derived from the legs on each read.

export type { OwnerRef }

export type BalanceTransactionType =
  | 'charge'
  | 'refund'
  | 'chargeback'
  | 'chargeback_reversal'
  | 'payout'
  | 'payout_failure'
  | 'adjustment'

/** Entry kinds with a type of their own; any other kind with a net change is an `adjustment`. */
const KIND_TYPES: Readonly<Record<string, BalanceTransactionType>> = {
  capture: 'charge',
  refund: 'refund',
  chargeback: 'chargeback',
  chargeback_reversal: 'chargeback_reversal',
  payout_created: 'payout',
  payout_failed: 'payout_failure',
}

export const BALANCE_TRANSACTION_TYPES: readonly BalanceTransactionType[] = [
  'charge',
  'refund',
  'chargeback',
  'chargeback_reversal',
  'payout',
  'payout_failure',
  'adjustment',
]

export function typeOfKind(kind: string): BalanceTransactionType {
  return KIND_TYPES[kind] ?? 'adjustment'
}

function kindsOf(type: BalanceTransactionType): { kinds?: string[]; otherThan?: string[] } {
  if (type === 'adjustment') return { otherThan: Object.keys(KIND_TYPES) }
  return { kinds: Object.keys(KIND_TYPES).filter((k) => KIND_TYPES[k] === type) }
}

export interface BalanceTransaction {
  id: string
  /** The journal entry it is derived from. */
  entryId: string
  /** Keyset position: createdAt to the microsecond, and the entry id. */
  position: { createdKey: string; entryId: string }
  type: BalanceTransactionType
  /** Gross movement: net + fee. */
  amount: number
  /** The owner's part of the platform commission moved by the entry (negative when returned). */
  fee: number
  /** The change of the owner's reserve + available balance. */
  net: number
  status: 'pending' | 'available'
  availableOn: Date
  /** The payment, refund, chargeback or payout that moved the balance. */
  sourceId: string
  payoutId: string | null
  createdAt: Date
}

export interface BalanceOwner extends OwnerRef {
  /** The owner's settlement delay, for `availableOn` of credits not settled yet. */
  settlementDelaySeconds: number
}

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz'

/**
 * `btx_` + 24 base32 characters of SHA-256(entry id, owner): stable across reads, unique per
 * (entry, owner), and opaque like every other id.
 */
export function balanceTransactionId(entryId: string, owner: OwnerRef): string {
  const digest = createHash('sha256')
    .update(`${entryId}:${owner.ownerType}:${owner.ownerId}`)
    .digest()
  let bits = 0
  let value = 0
  let out = ''
  for (const byte of digest.subarray(0, 15)) {
    value = (value << 8) | byte
    bits += 8
    while (bits >= 5) {
      out += ALPHABET[(value >>> (bits - 5)) & 31] ?? ''
      bits -= 5
    }
    value &= (1 << bits) - 1
  }
  return `btx_${out}`
}

/** `capture:<paymentId>` → paymentId; `payout_created:<payoutId>` → payoutId. */
function sourceOf(reference: string): string {
  const parts = reference.split(':')
  return parts[1] ?? reference
}

function payoutOf(kind: string, reference: string): string | null {
  return kind === 'payout_created' || kind === 'payout_failed' ? sourceOf(reference) : null
}

/**
 * The owner's fee in each entry: the entry's commission movement apportioned over its owners
 * by the size of their net movements (largest remainder). With one owner (no splits) that is
 * the entry's commission exactly.
 */
function feesFor(
  owner: OwnerRef,
  breakdown: Awaited<ReturnType<typeof repo.findEntryBreakdown>>,
): Map<string, number> {
  const byEntry = new Map<string, { commission: number; owners: Map<string, number> }>()
  for (const row of breakdown) {
    const e = byEntry.get(row.entry_id) ?? { commission: 0, owners: new Map<string, number>() }
    byEntry.set(row.entry_id, e)
    const net = row.net
    if (row.account_type === 'platform_commission') e.commission += net
    else {
      const key = `${row.owner_type}:${row.owner_id}`
      e.owners.set(key, (e.owners.get(key) ?? 0) + net)
    }
  }
  const me = `${owner.ownerType}:${owner.ownerId}`
  const fees = new Map<string, number>()
  for (const [entryId, e] of byEntry) {
    const owners = [...e.owners.entries()].filter(([, net]) => net !== 0).sort()
    const index = owners.findIndex(([key]) => key === me)
    if (e.commission === 0 || index < 0) {
      fees.set(entryId, 0)
      continue
    }
    const parts = apportion(
      Math.abs(e.commission),
      owners.map(([, net]) => Math.abs(net)),
    )
    fees.set(entryId, Math.sign(e.commission) * (parts[index] ?? 0))
  }
  return fees
}

/** Movement rows → balance transactions: fees, status and availability in two queries. */
async function toBalanceTransactions(
  db: Db,
  owner: BalanceOwner,
  rows: readonly MovementRow[],
): Promise<BalanceTransaction[]> {
  const ids = rows.map((r) => r.entry_id)
  const [breakdown, credits] = await Promise.all([
    repo.findEntryBreakdown(db, owner.merchantId, ids),
    repo.findReserveCreditsOf(db, owner, ids),
  ])
  const fees = feesFor(owner, breakdown)
  const creditOf = new Map(credits.map((c) => [c.entry_id, c]))
  const delayMs = owner.settlementDelaySeconds * 1000
  return rows.map((r) => {
    const net = r.net
    const fee = fees.get(r.entry_id) ?? 0
    const createdAt = new Date(r.created_at)
    const credit = creditOf.get(r.entry_id)
    const settledAt = credit?.settled_at ? new Date(credit.settled_at) : null
    const pending = credit !== undefined && settledAt === null
    const availableOn =
      credit === undefined
        ? createdAt
        : (settledAt ?? new Date(new Date(credit.credited_at).getTime() + delayMs))
    return {
      id: balanceTransactionId(r.entry_id, owner),
      entryId: r.entry_id,
      position: { createdKey: r.created_key, entryId: r.entry_id },
      type: typeOfKind(r.kind),
      amount: net + fee,
      fee,
      net,
      status: pending ? ('pending' as const) : ('available' as const),
      availableOn,
      sourceId: sourceOf(r.reference),
      payoutId: payoutOf(r.kind, r.reference),
      createdAt,
    }
  })
}

export interface BalanceTransactionQuery {
  from?: Date
  to?: Date
  type?: BalanceTransactionType
  after?: { createdKey: string; entryId: string }
  order?: 'asc' | 'desc'
  limit: number
}

/** One page of the owner's balance transactions, newest first unless `order: 'asc'`. */
export async function listBalanceTransactions(
  db: Db,
  owner: BalanceOwner,
  q: BalanceTransactionQuery,
): Promise<BalanceTransaction[]> {
  const rows = await repo.findOwnerMovements(db, owner, {
    ...(q.from !== undefined ? { from: q.from } : {}),
    ...(q.to !== undefined ? { to: q.to } : {}),
    ...(q.type !== undefined ? kindsOf(q.type) : {}),
    ...(q.after !== undefined ? { after: q.after } : {}),
    order: q.order ?? 'desc',
    limit: q.limit,
  })
  return toBalanceTransactions(db, owner, rows)
}

/** Every balance transaction of [from, to) in time order, in batches (bounded memory). */
export async function* balanceTransactionBatches(
  db: Db,
  owner: BalanceOwner,
  period: { from?: Date; to?: Date },
  batch = 1000,
): AsyncGenerator<BalanceTransaction[]> {
  let after: BalanceTransactionQuery['after']
  for (;;) {
    const page = await listBalanceTransactions(db, owner, {
      ...period,
      ...(after !== undefined ? { after } : {}),
      order: 'asc',
      limit: batch,
    })
    if (page.length > 0) yield page
    const last = page.at(-1)
    if (page.length < batch || !last) return
    after = last.position
  }
}

/** Reserve + available before `at` (every balance transaction created before it). */
export function balanceBefore(db: Db, owner: OwnerRef, at: Date): Promise<number> {
  return repo.sumOwnerNetBefore(db, owner, at)
}

export interface ActivityLine {
  type: BalanceTransactionType
  count: number
  amount: number
  fee: number
  net: number
}

export interface BalanceSummary {
  opening: number
  activity: ActivityLine[]
  closing: number
}

/**
 * Opening balance (before `from`), activity of [from, to) by type, closing balance. The
 * opening is one index range sum; the activity streams the period's balance transactions in
 * batches of 1000, so memory does not grow with the period. closing = opening + Σ net.
 */
export async function balanceSummary(
  db: Db,
  owner: BalanceOwner,
  period: { from: Date; to: Date },
  onBatch?: (count: number) => Promise<void>,
): Promise<BalanceSummary> {
  const opening = await balanceBefore(db, owner, period.from)
  const lines = new Map<BalanceTransactionType, ActivityLine>(
    BALANCE_TRANSACTION_TYPES.map((type) => [type, { type, count: 0, amount: 0, fee: 0, net: 0 }]),
  )
  let total = 0
  for await (const batch of balanceTransactionBatches(db, owner, period)) {
    for (const t of batch) {
      const line = lines.get(t.type)
      assert(line, `balance summary: unknown type ${t.type}`)
      line.count++
      line.amount += t.amount
      line.fee += t.fee
      line.net += t.net
      total += t.net
    }
    if (onBatch) await onBatch(batch.length)
  }
  return { opening, activity: [...lines.values()], closing: opening + total }
}

export interface PayoutHeader {
  payoutId: string
  legId: number
  amount: number
  createdAt: Date
  status: 'pending' | 'paid' | 'failed'
  settledAt: Date | null
}

async function payoutHeaders(
  db: Db,
  owner: OwnerRef,
  legs: Awaited<ReturnType<typeof repo.findOwnerPayoutLegs>>,
): Promise<PayoutHeader[]> {
  const ids = legs.map((l) => sourceOf(l.reference))
  const outcomes = await repo.findEntriesByReferenceList(
    db,
    owner.merchantId,
    ids.flatMap((id) => [`payout_paid:${id}`, `payout_failed:${id}`]),
  )
  const outcomeOf = new Map(outcomes.map((o) => [sourceOf(o.reference), o]))
  return legs.map((l) => {
    const payoutId = sourceOf(l.reference)
    const outcome = outcomeOf.get(payoutId)
    return {
      payoutId,
      legId: l.leg_id,
      amount: l.amount,
      createdAt: l.created_at,
      status: outcome ? (outcome.kind === 'payout_paid' ? 'paid' : 'failed') : 'pending',
      settledAt: outcome ? new Date(outcome.created_at) : null,
    }
  })
}

/** The owner's payouts created in [from, to), oldest first, in batches. */
export async function* payoutBatches(
  db: Db,
  owner: OwnerRef,
  period: { from?: Date; to?: Date },
  batch = 100,
): AsyncGenerator<PayoutHeader[]> {
  let afterLegId: number | undefined
  for (;;) {
    const legs = await repo.findOwnerPayoutLegs(db, owner, {
      ...period,
      ...(afterLegId !== undefined ? { afterLegId } : {}),
      limit: batch,
    })
    if (legs.length > 0) yield await payoutHeaders(db, owner, legs)
    const last = legs.at(-1)
    if (legs.length < batch || !last) return
    afterLegId = last.leg_id
  }
}

/** One payout of the owner, or undefined (another owner's payout included). */
export async function findPayout(
  db: Db,
  owner: OwnerRef,
  payoutId: string,
): Promise<PayoutHeader | undefined> {
  const legs = await repo.findOwnerPayoutLegs(db, owner, {
    references: [`payout_created:${payoutId}`],
    limit: 1,
  })
  return (await payoutHeaders(db, owner, legs))[0]
}

export interface PayoutAllocation {
  transaction: BalanceTransaction
  /** The part of the transaction's money this payout carried. */
  settled: number
  /** Keyset position in the payout's allocation (the first available leg it drew from). */
  position: number
}

/**
 * The balance transactions one payout settled, with the part of each it carried (first in,
 * first out over the owner's available balance; see repo.findPayoutAllocation). The parts sum
 * to the payout's amount. One page after `afterPosition`.
 */
export async function payoutAllocationPage(
  db: Db,
  owner: BalanceOwner,
  payout: PayoutHeader,
  page: { afterPosition?: number; limit: number },
): Promise<PayoutAllocation[]> {
  const rows = await repo.findPayoutAllocation(db, owner, payout.legId, {
    ...(page.afterPosition !== undefined ? { afterLegId: page.afterPosition } : {}),
    limit: page.limit,
  })
  const movements = await repo.findOwnerMovementsOf(
    db,
    owner,
    rows.map((r) => r.source_entry_id),
  )
  const txs = new Map(
    (await toBalanceTransactions(db, owner, movements)).map((t) => [t.entryId, t]),
  )
  return rows.map((r) => {
    const transaction = txs.get(r.source_entry_id)
    assert(transaction, `payout ${payout.payoutId}: entry ${r.source_entry_id} has no movement`)
    return {
      transaction: { ...transaction, payoutId: transaction.payoutId ?? payout.payoutId },
      settled: r.portion,
      position: r.first_leg_id,
    }
  })
}

/**
 * The balance transactions a settlement payout settled: the owner's available movements
 * since the previous settlement payout (`previous`, or the start of the books), with the
 * part of each it carried (repo.findPayoutWindow); they sum to the payout's amount. One page.
 */
export async function payoutWindowPage(
  db: Db,
  owner: BalanceOwner,
  payout: PayoutHeader,
  previous: PayoutHeader | undefined,
  page: { afterPosition?: number; limit: number },
): Promise<PayoutAllocation[]> {
  const rows = await repo.findPayoutWindow(db, owner, previous?.legId ?? 0, payout.legId, {
    ...(page.afterPosition !== undefined ? { afterPosition: page.afterPosition } : {}),
    limit: page.limit,
  })
  const movements = await repo.findOwnerMovementsOf(
    db,
    owner,
    rows.map((r) => r.source_entry_id),
  )
  const txs = new Map(
    (await toBalanceTransactions(db, owner, movements)).map((t) => [t.entryId, t]),
  )
  return rows.map((r) => {
    const transaction = txs.get(r.source_entry_id)
    assert(transaction, `payout ${payout.payoutId}: entry ${r.source_entry_id} has no movement`)
    return { transaction, settled: r.portion, position: r.first_leg_id }
  })
}

/** Every allocation row of one payout, in batches. */
export async function* payoutAllocationBatches(
  db: Db,
  owner: BalanceOwner,
  payout: PayoutHeader,
  batch = 1000,
): AsyncGenerator<PayoutAllocation[]> {
  let afterPosition: number | undefined
  for (;;) {
    const page = await payoutAllocationPage(db, owner, payout, {
      ...(afterPosition !== undefined ? { afterPosition } : {}),
      limit: batch,
    })
    if (page.length > 0) yield page
    const last = page.at(-1)
    if (page.length < batch || !last) return
    afterPosition = last.position
  }
}
