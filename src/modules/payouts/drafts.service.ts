import type { Deps, Tx } from '../../database.ts'
import { assert } from '../../platform/assert.ts'
import { byCreatedAt, keysetCursor } from '../../platform/cursor.ts'
import { transact } from '../../platform/db/transaction.ts'
import { isNotFound, validationError } from '../../platform/errors.ts'
import type { RecordAnswer } from '../../platform/http/idempotent-answer.ts'
import { newId, newUuid } from '../../platform/ids.ts'
import { isLedgerError, postPayoutsCreated } from '../ledger/index.ts'
import { getStore } from '../merchants/index.ts'
import { getCardToken } from '../vault/index.ts'
import { checkDraftRow, DRAFT_ROWS_MAX, type DraftRowInput } from './payout-rows.ts'
import { payoutsError } from './payouts.errors.ts'
import * as repo from './payouts.repository.ts'
import { recordPayoutsCreated } from './payouts.service.ts'
import type { DraftRow, DraftRowRow, DraftStatus, NewPayout } from './payouts.table.ts'

// Payout drafts: a merchant's bulk payouts from one store to arbitrary IBANs and its own card
// tokens. Upload → per-row report → approve (fan out the valid rows into payouts, paid from
// the parent merchant's available balance) or cancel.

export interface Draft {
  id: string
  merchantId: string
  storeId: string
  status: DraftStatus
  rowCount: number
  validCount: number
  invalidCount: number
  validTotalMinor: number
  createdAt: Date
  approvedAt: Date | null
  cancelledAt: Date | null
}

export interface DraftReportRow {
  index: number
  valid: boolean
  errors: string[]
  rail: string | null
  holderName: string | null
  amountMinor: number | null
  destMasked: string | null
}

function draftRowToDraft(row: DraftRow): Draft {
  return {
    id: row.id,
    merchantId: row.merchant_id,
    storeId: row.store_id,
    status: row.status,
    rowCount: row.row_count,
    validCount: row.valid_count,
    invalidCount: row.invalid_count,
    validTotalMinor: row.valid_total_minor,
    createdAt: row.created_at,
    approvedAt: row.approved_at,
    cancelledAt: row.cancelled_at,
  }
}

function reportRow(row: DraftRowRow): DraftReportRow {
  return {
    index: row.idx,
    valid: row.valid,
    errors: row.errors,
    rail: row.rail,
    holderName: row.holder_name,
    amountMinor: row.amount_minor,
    destMasked: row.dest_masked,
  }
}

/** last4 of each card token that is this merchant's and active; others are absent. */
async function ownedCardTokens(
  deps: Deps,
  merchantId: string,
  rows: readonly DraftRowInput[],
): Promise<Map<string, string>> {
  const tokens = new Set<string>()
  for (const row of rows) {
    const dest = row.dest?.trim()
    if (row.rail === 'card' && dest && /^tok_[0-9a-z]{1,64}$/.test(dest)) tokens.add(dest)
  }
  const owned = new Map<string, string>()
  for (const token of tokens) {
    try {
      const info = await getCardToken(deps, merchantId, token)
      if (info.status === 'active') owned.set(token, info.last4)
    } catch (error) {
      // Another merchant's token is "not found" for this one: an invalid row, not a 404.
      if (!isNotFound(error)) throw error
    }
  }
  return owned
}

/** Validates every row and stores the draft with its report. One store per draft. */
export async function createDraft(
  deps: Deps,
  merchantId: string,
  input: { storeId: string; rows: DraftRowInput[] },
  record?: RecordAnswer<Tx, Draft>,
): Promise<Draft> {
  if (input.rows.length === 0) throw validationError('rows', 'must contain at least 1 row')
  if (input.rows.length > DRAFT_ROWS_MAX) {
    throw validationError('rows', `at most ${DRAFT_ROWS_MAX} rows per draft`)
  }
  await getStore(deps, merchantId, input.storeId) // 404 for another merchant's store
  const cards = await ownedCardTokens(deps, merchantId, input.rows)
  const checked = input.rows.map((row) => checkDraftRow(row, (token) => cards.get(token)))
  const validCount = checked.filter((c) => c.valid).length
  const validTotal = checked.reduce((sum, c) => sum + (c.valid ? (c.amountMinor ?? 0) : 0), 0)
  const now = deps.clock.now()
  const draft: DraftRow = {
    id: newId('drf'),
    merchant_id: merchantId,
    store_id: input.storeId,
    status: 'draft',
    row_count: checked.length,
    valid_count: validCount,
    invalid_count: checked.length - validCount,
    valid_total_minor: validTotal,
    created_at: now,
    approved_at: null,
    cancelled_at: null,
    updated_at: now,
  }
  await transact(deps.db, async (tx) => {
    await repo.insertDraft(tx, draft)
    await repo.insertDraftRows(
      tx,
      checked.map((c, idx) => ({
        draft_id: draft.id,
        merchant_id: merchantId,
        idx,
        valid: c.valid,
        errors: JSON.stringify(c.errors),
        rail: c.rail,
        holder_name: c.holderName,
        amount_minor: c.amountMinor,
        dest: c.dest,
        dest_masked: c.destMasked,
      })),
    )
    await record?.(tx, draftRowToDraft(draft))
  })
  return draftRowToDraft(draft)
}

export async function getDraft(
  deps: Deps,
  merchantId: string,
  draftId: string,
): Promise<{ draft: Draft; rows: DraftReportRow[] }> {
  const draft = await repo.findDraftById(deps.db, merchantId, draftId)
  if (!draft) throw payoutsError('draft_not_found')
  const rows = await repo.findDraftRows(deps.db, merchantId, draftId)
  return { draft: draftRowToDraft(draft), rows: rows.map(reportRow) }
}

export interface ApprovedDraft {
  draftId: string
  status: 'approved'
  payoutIds: string[]
}

/**
 * Fans the draft's valid rows out into `pending` payouts of the parent merchant, all in one
 * transaction with their ledger legs, events and jobs. All or nothing: the valid rows' total
 * must fit in the merchant's available balance (409 SVC-PAY-3502 otherwise, nothing
 * created). Idempotent: approving an approved draft returns the same payout ids. `record`
 * writes the API's answer in the approving transaction (decision 0035).
 */
export async function approveDraft(
  deps: Deps,
  merchantId: string,
  draftId: string,
  record?: RecordAnswer<Tx, ApprovedDraft>,
): Promise<ApprovedDraft> {
  return transact(deps.db, async (tx) => {
    // The draft's row lock serialises approvals: a concurrent second one waits here and
    // then finds the draft approved.
    const draft = await repo.lockDraftById(tx, merchantId, draftId)
    if (!draft) throw payoutsError('draft_not_found')
    if (draft.status === 'approved') {
      const payoutIds = await repo.findPayoutIdsByDraft(tx, merchantId, draftId)
      const same: ApprovedDraft = { draftId, status: 'approved', payoutIds }
      await record?.(tx, same)
      return same
    }
    if (draft.status !== 'draft') throw payoutsError('draft_not_approvable')
    const rows = await repo.findDraftRows(tx, merchantId, draftId, true)
    if (rows.length === 0) throw payoutsError('draft_has_no_valid_rows')
    const now = deps.clock.now()
    const payouts: NewPayout[] = rows.map((row) => {
      assert(
        row.rail && row.dest && row.dest_masked && row.holder_name && row.amount_minor,
        `payout draft ${draftId}: valid row ${String(row.idx)} is incomplete`,
      )
      return {
        id: newUuid(),
        merchant_id: merchantId,
        store_id: draft.store_id,
        draft_id: draftId,
        draft_row_idx: row.idx,
        owner_type: 'merchant',
        owner_id: merchantId,
        submerchant_id: null,
        rail: row.rail,
        dest: row.dest,
        dest_masked: row.dest_masked,
        holder_name: row.holder_name,
        amount_minor: row.amount_minor,
        currency: 'TRY',
        status: 'pending',
        client_reference: null,
        failure_code: null,
        rail_reference: null,
        kind: 'draft',
        run_date: null,
        arrival_date: null,
        created_at: now,
        processing_at: null,
        paid_at: null,
        failed_at: null,
        updated_at: now,
      }
    })
    await repo.insertPayouts(tx, payouts)
    try {
      await postPayoutsCreated(tx, {
        merchantId,
        ownerType: 'merchant',
        ownerId: merchantId,
        payouts: payouts.map((p) => ({ payoutId: p.id, amount: p.amount_minor })),
        at: now,
      })
    } catch (error) {
      if (isLedgerError(error, 'insufficient_balance')) {
        throw payoutsError(
          'insufficient_funds',
          `the draft's valid rows total ${String(draft.valid_total_minor)} kuruş, more than the available balance`,
        )
      }
      throw error
    }
    const approved = await repo.transitionDraft(tx, draftId, 'draft', {
      status: 'approved',
      approved_at: now,
      updated_at: now,
    })
    assert(approved, `payout draft ${draftId} left draft under its lock`)
    await recordPayoutsCreated(deps, tx, payouts)
    const out: ApprovedDraft = { draftId, status: 'approved', payoutIds: payouts.map((p) => p.id) }
    await record?.(tx, out)
    return out
  })
}

/** The merchant's latest drafts, newest first (at most `limit`, no paging: a short list). */
export async function listRecentDrafts(
  deps: Deps,
  merchantId: string,
  limit: number,
): Promise<Draft[]> {
  assert(Number.isInteger(limit) && limit >= 1 && limit <= 100, 'limit')
  return (await repo.findRecentDrafts(deps.readDb, merchantId, limit)).map(draftRowToDraft)
}

const DRAFTS_CURSOR = keysetCursor('payout_drafts', 'kurus/payouts/drafts')

/** The merchant's drafts, newest first, in keyset pages (the dashboard's drafts list). */
export async function listDrafts(
  deps: Deps,
  merchantId: string,
  q: { limit: number; cursor?: string | undefined },
): Promise<{ items: Draft[]; nextCursor: string | null }> {
  assert(Number.isInteger(q.limit) && q.limit >= 1 && q.limit <= 100, 'limit')
  return DRAFTS_CURSOR.page(deps.config.masterKey, merchantId, q, {
    fetch: (before, limit) => repo.findDraftPage(deps.readDb, merchantId, before, limit),
    view: (rows) => rows.map(draftRowToDraft),
    position: byCreatedAt,
  })
}

/** draft → cancelled; cancelling a cancelled draft answers the same; an approved one is 409. */
export async function cancelDraft(
  deps: Deps,
  merchantId: string,
  draftId: string,
  record?: RecordAnswer<Tx, Draft>,
): Promise<Draft> {
  return transact(deps.db, async (tx) => {
    const draft = await repo.lockDraftById(tx, merchantId, draftId)
    if (!draft) throw payoutsError('draft_not_found')
    if (draft.status === 'cancelled') {
      const same = draftRowToDraft(draft)
      await record?.(tx, same)
      return same
    }
    if (draft.status !== 'draft') throw payoutsError('draft_not_cancellable')
    const now = deps.clock.now()
    const cancelled = await repo.transitionDraft(tx, draftId, 'draft', {
      status: 'cancelled',
      cancelled_at: now,
      updated_at: now,
    })
    assert(cancelled, `payout draft ${draftId} left draft under its lock`)
    const out = draftRowToDraft(cancelled)
    await record?.(tx, out)
    return out
  })
}
