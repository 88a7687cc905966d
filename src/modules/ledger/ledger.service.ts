import type { Tx } from '../../database.ts'
import { assert } from '../../platform/assert.ts'
import { assertMinor } from '../../platform/money.ts'
import {
  assertShares,
  captureStepLegs,
  chargebackLegs,
  mirrorLegs,
  ownerKey,
  refundLegs,
  settlementLegs,
  type LegSpec,
  type Owner,
  type Share,
} from './ledger.postings.ts'
import * as repo from './ledger.repository.ts'
import { type EntryHeader, isPosted, writeEntry, lockedReserveBalances } from './ledger.writer.ts'

// The ledger's postings for payments: captures, refunds, chargebacks and settlement. Every
// posting takes the caller's transaction (`tx: Tx`): the legs commit with the state change that
// caused them, or not at all (ARCHITECTURE.md). None of them opens a transaction of its own.

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
