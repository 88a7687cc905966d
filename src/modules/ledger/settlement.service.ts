import type { Db, Tx } from '../../database.ts'
import { assert } from '../../platform/assert.ts'
import { newId } from '../../platform/ids.ts'
import { assertMinor } from '../../platform/money.ts'
import { ledgerError } from './ledger.errors.ts'
import {
  accountIdFor,
  assertBalanced,
  ownerKey,
  payoutCreatedLegs,
  payoutOutcomeLegs,
  settlementLegs,
  type Owner,
} from './ledger.postings.ts'
import { ownerBalance } from './ledger-reads.service.ts'
import * as repo from './ledger.repository.ts'
import type { EntryKind, NewLedgerAccount } from './ledger.table.ts'
import { type EntryHeader, isPosted, writeEntry, assertTenant } from './ledger.writer.ts'

// Payouts and reserve settlement on the ledger: a payout takes the owner's available balance
// (never below zero, under the owner's lock), its outcome clears it, and reserve credits move
// to available when due. Postings take the caller's transaction, as in ledger.service.ts.

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
 * The owner's balance with the owner locked until the caller's transaction ends: what a
 * payout of the whole available balance reads before posting it (postPayoutCreated then
 * re-takes the same lock, which the transaction already holds).
 */
export async function lockedOwnerBalance(
  tx: Tx,
  merchantId: string,
  ownerType: 'merchant' | 'submerchant',
  ownerId: string,
) {
  const owner: Owner = { ownerType, ownerId }
  assertTenant(merchantId, owner)
  await repo.lockOwners(tx, [ownerKey(owner)])
  return ownerBalance(tx, merchantId, ownerType, ownerId)
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
