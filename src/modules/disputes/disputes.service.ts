import type { Deps, Tx } from '../../database.ts'
import { keysetCursor } from '../../platform/cursor.ts'
import { AppError } from '../../platform/errors.ts'
import { transact } from '../../platform/db/transaction.ts'
import { failpoint } from '../../platform/failpoints.ts'
import { newId } from '../../platform/ids.ts'
import { recordEvent } from '../events/index.ts'
import { postChargeback, postChargebackReversal } from '../ledger/index.ts'
import { getPayment, holdChargeback, releaseChargeback } from '../payments/index.ts'
import { depsOnClock } from '../test-clocks/index.ts'
import { disputesError } from './disputes.errors.ts'
import * as repo from './disputes.repository.ts'
import {
  type ChargebackResolution,
  type ChargebackRow,
  type ChargebackStatus,
  type EvidenceDraft,
} from './disputes.table.ts'

export interface Chargeback {
  id: string
  paymentId: string
  amount: number
  status: ChargebackStatus
  reasonCode: string
  bankChargebackId: string
  receivedAt: Date
  resolvedAt: Date | null
  evidenceDueBy: Date
  resolution: ChargebackResolution | null
  evidence: EvidenceDraft
  evidenceFileId: string | null
  evidenceSubmittedAt: Date | null
}

export function toChargeback(row: ChargebackRow): Chargeback {
  return {
    id: row.id,
    paymentId: row.payment_id,
    amount: row.amount,
    status: row.status,
    reasonCode: row.reason_code,
    bankChargebackId: row.bank_chargeback_id,
    receivedAt: row.received_at,
    resolvedAt: row.resolved_at,
    evidenceDueBy: row.evidence_due_by,
    resolution: row.resolution,
    evidence: row.evidence,
    evidenceFileId: row.evidence_file_id,
    evidenceSubmittedAt: row.evidence_submitted_at,
  }
}

export async function emitChargeback(
  tx: Tx,
  cb: ChargebackRow,
  storeId: string,
  callbackUrl: string | null,
  at: Date,
  type: string = `chargeback.${cb.status}`,
) {
  await recordEvent(tx, {
    merchantId: cb.merchant_id,
    storeId,
    type,
    resourceType: 'chargeback',
    resourceId: cb.id,
    data: {
      id: cb.id,
      paymentId: cb.payment_id,
      amount: cb.amount,
      status: cb.status,
      reasonCode: cb.reason_code,
      bankChargebackId: cb.bank_chargeback_id,
      receivedAt: cb.received_at.toISOString(),
      resolvedAt: cb.resolved_at?.toISOString() ?? null,
      evidenceDueBy: cb.evidence_due_by.toISOString(),
      resolution: cb.resolution,
      evidenceSubmittedAt: cb.evidence_submitted_at?.toISOString() ?? null,
    },
    callbackUrl,
    at,
  })
}

/**
 * A chargeback raised by the card's bank. This is what a real acquirer's dispute feed calls
 * (the sandbox helper too): one transaction sets the amount aside on the payment, posts the
 * ledger reversal from the owners back to the buyer and records `chargeback.received`.
 * The payment's own status does not change.
 */
export async function receiveChargeback(
  deps: Deps,
  merchantId: string,
  paymentId: string,
  input: { amount?: number; reasonCode?: string; bankChargebackId?: string },
): Promise<Chargeback> {
  const chargebackId = newId('cbk')
  // A payment made on a sandbox test clock is disputed at the clock's time (decision 0031).
  const payment = await getPayment(deps, merchantId, paymentId)
  const clocked = await depsOnClock(deps, payment.testClockId)
  return transact(deps.db, async (tx) => {
    const now = clocked.clock.now()
    const { before, amount } = await holdChargeback(tx, merchantId, paymentId, input.amount, now)
    const row: ChargebackRow = {
      test_clock_id: before.testClockId,
      evidence_due_by: dueBy(deps, now),
      resolution: null,
      evidence: {},
      evidence_file_id: null,
      evidence_submitted_at: null,
      reminder_sent_at: null,
      id: chargebackId,
      merchant_id: merchantId,
      payment_id: paymentId,
      amount,
      status: 'received',
      reason_code: input.reasonCode ?? '4837',
      bank_chargeback_id:
        input.bankChargebackId ?? `BCB-${chargebackId.slice(4, 16).toUpperCase()}`,
      received_at: now,
      resolved_at: null,
    }
    await repo.insertChargeback(tx, { ...row, evidence: JSON.stringify(row.evidence) })
    await postChargeback(tx, {
      merchantId,
      paymentId,
      chargebackId,
      amount,
      previousChargedBackMinor: before.chargebackOpenAmount,
      paymentAmount: before.amount,
      shares: before.shares,
      capturedMinor: before.capturedAmount,
      at: now,
    })
    await emitChargeback(tx, row, before.storeId, before.callbackUrl, now)
    return toChargeback(row)
  })
}

/** How a use case closes a chargeback: from which statuses, to what, and why. */
export interface Closing {
  from: readonly ChargebackStatus[]
  to: 'accepted' | 'reversed'
  resolution: ChargebackResolution
  /** The event: `chargeback.accepted|reversed` for the merchant's own calls. */
  event?: string
}

/** Closes a chargeback in one transaction: the conditional move, its ledger effect, the event. */
export async function closeChargeback(
  deps: Deps,
  merchantId: string,
  paymentId: string,
  chargebackId: string,
  closing: Closing,
  /** The request's Idempotency-Key answer, recorded with the close (decision 0035). */
  record: RecordAnswer = NO_RECORD,
): Promise<Chargeback> {
  const payment = await getPayment(deps, merchantId, paymentId)
  // One of a payment on a sandbox test clock closes at the clock's time (decision 0031).
  const clocked = await depsOnClock(deps, payment.testClockId)
  return transact(deps.db, async (tx) => {
    const now = clocked.clock.now()
    const current = await repo.lockChargeback(tx, merchantId, paymentId, chargebackId)
    if (!current) throw disputesError('chargeback_not_found')
    const row = await repo.moveChargeback(tx, chargebackId, closing.from, closing.to, {
      resolvedAt: now,
      resolution: closing.resolution,
    })
    if (!row) throw disputesError('chargeback_resolved')
    if (closing.to === 'reversed') {
      // Representment won: the exact mirror of the received legs, and the amount is
      // refundable (and disputable) again.
      await postChargebackReversal(tx, { merchantId, chargebackId, at: now })
      await releaseChargeback(tx, merchantId, paymentId, row.amount, now)
    }
    await emitChargeback(tx, row, payment.storeId, payment.callbackUrl, now, closing.event)
    const closed = toChargeback(row)
    await record(tx, closed)
    return closed
  }).then((closed) => {
    failpoint('chargeback.after_commit')
    return closed
  })
}

/**
 * Records a request's answer inside the transaction that did what it answers, so a retry
 * after a crash replays it rather than re-run and be refused ("already resolved") for what
 * its first attempt did.
 */
export type RecordAnswer = (tx: Tx, chargeback: Chargeback) => Promise<void>
const NO_RECORD: RecordAnswer = async () => undefined

/** The merchant accepts the loss: bookkeeping only (the money already went back). */
export function acceptChargeback(
  deps: Deps,
  merchantId: string,
  paymentId: string,
  id: string,
  record: RecordAnswer = NO_RECORD,
) {
  return closeChargeback(
    deps,
    merchantId,
    paymentId,
    id,
    { from: ['received'], to: 'accepted', resolution: 'accepted' },
    record,
  )
}

/** Representment won (also while the evidence is under review): the received legs are undone. */
export function reverseChargeback(
  deps: Deps,
  merchantId: string,
  paymentId: string,
  id: string,
  record: RecordAnswer = NO_RECORD,
) {
  return closeChargeback(
    deps,
    merchantId,
    paymentId,
    id,
    { from: ['received', 'under_review'], to: 'reversed', resolution: 'reversed' },
    record,
  )
}

const BATCH = 100

/**
 * The deadline reconciler: every chargeback still `received` past its `evidenceDueBy` is
 * closed `accepted` with `resolution: expired` (bookkeeping only, like an accept) and
 * `chargeback.closed` is recorded. Each one in its own transaction, conditional on
 * `received`, so a merchant's submit racing the deadline either wins or gets 409.
 */
export async function expireOverdueChargebacks(deps: Deps): Promise<number> {
  let moved = 0
  for (;;) {
    const due = await repo.findOverdueChargebacks(deps.db, deps.clock.now(), BATCH)
    for (const cb of due) {
      try {
        await closeChargeback(deps, cb.merchant_id, cb.payment_id, cb.id, {
          from: ['received'],
          to: 'accepted',
          resolution: 'expired',
          event: 'chargeback.closed',
        })
        moved++
      } catch (error) {
        if (!(error instanceof AppError) || error.status !== 409) throw error
      }
    }
    if (due.length < BATCH) return moved
  }
}

/**
 * A sandbox test clock's advance (decision 0031): the earliest evidence deadline of the
 * clock's open chargebacks at or before `upTo`.
 */
export function nextChargebackDeadlineOnClock(
  deps: Deps,
  testClockId: string,
  upTo: Date,
): Promise<Date | undefined> {
  return repo.findNextClockDeadline(deps.db, testClockId, upTo)
}

/**
 * A sandbox test clock's advance, at `at` (the clock already reads it): the clock's open
 * chargebacks past their deadline close as the deadline reconciler closes real-time ones.
 */
export async function expireClockChargebacks(
  deps: Deps,
  testClockId: string,
  at: Date,
): Promise<number> {
  let moved = 0
  for (const cb of await repo.findClockOverdueChargebacks(deps.db, testClockId, at, BATCH)) {
    try {
      await closeChargeback(deps, cb.merchant_id, cb.payment_id, cb.id, {
        from: ['received'],
        to: 'accepted',
        resolution: 'expired',
        event: 'chargeback.closed',
      })
      moved++
    } catch (error) {
      if (!(error instanceof AppError) || error.status !== 409) throw error
    }
  }
  return moved
}

/** One chargeback of the merchant by its id (404 for another merchant's or none). */
export async function getChargeback(deps: Deps, merchantId: string, id: string) {
  const row = await repo.findChargebackById(deps.db, merchantId, id)
  if (!row) throw disputesError('chargeback_not_found')
  return toChargeback(row)
}

/** How long the merchant has to answer a chargeback: received + KURUS_EVIDENCE_DAYS. */
function dueBy(deps: Deps, receivedAt: Date): Date {
  return new Date(receivedAt.getTime() + deps.config.evidenceDays * 86_400_000)
}

/** The deadline to answer (stored on the chargeback since migration 0300). */
export function evidenceDueBy(cb: Pick<Chargeback, 'evidenceDueBy'>): Date {
  return cb.evidenceDueBy
}

const CHARGEBACKS_CURSOR = keysetCursor('chargebacks', 'kurus/disputes/list')
export const CHARGEBACKS_LIMIT_MAX = 100

/** The merchant's chargebacks, newest first, in keyset pages (signed cursor). */
export async function listMerchantChargebacks(
  deps: Deps,
  merchantId: string,
  q: { status?: ChargebackStatus | undefined; limit: number; cursor?: string | undefined },
): Promise<{ items: Chargeback[]; nextCursor: string | null }> {
  const limit = Math.min(Math.max(1, Math.trunc(q.limit)), CHARGEBACKS_LIMIT_MAX)
  return CHARGEBACKS_CURSOR.page(
    deps.config.masterKey,
    merchantId,
    { ...q, limit },
    {
      // A list: the read pool.
      fetch: (before, n) =>
        repo.findChargebackPage(deps.readDb, { merchantId, status: q.status, before, limit: n }),
      view: (rows) => rows.map(toChargeback),
      position: (row) => ({ createdAt: row.received_at, id: row.id }),
    },
  )
}

export async function listChargebacks(
  deps: Deps,
  merchantId: string,
  paymentId: string,
): Promise<Chargeback[]> {
  await getPayment(deps, merchantId, paymentId)
  return (await repo.findChargebacksByPayment(deps.db, merchantId, paymentId)).map(toChargeback)
}

/** How many chargebacks each of these payments has (absent = none), for transaction lists. */
export async function countChargebacks(
  deps: Deps,
  merchantId: string,
  paymentIds: readonly string[],
): Promise<Map<string, number>> {
  // The transaction list's rows come from the read pool: their counts come from it too.
  const rows = await repo.countChargebacksByPayments(deps.readDb, merchantId, paymentIds)
  return new Map(rows.map((r) => [r.payment_id, r.n]))
}

/** The merchant's chargebacks still open (received or under review): count and amount (dashboard). */
export async function openChargebackFigures(
  deps: Deps,
  merchantId: string,
): Promise<{ count: number; amountMinor: number }> {
  const row = await repo.sumOpenChargebacks(deps.readDb, merchantId)
  return { count: row?.count ?? 0, amountMinor: row?.amount_minor ?? 0 }
}
