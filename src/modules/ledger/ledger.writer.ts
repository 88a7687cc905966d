import type { Db, Tx } from '../../database.ts'
import { assert } from '../../platform/assert.ts'
import { newId } from '../../platform/ids.ts'
import {
  accountIdFor,
  assertBalanced,
  ownerKey,
  type LegSpec,
  type Owner,
  type OwnerType,
} from './ledger.postings.ts'
import * as repo from './ledger.repository.ts'
import type { EntryKind, NewLedgerAccount } from './ledger.table.ts'

// The ledger's one write path: an entry and its legs (balanced, tenant-checked, idempotent on
// its reference), shared by the postings (ledger.service.ts) and settlement (settlement.service.ts).

export interface EntryHeader {
  merchantId: string
  kind: EntryKind
  reference: string
  paymentId: string | null
  at: Date
}

export function assertTenant(merchantId: string, owner: { ownerType: OwnerType; ownerId: string }) {
  assert(
    owner.ownerType !== 'merchant' || owner.ownerId === merchantId,
    `ledger: merchant ${owner.ownerId} posted under tenant ${merchantId}`,
  )
}

/**
 * True when this reference is already posted (a retry): then the caller does nothing. The
 * existing entry must be the same posting, or two different events share a reference.
 */
export async function isPosted(db: Db, header: EntryHeader): Promise<boolean> {
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
export async function writeEntry(
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
export async function lockedReserveBalances(
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
