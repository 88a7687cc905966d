import type { Db, Tx } from '../../database.ts'
import { assert } from '../../platform/assert.ts'
import { newId } from '../../platform/ids.ts'
import { assertMinor } from '../../platform/money.ts'
import { ledgerError } from './ledger.errors.ts'
import {
  accountIdFor,
  assertBalanced,
  assertShares,
  captureStepLegs,
  chargebackLegs,
  mirrorLegs,
  ownerKey,
  payoutCreatedLegs,
  payoutOutcomeLegs,
  refundLegs,
  settlementLegs,
  type LegSpec,
  type Owner,
  type OwnerType,
  type Share,
} from './ledger.postings.ts'
import * as repo from './ledger.repository.ts'
import type { AccountType, Direction, EntryKind, NewLedgerAccount } from './ledger.table.ts'

// The ledger's use cases. Every posting takes the caller's transaction (`tx: Tx`): the legs
// commit with the state change that caused them, or not at all (ARCHITECTURE.md). None of
// them opens a transaction of its own.

export interface LegView {
  accountType: AccountType
  direction: Direction
  amount: number
  currency: 'TRY'
  ownerType: OwnerType
  ownerId: string
}

export interface OwnerBalance {
  ownerType: 'merchant' | 'submerchant'
  ownerId: string
  reserveMinor: number
  availableMinor: number
  payoutPendingMinor: number
}

interface EntryHeader {
  merchantId: string
  kind: EntryKind
  reference: string
  paymentId: string | null
  at: Date
}

function assertTenant(merchantId: string, owner: { ownerType: OwnerType; ownerId: string }) {
  assert(
    owner.ownerType !== 'merchant' || owner.ownerId === merchantId,
    `ledger: merchant ${owner.ownerId} posted under tenant ${merchantId}`,
  )
}

/**
 * True when this reference is already posted (a retry): then the caller does nothing. The
 * existing entry must be the same posting, or two different events share a reference.
 */
async function isPosted(db: Db, header: EntryHeader): Promise<boolean> {
  const existing = await repo.findEntryByReference(db, header.reference)
  if (!existing) return false
  assert(
    existing.merchant_id === header.merchantId &&
      existing.kind === header.kind &&
      existing.payment_id === header.paymentId,
    `ledger: reference ${header.reference} was posted for another event`,
  )
  return true
}

/**
 * Writes one entry and its legs unless the reference is already posted. Returns the new
 * entry's id, or undefined when it was posted before (a retry).
 */
async function writeEntry(
  tx: Tx,
  header: EntryHeader,
  legs: readonly LegSpec[],
  options: { reserveCredits?: boolean } = {},
): Promise<string | undefined> {
  // The first half of the pair assertion; the deferred trigger checks again at COMMIT.
  assertBalanced(legs)
  const accounts = new Map<string, NewLedgerAccount>()
  for (const leg of legs) {
    assertTenant(header.merchantId, leg)
    if (leg.ownerType === 'platform') continue // seeded by the migration
    const id = accountIdFor(leg.ownerType, leg.ownerId, leg.accountType)
    accounts.set(id, {
      id,
      owner_type: leg.ownerType,
      owner_id: leg.ownerId,
      merchant_id: header.merchantId,
      account_type: leg.accountType,
      currency: 'TRY',
      created_at: header.at,
    })
  }
  const entryId = await repo.insertPosting(tx, {
    accounts: [...accounts.values()],
    entry: {
      id: newId('jrn'),
      merchant_id: header.merchantId,
      kind: header.kind,
      reference: header.reference,
      payment_id: header.paymentId,
      created_at: header.at,
    },
    legs: legs.map((leg) => ({
      merchant_id: header.merchantId,
      payment_id: header.paymentId,
      account_id: accountIdFor(leg.ownerType, leg.ownerId, leg.accountType),
      owner_type: leg.ownerType,
      owner_id: leg.ownerId,
      account_type: leg.accountType,
      direction: leg.direction,
      amount: leg.amount,
      currency: 'TRY',
      created_at: header.at,
    })),
    credits: options.reserveCredits ? reserveCredits(header, legs) : [],
  })
  if (entryId === undefined) {
    await isPosted(tx, header) // asserts that the existing entry is this posting
    return undefined
  }
  return entryId
}

/**
 * The entry's credits to owners' merchant_reserve, for the settlement work list
 * (`ledger_reserve_credits`): one row per owner, written with the posting itself.
 */
function reserveCredits(header: EntryHeader, legs: readonly LegSpec[]) {
  const byOwner = new Map<string, { owner: Owner; amount: number }>()
  for (const leg of legs) {
    if (leg.accountType !== 'merchant_reserve' || leg.direction !== 'CREDIT') continue
    if (leg.ownerType === 'platform') continue
    const owner: Owner = { ownerType: leg.ownerType, ownerId: leg.ownerId }
    const current = byOwner.get(ownerKey(owner)) ?? { owner, amount: 0 }
    current.amount += leg.amount
    byOwner.set(ownerKey(owner), current)
  }
  return [...byOwner.values()].map(({ owner, amount }) => ({
    merchant_id: header.merchantId,
    owner_type: owner.ownerType,
    owner_id: owner.ownerId,
    source_reference: header.reference,
    amount,
    credited_at: header.at,
  }))
}

/** Current reserve balances of these owners, read after locking them. */
async function lockedReserveBalances(
  tx: Tx,
  merchantId: string,
  owners: readonly Owner[],
): Promise<(owner: Owner) => number> {
  await repo.lockOwners(tx, owners.map(ownerKey))
  const rows = await repo.sumOwnerBalancesByMerchant(
    tx,
    merchantId,
    owners.map((o) => o.ownerId),
    ['merchant_reserve'],
  )
  const byOwner = new Map(rows.map((r) => [`${r.owner_type}:${r.owner_id}`, r.balance]))
  return (owner) => byOwner.get(ownerKey(owner)) ?? 0
}

/**
 * A capture: DEBIT buyer_pending its amount; CREDIT each owner's merchant_reserve its net
 * share; CREDIT platform_commission its commission. One capture of the whole authorization
 * is entry `capture:<paymentId>`; each of several (partial) captures is
 * `capture:<captureId>`, posting its step of the cumulative apportionment
 * (`captureStepLegs`). Idempotent on the reference: a second call is a no-op. Takes no lock:
 * a capture (nearly) only credits, so concurrent captures never wait on each other.
 */
export async function postCapture(
  tx: Tx,
  p: {
    merchantId: string
    paymentId: string
    /** The authorized amount and its one-shot commission. */
    amount: number
    commission: number
    shares: Share[]
    at: Date
    /** Partial captures: the capture's id, what was captured before it, and its amount. */
    captureId?: string
    previousCapturedMinor?: number
    captureAmount?: number
  },
): Promise<void> {
  const previousCapturedMinor = p.previousCapturedMinor ?? 0
  const captureAmount = p.captureAmount ?? p.amount - previousCapturedMinor
  const whole = previousCapturedMinor === 0 && captureAmount === p.amount
  assert(whole || p.captureId, 'ledger: a partial capture needs its capture id')
  const legs = captureStepLegs({
    amount: p.amount,
    commission: p.commission,
    shares: p.shares,
    previousCapturedMinor,
    captureAmount,
  })
  const header: EntryHeader = {
    merchantId: p.merchantId,
    kind: 'capture',
    reference: whole ? `capture:${p.paymentId}` : `capture:${p.captureId ?? ''}`,
    paymentId: p.paymentId,
    at: p.at,
  }
  await writeEntry(tx, header, legs, { reserveCredits: true })
}

/**
 * A completed refund R with commission refund c: DEBIT each owner's merchant_reserve (the part
 * its reserve balance doesn't cover from merchant_available) its cumulative share of R − c;
 * DEBIT platform_commission c; CREDIT buyer_pending R. Idempotent on `refund:<refundId>`.
 * `previous…` are the completed refunds of the payment before this one.
 */
export async function postRefund(
  tx: Tx,
  p: {
    merchantId: string
    paymentId: string
    refundId: string
    amount: number
    commissionRefund: number
    previousRefundedMinor: number
    previousCommissionRefundedMinor: number
    paymentAmount: number
    paymentCommission: number
    shares: Share[]
    /** What was captured of paymentAmount (partial captures); all of it when omitted. */
    capturedMinor?: number
    at: Date
  },
): Promise<void> {
  const header: EntryHeader = {
    merchantId: p.merchantId,
    kind: 'refund',
    reference: `refund:${p.refundId}`,
    paymentId: p.paymentId,
    at: p.at,
  }
  if (await isPosted(tx, header)) return
  assertShares(p.paymentAmount, p.shares)
  const reserveOf = await lockedReserveBalances(tx, p.merchantId, p.shares)
  await writeEntry(tx, header, refundLegs(p, reserveOf))
}

/**
 * A chargeback B received: DEBIT each owner's merchant_reserve/merchant_available its
 * cumulative gross share of B; CREDIT buyer_pending B. `previousChargedBackMinor` is the sum
 * of the payment's earlier chargebacks that were not reversed. Idempotent on
 * `chargeback:<chargebackId>`.
 */
export async function postChargeback(
  tx: Tx,
  p: {
    merchantId: string
    paymentId: string
    chargebackId: string
    amount: number
    previousChargedBackMinor: number
    paymentAmount: number
    shares: Share[]
    /** What was captured of paymentAmount (partial captures); all of it when omitted. */
    capturedMinor?: number
    at: Date
  },
): Promise<void> {
  const header: EntryHeader = {
    merchantId: p.merchantId,
    kind: 'chargeback',
    reference: `chargeback:${p.chargebackId}`,
    paymentId: p.paymentId,
    at: p.at,
  }
  if (await isPosted(tx, header)) return
  assertShares(p.paymentAmount, p.shares)
  const reserveOf = await lockedReserveBalances(tx, p.merchantId, p.shares)
  await writeEntry(tx, header, chargebackLegs(p, reserveOf))
}

/**
 * A chargeback reversed (representment won): the exact mirror of the received entry's legs,
 * same accounts, directions swapped. Idempotent on `chargeback_reversal:<chargebackId>`.
 */
export async function postChargebackReversal(
  tx: Tx,
  p: { merchantId: string; chargebackId: string; at: Date },
): Promise<void> {
  const [received] = await repo.findEntriesByReferences(tx, p.merchantId, [
    `chargeback:${p.chargebackId}`,
  ])
  assert(received, `ledger: chargeback ${p.chargebackId} was never posted`)
  const header: EntryHeader = {
    merchantId: p.merchantId,
    kind: 'chargeback_reversal',
    reference: `chargeback_reversal:${p.chargebackId}`,
    paymentId: received.payment_id,
    at: p.at,
  }
  if (await isPosted(tx, header)) return
  const legs = await repo.findLegsByEntry(tx, p.merchantId, received.id)
  const specs = legs.map((l): LegSpec => ({
    ownerType: l.owner_type,
    ownerId: l.owner_id,
    accountType: l.account_type,
    direction: l.direction,
    amount: l.amount,
  }))
  const mirrored = mirrorLegs(specs)
  // Reserve money handed back is settled like a capture's share, after the owner's delay.
  await writeEntry(tx, header, mirrored, { reserveCredits: true })
}

/**
 * The owner's settlement delay passed: DEBIT its merchant_reserve, CREDIT its
 * merchant_available. Idempotent on `settlement:<reference>` (the caller names the batch).
 */
export async function postSettlement(
  tx: Tx,
  p: {
    merchantId: string
    ownerType: 'merchant' | 'submerchant'
    ownerId: string
    amount: number
    reference: string
    at: Date
  },
): Promise<void> {
  assertMinor(p.amount, 'settlement amount')
  const owner: Owner = { ownerType: p.ownerType, ownerId: p.ownerId }
  const header: EntryHeader = {
    merchantId: p.merchantId,
    kind: 'settlement',
    reference: `settlement:${p.reference}`,
    paymentId: null,
    at: p.at,
  }
  if (await isPosted(tx, header)) return
  // Serialised with the owner's refunds, which read the reserve balance to choose accounts.
  await repo.lockOwners(tx, [ownerKey(owner)])
  await writeEntry(tx, header, settlementLegs(owner, p.amount))
}

/**
 * A payout P created: DEBIT the owner's merchant_available, CREDIT its payout_clearing.
 * Refuses (SVC-PAY-3502, `insufficient_balance`) when available < P: a payout may never take
 * a balance below zero. The owner is locked from the read to the commit, so two concurrent
 * payouts can't both spend the same balance. Idempotent on `payout_created:<payoutId>`.
 */
export async function postPayoutCreated(
  tx: Tx,
  p: {
    merchantId: string
    ownerType: 'merchant' | 'submerchant'
    ownerId: string
    payoutId: string
    amount: number
    at: Date
  },
): Promise<void> {
  assertMinor(p.amount, 'payout amount')
  const owner: Owner = { ownerType: p.ownerType, ownerId: p.ownerId }
  const header: EntryHeader = {
    merchantId: p.merchantId,
    kind: 'payout_created',
    reference: `payout_created:${p.payoutId}`,
    paymentId: null,
    at: p.at,
  }
  if (await isPosted(tx, header)) return
  await repo.lockOwners(tx, [ownerKey(owner)])
  const balance = await ownerBalance(tx, p.merchantId, p.ownerType, p.ownerId)
  if (balance.availableMinor < p.amount) throw ledgerError('insufficient_balance')
  await writeEntry(tx, header, payoutCreatedLegs(owner, p.amount))
}

/**
 * A batch of payouts of one owner (an approved payout draft): for each, DEBIT the owner's
 * merchant_available P, CREDIT its payout_clearing P, one entry per payout
 * (`payout_created:<payoutId>`, so each is paid or failed on its own). All or nothing: the
 * owner is locked once and the batch's TOTAL is checked against the available balance
 * (SVC-PAY-3502 when it exceeds it, and nothing is posted). Idempotent: a batch already
 * posted is a no-op.
 */
export async function postPayoutsCreated(
  tx: Tx,
  p: {
    merchantId: string
    ownerType: 'merchant' | 'submerchant'
    ownerId: string
    payouts: readonly { payoutId: string; amount: number }[]
    at: Date
  },
): Promise<void> {
  assert(p.payouts.length > 0, 'ledger: an empty payout batch')
  const owner: Owner = { ownerType: p.ownerType, ownerId: p.ownerId }
  assertTenant(p.merchantId, owner)
  let total = 0
  for (const payout of p.payouts) {
    assertMinor(payout.amount, 'payout amount')
    total += payout.amount
  }
  assertMinor(total, 'payout batch total')
  const references = p.payouts.map((x) => `payout_created:${x.payoutId}`)
  const posted = await repo.findEntriesByReferences(tx, p.merchantId, references)
  if (posted.length > 0) {
    // One transaction writes the whole batch, so it exists entirely or not at all.
    assert(
      posted.length === references.length && posted.every((e) => e.kind === 'payout_created'),
      'ledger: a payout batch is partly posted',
    )
    return
  }
  await repo.lockOwners(tx, [ownerKey(owner)])
  const balance = await ownerBalance(tx, p.merchantId, p.ownerType, p.ownerId)
  if (balance.availableMinor < total) throw ledgerError('insufficient_balance')
  const accounts: NewLedgerAccount[] = (['merchant_available', 'payout_clearing'] as const).map(
    (accountType) => ({
      id: accountIdFor(p.ownerType, p.ownerId, accountType),
      owner_type: p.ownerType,
      owner_id: p.ownerId,
      merchant_id: p.merchantId,
      account_type: accountType,
      currency: 'TRY',
      created_at: p.at,
    }),
  )
  await repo.insertAccountsIfAbsent(tx, accounts)
  const entries = p.payouts.map((payout) => ({ id: newId('jrn'), payout }))
  await repo.insertEntries(
    tx,
    entries.map(({ id, payout }) => ({
      id,
      merchant_id: p.merchantId,
      kind: 'payout_created' as const,
      reference: `payout_created:${payout.payoutId}`,
      payment_id: null,
      created_at: p.at,
    })),
  )
  await repo.insertLegsInChunks(
    tx,
    entries.flatMap(({ id, payout }) => {
      const legs = payoutCreatedLegs(owner, payout.amount)
      assertBalanced(legs)
      return legs.map((leg) => ({
        entry_id: id,
        merchant_id: p.merchantId,
        payment_id: null,
        account_id: accountIdFor(leg.ownerType, leg.ownerId, leg.accountType),
        owner_type: leg.ownerType,
        owner_id: leg.ownerId,
        account_type: leg.accountType,
        direction: leg.direction,
        amount: leg.amount,
        currency: 'TRY' as const,
        created_at: p.at,
      }))
    }),
  )
}

export interface ReserveCredit {
  merchantId: string
  entryId: string
  ownerType: 'merchant' | 'submerchant'
  ownerId: string
  /** The crediting entry's reference: `capture:<paymentId|captureId>` or `chargeback_reversal:<id>`. */
  sourceReference: string
  amount: number
  creditedAt: Date
}

/**
 * Reserve credits not yet settled, oldest first, in keyset pages (`after` is the last one of
 * the previous page). For the settlement reconciler, which knows each owner's delay.
 */
export async function listUnsettledReserveCredits(
  db: Db,
  after: ReserveCredit | undefined,
  limit: number,
): Promise<ReserveCredit[]> {
  assert(Number.isInteger(limit) && limit >= 1 && limit <= 1000, 'ledger: page size')
  const rows = await repo.findUnsettledReserveCredits(db, after, limit)
  return rows.map((r) => ({
    merchantId: r.merchant_id,
    entryId: r.entry_id,
    ownerType: r.owner_type,
    ownerId: r.owner_id,
    sourceReference: r.source_reference,
    amount: r.amount,
    creditedAt: r.credited_at,
  }))
}

/**
 * Settles one matured reserve credit: moves what the owner's reserve holds beyond its credits
 * still inside the delay (those newer than `maturedBefore`) to merchant_available, as entry
 * `settlement:<sourceReference>:<ownerType>:<ownerId>`, and marks the credit settled. Never
 * more than the reserve balance, never below the immature credits, zero when refunds or
 * chargebacks consumed the reserve (the credit is then settled with 0 and no entry). Money
 * that comes back to the reserve later (a chargeback reversal) is a credit of its own.
 * Idempotent: a settled credit is a no-op. Serialised per owner with refunds, chargebacks
 * and payouts by the owner lock. Returns the amount moved.
 */
export async function settleReserveCredit(
  tx: Tx,
  p: {
    merchantId: string
    entryId: string
    ownerType: 'merchant' | 'submerchant'
    ownerId: string
    maturedBefore: Date
    at: Date
  },
): Promise<number> {
  const owner: Owner = { ownerType: p.ownerType, ownerId: p.ownerId }
  assertTenant(p.merchantId, owner)
  await repo.lockOwners(tx, [ownerKey(owner)])
  const credit = await repo.lockReserveCredit(tx, p.merchantId, p)
  if (!credit || credit.settled_at !== null) return 0
  assert(
    credit.credited_at.getTime() <= p.maturedBefore.getTime(),
    `ledger: reserve credit ${credit.source_reference} settled before its delay passed`,
  )
  const { reserve, immature } = await repo.sumReserveAndImmature(
    tx,
    p.merchantId,
    p.ownerType,
    p.ownerId,
    p.maturedBefore,
  )
  const amount = Math.max(0, reserve - immature)
  let settlementEntryId: string | null = null
  if (amount > 0) {
    const legs = settlementLegs(owner, amount)
    const entryId = await writeEntry(
      tx,
      {
        merchantId: p.merchantId,
        kind: 'settlement',
        reference: `settlement:${credit.source_reference}:${p.ownerType}:${p.ownerId}`,
        paymentId: null,
        at: p.at,
      },
      legs,
    )
    assert(entryId !== undefined, `ledger: ${credit.source_reference} settled twice`)
    settlementEntryId = entryId
  }
  await repo.updateReserveCreditSettled(tx, p, { at: p.at, amount, settlementEntryId })
  return amount
}

async function postPayoutOutcome(
  tx: Tx,
  p: { merchantId: string; payoutId: string; at: Date },
  paid: boolean,
): Promise<void> {
  const kind: EntryKind = paid ? 'payout_paid' : 'payout_failed'
  const other: EntryKind = paid ? 'payout_failed' : 'payout_paid'
  const entries = await repo.findEntriesByReferences(tx, p.merchantId, [
    `payout_created:${p.payoutId}`,
    `${kind}:${p.payoutId}`,
    `${other}:${p.payoutId}`,
  ])
  const created = entries.find((e) => e.kind === 'payout_created')
  assert(created, `ledger: payout ${p.payoutId} was never created in the ledger`)
  assert(!entries.some((e) => e.kind === other), `ledger: payout ${p.payoutId} already ${other}`)
  if (entries.some((e) => e.kind === kind)) return
  const legs = await repo.findLegsByEntry(tx, p.merchantId, created.id)
  const clearing = legs.find((l) => l.account_type === 'payout_clearing')
  assert(
    clearing && clearing.owner_type !== 'platform',
    `ledger: payout ${p.payoutId} has no clearing leg`,
  )
  const owner: Owner = { ownerType: clearing.owner_type, ownerId: clearing.owner_id }
  await writeEntry(
    tx,
    {
      merchantId: p.merchantId,
      kind,
      reference: `${kind}:${p.payoutId}`,
      paymentId: null,
      at: p.at,
    },
    payoutOutcomeLegs(owner, clearing.amount, paid),
  )
}

/** Payout paid: DEBIT the owner's payout_clearing P, CREDIT the platform's bank_settlement P. */
export function postPayoutPaid(
  tx: Tx,
  p: { merchantId: string; payoutId: string; at: Date },
): Promise<void> {
  return postPayoutOutcome(tx, p, true)
}

/** Payout failed: DEBIT the owner's payout_clearing P, CREDIT its merchant_available P. */
export function postPayoutFailed(
  tx: Tx,
  p: { merchantId: string; payoutId: string; at: Date },
): Promise<void> {
  return postPayoutOutcome(tx, p, false)
}

/** Every leg of every entry of the payment, by entry time then the order they were written. */
export async function legsForPayment(
  db: Db,
  merchantId: string,
  paymentId: string,
): Promise<LegView[]> {
  const rows = await repo.findLegsByPayment(db, merchantId, paymentId)
  return rows.map((r) => ({
    accountType: r.account_type,
    direction: r.direction,
    amount: r.amount,
    currency: r.currency,
    ownerType: r.owner_type,
    ownerId: r.owner_id,
  }))
}

function emptyBalance(ownerType: 'merchant' | 'submerchant', ownerId: string): OwnerBalance {
  return { ownerType, ownerId, reserveMinor: 0, availableMinor: 0, payoutPendingMinor: 0 }
}

/**
 * Per owner of the tenant: the parent merchant first (always listed, zeros when it has no
 * legs), then each submerchant with legs, by id. Balances are credit-normal (what the
 * platform owes the owner); a chargeback can make them negative.
 */
export async function balancesFor(db: Db, merchantId: string): Promise<OwnerBalance[]> {
  const rows = await repo.sumOwnerBalancesByMerchant(db, merchantId)
  const byOwner = new Map<string, OwnerBalance>([
    [`merchant:${merchantId}`, emptyBalance('merchant', merchantId)],
  ])
  for (const row of rows) {
    if (row.owner_type === 'platform') continue
    const key = `${row.owner_type}:${row.owner_id}`
    const balance = byOwner.get(key) ?? emptyBalance(row.owner_type, row.owner_id)
    byOwner.set(key, balance)
    if (row.account_type === 'merchant_reserve') balance.reserveMinor = row.balance
    else if (row.account_type === 'merchant_available') balance.availableMinor = row.balance
    else if (row.account_type === 'payout_clearing') balance.payoutPendingMinor = row.balance
  }
  const [parent, ...others] = [...byOwner.values()]
  assert(parent, 'ledger: the parent merchant is always listed')
  others.sort((a, b) =>
    a.ownerType === b.ownerType
      ? a.ownerId.localeCompare(b.ownerId)
      : a.ownerType.localeCompare(b.ownerType),
  )
  return [parent, ...others]
}

/** One owner's balances (zeros when it has no legs). */
export async function ownerBalance(
  db: Db,
  merchantId: string,
  ownerType: 'merchant' | 'submerchant',
  ownerId: string,
): Promise<OwnerBalance> {
  assertTenant(merchantId, { ownerType, ownerId })
  const rows = await repo.sumOwnerBalancesByMerchant(db, merchantId, [ownerId])
  const balance = emptyBalance(ownerType, ownerId)
  for (const row of rows) {
    if (row.owner_type !== ownerType) continue
    if (row.account_type === 'merchant_reserve') balance.reserveMinor = row.balance
    else if (row.account_type === 'merchant_available') balance.availableMinor = row.balance
    else if (row.account_type === 'payout_clearing') balance.payoutPendingMinor = row.balance
  }
  return balance
}

const PROBLEMS_PER_CHECK_MAX = 100

/**
 * The whole ledger's invariants, for `kurus check-ledger` and the nightly reconciler: every
 * entry has >= 2 legs and balances, debits = credits overall per currency, and no leg lacks
 * its entry or account or disagrees with them. Reports at most 100 offenders per check.
 */
export async function checkLedger(db: Db): Promise<{ ok: boolean; problems: string[] }> {
  const problems: string[] = []
  for (const e of await repo.findUnbalancedEntries(db, PROBLEMS_PER_CHECK_MAX)) {
    problems.push(
      `entry ${e.id} (${e.kind}): ${e.legs} legs, debits ${e.debits}, credits ${e.credits}`,
    )
  }
  const totals = new Map<string, { debits: number; credits: number }>()
  for (const row of await repo.sumLegsByCurrencyAndDirection(db)) {
    const t = totals.get(row.currency) ?? { debits: 0, credits: 0 }
    if (row.direction === 'DEBIT') t.debits = row.total
    else t.credits = row.total
    totals.set(row.currency, t)
  }
  for (const [currency, t] of totals) {
    if (t.debits !== t.credits) {
      problems.push(`ledger total ${currency}: debits ${t.debits} ≠ credits ${t.credits}`)
    }
  }
  for (const leg of await repo.findInconsistentLegs(db, PROBLEMS_PER_CHECK_MAX)) {
    const what = [
      leg.orphan_entry && 'its entry does not exist',
      leg.orphan_account && 'its account does not exist',
      leg.entry_mismatch && "its merchant or payment differs from its entry's",
      leg.account_mismatch && "its owner, account type or tenant differs from its account's",
    ].filter(Boolean)
    problems.push(`leg ${leg.id} of entry ${leg.entry_id}: ${what.join('; ')}`)
  }
  return { ok: problems.length === 0, problems }
}

/** What a payment's entries moved (kuruş), for the payment-level audit. */
export interface PaymentLedgerTotals {
  captureEntries: number
  refundEntries: number
  chargebackEntries: number
  /** Entries of other kinds carrying the payment id (none are expected). */
  otherEntries: number
  /** buyer_pending debited by the capture: the payment's amount. */
  capturedMinor: number
  /** platform_commission credited by the capture. */
  commissionMinor: number
  /** buyer_pending credited by completed refunds. */
  refundedMinor: number
  /** platform_commission debited by completed refunds. */
  commissionRefundedMinor: number
  /** buyer_pending credited by chargebacks less what their reversals debited. */
  chargedBackMinor: number
}

function toPaymentTotals(
  r: Awaited<ReturnType<typeof repo.sumLegsByPayment>>[number],
): PaymentLedgerTotals {
  return {
    captureEntries: r.capture_entries,
    refundEntries: r.refund_entries,
    chargebackEntries: r.chargeback_entries,
    otherEntries: r.other_entries,
    capturedMinor: r.captured,
    commissionMinor: r.commission,
    refundedMinor: r.refunded,
    commissionRefundedMinor: r.commission_refunded,
    chargedBackMinor: r.charged_back - r.chargeback_reversed,
  }
}

/** Per payment id, the totals of its entries; payments without entries are absent. */
export async function paymentLedgerTotals(
  db: Db,
  paymentIds: readonly string[],
): Promise<Map<string, PaymentLedgerTotals>> {
  const rows = await repo.sumLegsByPayment(db, paymentIds)
  return new Map(rows.map((r) => [r.payment_id ?? '', toPaymentTotals(r)]))
}

/** The same totals over every entry that belongs to a payment (cross-check of the pages). */
export async function allPaymentsLedgerTotals(db: Db): Promise<PaymentLedgerTotals> {
  const [row] = await repo.sumLegsByPayment(db, null)
  assert(row, 'an aggregate without GROUP BY returns one row')
  return toPaymentTotals(row)
}
