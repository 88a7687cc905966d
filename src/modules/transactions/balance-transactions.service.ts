import { createHash } from 'node:crypto'
import type { Deps } from '../../database.ts'
import { assert } from '../../platform/assert.ts'
import { invalidCursorError, keysetCursor } from '../../platform/cursor.ts'
import { validationError } from '../../platform/errors.ts'
import {
  findPayout,
  listBalanceTransactions,
  payoutAllocationPage,
  type BalanceOwner,
  type BalanceTransaction,
  type BalanceTransactionType,
} from '../ledger/index.ts'
import { getMerchant, getSubmerchant } from '../merchants/index.ts'
import { LIST_LIMIT_MAX } from './transactions.service.ts'

// GET /v1/balance-transactions: the caller's own balance movements, derived from the ledger
// (ledger's balance.service.ts; docs/reports.md). A merchant key sees the parent merchant's
// balance, a submerchant key its submerchant's.

/** Whose balance: the merchant's, or one submerchant's (a submerchant key). */
export interface BalanceCaller {
  merchantId: string
  submerchantId: string | null
}

export interface BalanceTransactionFilters {
  from?: Date
  to?: Date
  type?: BalanceTransactionType
  payoutId?: string
}

/** The owner behind a caller, with its settlement delay (for `availableOn`). */
export async function balanceOwnerOf(deps: Deps, caller: BalanceCaller): Promise<BalanceOwner> {
  if (caller.submerchantId !== null) {
    const sub = await getSubmerchant(deps, caller.merchantId, caller.submerchantId)
    return {
      merchantId: caller.merchantId,
      ownerType: 'submerchant',
      ownerId: caller.submerchantId,
      settlementDelaySeconds: sub.settlementDelaySeconds,
    }
  }
  const merchant = await getMerchant(deps, caller.merchantId)
  return {
    merchantId: caller.merchantId,
    ownerType: 'merchant',
    ownerId: caller.merchantId,
    settlementDelaySeconds: merchant.settlementDelaySeconds,
  }
}

function fingerprint(f: BalanceTransactionFilters): string {
  const canonical = JSON.stringify([
    f.from?.toISOString() ?? null,
    f.to?.toISOString() ?? null,
    f.type ?? null,
    f.payoutId ?? null,
  ])
  return createHash('sha256').update(canonical).digest('base64url').slice(0, 16)
}

// Cursors bound to the owner and the filters (the kind carries their fingerprint), signed with
// a key of their own: another list's, owner's or filter's cursor is a 400.
function cursorFor(f: BalanceTransactionFilters) {
  const mode = f.payoutId !== undefined ? 'btx-payout' : 'btx'
  return keysetCursor(`${mode}:${fingerprint(f)}`, 'kurus/balance-transactions/list-cursor')
}

function ownerKeyOf(owner: BalanceOwner): string {
  return `${owner.merchantId}:${owner.ownerType}:${owner.ownerId}`
}

const CREATED_KEY = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/

/**
 * The keyset position in a cursor's id: "<created_at to the microsecond>|<entry id>" (the
 * cursor's own createdAt keeps milliseconds only, and ledger times may carry microseconds).
 */
function positionOf(id: string): { createdKey: string; entryId: string } {
  const [createdKey = '', entryId = '', rest] = id.split('|')
  if (!CREATED_KEY.test(createdKey) || entryId === '' || rest !== undefined) {
    throw invalidCursorError()
  }
  return { createdKey, entryId }
}

function inFilters(t: BalanceTransaction, f: BalanceTransactionFilters): boolean {
  if (f.type !== undefined && t.type !== f.type) return false
  if (f.from !== undefined && t.createdAt < f.from) return false
  if (f.to !== undefined && t.createdAt >= f.to) return false
  return true
}

/**
 * One page of the caller's balance transactions, newest first. With `payoutId`: the ones that
 * payout settled, in the order they reached the available balance (other filters narrow the
 * page). `nextCursor` is null on the last page.
 */
export async function listBalanceTransactionsPage(
  deps: Deps,
  caller: BalanceCaller,
  filters: BalanceTransactionFilters,
  page: { limit: number; cursor?: string },
): Promise<{ items: BalanceTransaction[]; nextCursor: string | null }> {
  assert(Number.isInteger(page.limit) && page.limit >= 1 && page.limit <= LIST_LIMIT_MAX, 'limit')
  if (filters.from && filters.to && filters.from.getTime() > filters.to.getTime()) {
    throw validationError('from', 'must not be after to')
  }
  const owner = await balanceOwnerOf(deps, caller)
  const cursor = cursorFor(filters)
  const key = deps.config.masterKey
  const after =
    page.cursor === undefined ? undefined : cursor.decode(key, ownerKeyOf(owner), page.cursor)

  if (filters.payoutId !== undefined) {
    // Another owner's payout, or none: an empty list (the id's existence is not confirmed).
    const payout = await findPayout(deps.db, owner, filters.payoutId)
    if (!payout) return { items: [], nextCursor: null }
    let afterPosition: number | undefined
    if (after !== undefined) {
      afterPosition = Number(after.id)
      if (!Number.isSafeInteger(afterPosition)) throw invalidCursorError()
    }
    const rows = await payoutAllocationPage(deps.db, owner, payout, {
      ...(afterPosition !== undefined ? { afterPosition } : {}),
      limit: page.limit + 1,
    })
    const shown = rows.slice(0, page.limit)
    const last = shown.at(-1)
    return {
      items: shown.map((r) => r.transaction).filter((t) => inFilters(t, filters)),
      nextCursor:
        rows.length > page.limit && last
          ? cursor.encode(key, ownerKeyOf(owner), {
              createdAt: last.transaction.createdAt,
              id: String(last.position),
            })
          : null,
    }
  }

  const rows = await listBalanceTransactions(deps.db, owner, {
    ...(filters.from !== undefined ? { from: filters.from } : {}),
    ...(filters.to !== undefined ? { to: filters.to } : {}),
    ...(filters.type !== undefined ? { type: filters.type } : {}),
    ...(after !== undefined ? { after: positionOf(after.id) } : {}),
    limit: page.limit + 1,
  })
  const items = rows.slice(0, page.limit)
  const last = items.at(-1)
  return {
    items,
    nextCursor:
      rows.length > page.limit && last
        ? cursor.encode(key, ownerKeyOf(owner), {
            createdAt: last.createdAt,
            id: `${last.position.createdKey}|${last.position.entryId}`,
          })
        : null,
  }
}
