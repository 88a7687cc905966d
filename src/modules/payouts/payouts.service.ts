import type { Deps, Tx } from '../../database.ts'
import { assert } from '../../platform/assert.ts'
import { byCreatedAt, createdAtPosition, signedCursor } from '../../platform/cursor.ts'
import { transact } from '../../platform/db/transaction.ts'
import { createOnce } from '../../platform/idempotent-create.ts'
import { validationError } from '../../platform/errors.ts'
import { checkMetadata } from '../../platform/metadata.ts'
import { failpoint } from '../../platform/failpoints.ts'
import { newUuid } from '../../platform/ids.ts'
import { recordEvent } from '../events/index.ts'
import {
  balancesFor,
  isLedgerError,
  ownerBalance,
  postPayoutCreated,
  type OwnerBalance,
} from '../ledger/index.ts'
import { getSubmerchant } from '../merchants/index.ts'
import { maskIban } from './payout-rows.ts'
import { payoutsError } from './payouts.errors.ts'
import * as repo from './payouts.repository.ts'
import type { NewPayout, PayoutKind, PayoutRail, PayoutRow, PayoutStatus } from './payouts.table.ts'

// Payouts: submerchant payouts to the IBAN on file, the lifecycle every payout (also a
// draft's) goes through on the worker, reads, lists and the balance view.

export const PROCESS_PAYOUT_JOB = 'payouts.process_payout'

/** Who is asking: a merchant key (submerchantId null) or a submerchant's own key. */
export interface PayoutCaller {
  merchantId: string
  submerchantId: string | null
}

export interface Payout {
  id: string
  merchantId: string
  storeId: string | null
  draftId: string | null
  ownerType: 'merchant' | 'submerchant'
  ownerId: string
  submerchantId: string | null
  kind: PayoutKind
  rail: PayoutRail
  /** Istanbul date the money reaches the bank (settlement payouts), else null. */
  arrivalDate: string | null
  /** The last four digits of the destination IBAN (null for a card push). */
  bankAccountLast4: string | null
  destMasked: string
  holderName: string
  amountMinor: number
  currency: 'TRY'
  status: PayoutStatus
  clientReference: string | null
  failureCode: string | null
  metadata: Record<string, string>
  createdAt: Date
  processingAt: Date | null
  paidAt: Date | null
  failedAt: Date | null
}

export function payoutRowToPayout(row: PayoutRow): Payout {
  return {
    id: row.id,
    merchantId: row.merchant_id,
    storeId: row.store_id,
    draftId: row.draft_id,
    ownerType: row.owner_type,
    ownerId: row.owner_id,
    submerchantId: row.submerchant_id,
    kind: row.kind,
    rail: row.rail,
    arrivalDate: row.arrival_date,
    bankAccountLast4: row.rail === 'card' ? null : row.dest_masked.slice(-4),
    destMasked: row.dest_masked,
    holderName: row.holder_name,
    amountMinor: row.amount_minor,
    currency: row.currency,
    status: row.status,
    clientReference: row.client_reference,
    failureCode: row.failure_code,
    metadata: row.metadata,
    createdAt: row.created_at,
    processingAt: row.processing_at,
    paidAt: row.paid_at,
    failedAt: row.failed_at,
  }
}

export function eventData(row: NewPayout | PayoutRow): Record<string, unknown> {
  return {
    payoutId: row.id,
    status: row.status,
    submerchantId: row.submerchant_id ?? null,
    draftId: row.draft_id ?? null,
    kind: row.kind,
    rail: row.rail,
    arrivalDate: row.arrival_date ?? null,
    amountMinor: row.amount_minor,
    currency: row.currency,
    destMasked: row.dest_masked,
    clientReference: row.client_reference ?? null,
    failureCode: row.failure_code ?? null,
    // A row about to be written holds its metadata as JSON text.
    metadata:
      typeof row.metadata === 'string'
        ? (JSON.parse(row.metadata) as Record<string, string>)
        : (row.metadata ?? {}),
  }
}

/** Payout ids per rail job: a 1000-row draft is 20 jobs, not 1000 (each enqueue is a write). */
export const PAYOUTS_PER_JOB_MAX = 50

/**
 * The rest of creating payouts of one merchant, inside the caller's transaction (after the
 * rows and their ledger legs): a `payout.created` event each, and the rail jobs that take
 * them through the lifecycle (ids only, at most 50 per job).
 */
export async function recordPayoutsCreated(
  deps: Deps,
  tx: Tx,
  payouts: readonly NewPayout[],
): Promise<void> {
  for (const payout of payouts) {
    await recordEvent(tx, {
      merchantId: payout.merchant_id,
      storeId: payout.store_id ?? null,
      type: 'payout.created',
      resourceType: 'payout',
      resourceId: payout.id,
      data: eventData(payout),
      at: payout.created_at,
    })
  }
  for (let i = 0; i < payouts.length; i += PAYOUTS_PER_JOB_MAX) {
    const chunk = payouts.slice(i, i + PAYOUTS_PER_JOB_MAX)
    const merchantId = chunk[0]?.merchant_id
    assert(merchantId && chunk.every((p) => p.merchant_id === merchantId), 'one merchant per job')
    await deps.jobs.enqueue(tx, PROCESS_PAYOUT_JOB, {
      merchantId,
      payoutIds: chunk.map((p) => p.id),
    })
  }
}

// Turkey keeps UTC+3 all year (no DST since 2016): a payout day is an Istanbul calendar day.
const ISTANBUL_OFFSET_MS = 3 * 60 * 60 * 1000
const DAY_MS = 24 * 60 * 60 * 1000

export function istanbulDayStart(at: Date): Date {
  const local = at.getTime() + ISTANBUL_OFFSET_MS
  return new Date(Math.floor(local / DAY_MS) * DAY_MS - ISTANBUL_OFFSET_MS)
}

/** A submerchant key may act only for itself; a merchant key for any of its submerchants. */
function assertActsFor(caller: PayoutCaller, submerchantId: string): void {
  if (caller.submerchantId !== null && caller.submerchantId !== submerchantId) {
    throw payoutsError('scope_forbidden')
  }
}

/**
 * A payout creation's side of its Idempotency-Key record (decision 0035): the answer, the
 * payout as created, recorded by the transaction that creates it. No remote call happens in
 * the request (the rail is the worker's), so claim and outcome are that one transaction.
 */
export interface PayoutAnswer {
  record(tx: Tx, payout: Payout): Promise<void>
}

export const NO_PAYOUT_ANSWER: PayoutAnswer = { record: async () => undefined }

/**
 * Pays a submerchant out of its own available balance to the IBAN and holder on its record.
 * Limits: min and max per payout, and a daily total (Istanbul day) of payouts not failed;
 * 400 SVC-PAY-3503 outside them. 409 SVC-PAY-3502 above the available balance. The payout
 * row, its ledger legs, the event, the rail job and the request's recorded answer commit
 * together.
 */
export async function createSubmerchantPayout(
  deps: Deps,
  caller: PayoutCaller,
  input: {
    submerchantId: string
    rail: PayoutRail
    amountMinor: number
    clientReference?: string | undefined
    idempotencyKey?: string | undefined
    metadata?: Record<string, string> | undefined
  },
  answer: PayoutAnswer = NO_PAYOUT_ANSWER,
): Promise<Payout> {
  assertActsFor(caller, input.submerchantId)
  checkMetadata(input.metadata ?? {})
  return createOnce(input.idempotencyKey, {
    find: (key) => repo.findPayoutByKey(deps.db, caller.merchantId, key),
    replay: (earlier) => samePayout(deps, caller, earlier, input),
    claim: async (key) => {
      const sub = await getSubmerchant(deps, caller.merchantId, input.submerchantId)
      if (input.rail === 'card') throw payoutsError('rail_unsupported')
      const limits = sub.payoutLimits
      if (input.amountMinor < limits.minMinor || input.amountMinor > limits.maxMinor) {
        throw payoutsError(
          'outside_limits',
          `amountMinor must be between ${String(limits.minMinor)} and ${String(limits.maxMinor)} kuruş`,
        )
      }
      const now = deps.clock.now()
      const row: NewPayout = {
        id: newUuid(),
        merchant_id: caller.merchantId,
        store_id: null,
        draft_id: null,
        draft_row_idx: null,
        owner_type: 'submerchant',
        owner_id: sub.id,
        submerchant_id: sub.id,
        rail: input.rail,
        dest: sub.iban,
        dest_masked: maskIban(sub.iban),
        holder_name: sub.holderName,
        amount_minor: input.amountMinor,
        currency: 'TRY',
        status: 'pending',
        client_reference: input.clientReference ?? null,
        idempotency_key: key,
        metadata: JSON.stringify(input.metadata ?? {}),
        failure_code: null,
        rail_reference: null,
        kind: 'submerchant',
        run_date: null,
        arrival_date: null,
        created_at: now,
        processing_at: null,
        paid_at: null,
        failed_at: null,
        updated_at: now,
      }
      const payout = await transact(deps.db, async (tx) => {
        // Lock, then sum the day: two concurrent payouts can't both fit under the daily total.
        await repo.lockPayoutOwner(tx, `submerchant:${sub.id}`)
        const today = await repo.sumOwnerPayoutsSince(
          tx,
          caller.merchantId,
          'submerchant',
          sub.id,
          istanbulDayStart(now),
        )
        if (today + input.amountMinor > limits.dailyMaxMinor) {
          throw payoutsError(
            'outside_limits',
            `the daily payout total of ${String(limits.dailyMaxMinor)} kuruş would be exceeded (${String(today)} already today)`,
          )
        }
        await repo.insertPayouts(tx, [row])
        try {
          await postPayoutCreated(tx, {
            merchantId: caller.merchantId,
            ownerType: 'submerchant',
            ownerId: sub.id,
            payoutId: row.id,
            amount: input.amountMinor,
            at: now,
          })
        } catch (error) {
          // The ledger's insufficient_balance becomes this module's insufficient_funds.
          if (isLedgerError(error, 'insufficient_balance')) {
            throw payoutsError('insufficient_funds')
          }
          throw error
        }
        await recordPayoutsCreated(deps, tx, [row])
        const created = await repo.findPayoutById(tx, caller.merchantId, row.id)
        assert(created, `payout ${row.id} not found in its own transaction`)
        const payout = payoutRowToPayout(created)
        await answer.record(tx, payout)
        failpoint('payout.before_commit')
        return payout
      })
      failpoint('payout.after_commit')
      return payout
    },
    run: (payout) => payout,
    uniqueIndex: 'payouts_idempotency',
  })
}

/**
 * The payout an Idempotency-Key already made, if the retry asks for the same one; the
 * gateway's own record answers most retries, this covers a response that was never recorded.
 */
function samePayout(
  deps: Deps,
  caller: PayoutCaller,
  row: PayoutRow,
  input: {
    submerchantId: string
    rail: PayoutRail
    amountMinor: number
    clientReference?: string | undefined
  },
): Promise<Payout> {
  const same =
    row.submerchant_id === input.submerchantId &&
    row.rail === input.rail &&
    row.amount_minor === input.amountMinor &&
    row.client_reference === (input.clientReference ?? null)
  if (!same) throw payoutsError('idempotency_mismatch')
  return getPayout(deps, caller, row.id)
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** A payout of the caller: another merchant's, or another submerchant's for a submerchant key, is 404. */
export async function getPayout(
  deps: Deps,
  caller: PayoutCaller,
  payoutId: string,
): Promise<Payout> {
  // Ids are UUIDs; anything else can't exist (and PostgreSQL would refuse to compare it).
  if (!UUID.test(payoutId)) throw payoutsError('payout_not_found')
  const row = await repo.findPayoutById(deps.db, caller.merchantId, payoutId.toLowerCase())
  if (!row) throw payoutsError('payout_not_found')
  if (caller.submerchantId !== null && row.submerchant_id !== caller.submerchantId) {
    throw payoutsError('payout_not_found')
  }
  return payoutRowToPayout(row)
}

export const PAYOUTS_LIMIT_MAX = 100

// The list's cursor: signed with a key of its own, names its merchant. Payout ids are UUIDs:
// a position with another id can't be one of ours (and PostgreSQL would refuse to compare it).
const PAYOUTS_CURSOR = signedCursor('payouts', 'kurus/payouts/cursor', {
  write: createdAtPosition.write,
  read: (payload) => {
    const at = createdAtPosition.read(payload)
    return at && UUID.test(at.id) ? at : undefined
  },
})

/**
 * The caller's payouts, newest first, in keyset pages. A submerchant key sees only its own
 * (asking for another submerchant's is 403 SVC-AUTH-3201).
 */
export async function listPayouts(
  deps: Deps,
  caller: PayoutCaller,
  q: {
    status?: PayoutStatus | undefined
    kind?: PayoutKind | undefined
    submerchantId?: string | undefined
    from?: Date | undefined
    to?: Date | undefined
    limit: number
    cursor?: string | undefined
  },
): Promise<{ items: Payout[]; nextCursor: string | null }> {
  assert(Number.isInteger(q.limit) && q.limit >= 1 && q.limit <= PAYOUTS_LIMIT_MAX, 'limit')
  if (q.submerchantId !== undefined) assertActsFor(caller, q.submerchantId)
  if (q.from && q.to && q.from.getTime() > q.to.getTime()) {
    throw validationError('from', 'must not be after to')
  }
  // A list: the read pool (never for the balance a payout is checked against).
  return PAYOUTS_CURSOR.page(deps.config.masterKey, caller.merchantId, q, {
    fetch: (before, limit) =>
      repo.findPayoutsPage(deps.readDb, {
        merchantId: caller.merchantId,
        submerchantId: caller.submerchantId ?? q.submerchantId,
        status: q.status,
        kind: q.kind,
        from: q.from,
        to: q.to,
        before,
        limit,
      }),
    view: (rows) => rows.map(payoutRowToPayout),
    position: byCreatedAt,
  })
}

/**
 * Balances per owner: a merchant key sees its own and every submerchant's with ledger legs;
 * a submerchant key only its own.
 */
export async function getBalances(deps: Deps, caller: PayoutCaller): Promise<OwnerBalance[]> {
  if (caller.submerchantId !== null) {
    return [await ownerBalance(deps.db, caller.merchantId, 'submerchant', caller.submerchantId)]
  }
  return balancesFor(deps.db, caller.merchantId)
}
