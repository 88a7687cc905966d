import type { Db } from '../../database.ts'
import { assert } from '../../platform/assert.ts'
import { type OwnerType } from './ledger.postings.ts'
import * as repo from './ledger.repository.ts'
import type { AccountType, Direction } from './ledger.table.ts'
import { assertTenant } from './ledger.writer.ts'

// Read views of the ledger: a payment's legs, owners' balances, and the audit that checks every
// entry balances (`kurus check-ledger`, the reliability suite).

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
