import { createHash } from 'node:crypto'
import type { Deps } from '../../database.ts'
import { assert } from '../../platform/assert.ts'
import { signedCursor } from '../../platform/cursor.ts'
import { validationError } from '../../platform/errors.ts'
import { captureRowToCapture, paymentRowToPayment, type PaymentDetail } from './payment-view.ts'
import * as repo from './payments.repository.ts'
import { searchPayments, type PaymentSearchFilter, type SearchPosition } from './search.service.ts'

// GET /v1/payments: the merchant's payments, newest first, each as GET /v1/payments/{id}
// answers it. The same search, filters and order as GET /v1/transactions (the read model's
// shorter rows); a page is the search's ids, then those payments with their captures in one
// query. Cursors are signed with a key of their own, bound to the merchant and the filters.

export type PaymentListFilters = Omit<PaymentSearchFilter, 'merchantId' | 'q'>

const LIST_LIMIT_MAX = 100
const CREATED_KEY = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/
const LIST_CURSOR = signedCursor<SearchPosition>('payments', 'kurus/payments/list-cursor', {
  write: (at) => ({ t: at.createdKey, i: at.id }),
  read: ({ t, i }) =>
    typeof t === 'string' && CREATED_KEY.test(t) && typeof i === 'string'
      ? { createdKey: t, id: i }
      : undefined,
})

function filtersFingerprint(f: PaymentListFilters): string {
  const canonical = JSON.stringify([
    f.status ?? null,
    f.storeId ?? null,
    f.customerId ?? null,
    f.paymentId ?? null,
    f.method ?? null,
    f.from?.toISOString() ?? null,
    f.to?.toISOString() ?? null,
    f.amountMin ?? null,
    f.amountMax ?? null,
    ...(f.metadata ? [f.metadata.key, f.metadata.value] : []),
  ])
  return createHash('sha256').update(canonical).digest('base64url').slice(0, 16)
}

export async function listPayments(
  deps: Deps,
  merchantId: string,
  filters: PaymentListFilters,
  page: { limit: number; cursor?: string },
): Promise<{ items: PaymentDetail[]; nextCursor: string | null }> {
  assert(Number.isInteger(page.limit) && page.limit >= 1 && page.limit <= LIST_LIMIT_MAX, 'limit')
  // Filter combinations that can match nothing by construction are the caller's mistake.
  if (filters.from && filters.to && filters.from.getTime() > filters.to.getTime()) {
    throw validationError('from', 'must not be after to')
  }
  if (
    filters.amountMin !== undefined &&
    filters.amountMax !== undefined &&
    filters.amountMin > filters.amountMax
  ) {
    throw validationError('amountMin', 'must not be greater than amountMax')
  }
  const scope = { m: merchantId, f: filtersFingerprint(filters) }
  return LIST_CURSOR.page(deps.config.masterKey, scope, page, {
    fetch: (after, limit) => searchPayments(deps, { ...filters, merchantId }, after, limit),
    view: async (entries) => {
      // The same pool as the search (the replica when there is one): one snapshot's view.
      const found = await repo.findPaymentsWithCaptures(
        deps.readDb,
        merchantId,
        entries.map((e) => e.id),
      )
      const byId = new Map(found.map((f) => [f.row.id, f]))
      return entries.flatMap((e) => {
        const f = byId.get(e.id)
        return f
          ? [{ ...paymentRowToPayment(f.row), captures: f.captures.map(captureRowToCapture) }]
          : []
      })
    },
    position: (entry) => entry.position,
  })
}
