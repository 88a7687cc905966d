import { AsyncLocalStorage } from 'node:async_hooks'
import type { Deps, Tx } from '../../database.ts'
import { assert } from '../../platform/assert.ts'
import { byCreatedAt, keysetCursor } from '../../platform/cursor.ts'
import { transact, withoutRider } from '../../platform/db/transaction.ts'
import { failpoint } from '../../platform/failpoints.ts'
import { newId } from '../../platform/ids.ts'
import { recordEvent } from '../events/index.ts'
import { capturePayment, getPayment, voidPayment, type Payment } from '../payments/index.ts'
import { riskError } from './risk.errors.ts'
import * as repo from './risk.repository.ts'
import type { ReviewClosedBy, ReviewClosedReason, ReviewRow, ReviewStatus } from './risk.table.ts'

// The review queue (CONTRACT.md "Risk"): a charge a `review` rule matched is authorized but
// not captured, and a review opens in the same transaction as the authorization (payments
// calls openReview through its risk port). Approve captures (when the charge asked for
// capture), reject voids, and the authorization's expiry closes the review as `expired`.
// The payment's own action comes first (captures and voids are idempotent and serialised
// by the payments module), then the review's conditional close with its `review.closed`
// event: a retry after a crash in between finishes the close.

export const REVIEWS_LIMIT_MAX = 100
const REVIEWS_CURSOR = keysetCursor('risk_reviews', 'kurus/risk/reviews')

export interface Review {
  id: string
  paymentId: string
  status: ReviewStatus
  closedReason: ReviewClosedReason | null
  reasons: string[]
  createdAt: Date
  closedAt: Date | null
}

function reviewRowToReview(r: ReviewRow): Review {
  return {
    id: r.id,
    paymentId: r.payment_id,
    status: r.status,
    closedReason: r.closed_reason,
    reasons: r.reasons,
    createdAt: r.created_at,
    closedAt: r.closed_at,
  }
}

function reviewEventData(r: Review) {
  return {
    id: r.id,
    paymentId: r.paymentId,
    status: r.status,
    closedReason: r.closedReason,
    reasons: r.reasons,
    createdAt: r.createdAt.toISOString(),
    closedAt: r.closedAt?.toISOString() ?? null,
  }
}

/** Opens the review of a payment held at `authorized`, in the caller's transaction. */
export async function openReview(
  tx: Tx,
  input: { merchantId: string; storeId: string; paymentId: string; reasons: string[]; at: Date },
): Promise<void> {
  const row = await repo.insertReview(tx, {
    id: newId('rev'),
    merchant_id: input.merchantId,
    payment_id: input.paymentId,
    status: 'open',
    closed_reason: null,
    reasons: JSON.stringify(input.reasons),
    created_at: input.at,
    closed_at: null,
  })
  if (!row) return // already opened (the reconciler and the charge both settled it)
  await recordEvent(tx, {
    merchantId: input.merchantId,
    storeId: input.storeId,
    type: 'review.opened',
    resourceType: 'review',
    resourceId: row.id,
    data: reviewEventData(reviewRowToReview(row)),
    at: input.at,
  })
}

export async function getReview(deps: Deps, merchantId: string, id: string): Promise<Review> {
  const row = await repo.findReviewById(deps.db, merchantId, id)
  if (!row) throw riskError('review_not_found')
  return reviewRowToReview(row)
}

export async function listReviews(
  deps: Deps,
  merchantId: string,
  q: { status?: ReviewStatus | undefined; limit: number; cursor?: string | undefined },
): Promise<{ items: Review[]; nextCursor: string | null }> {
  assert(Number.isInteger(q.limit) && q.limit >= 1 && q.limit <= REVIEWS_LIMIT_MAX, 'limit')
  return REVIEWS_CURSOR.page(deps.config.masterKey, merchantId, q, {
    fetch: (before, limit) => repo.findReviewPage(deps.db, merchantId, q.status, before, limit),
    view: (rows) => rows.map(reviewRowToReview),
    position: byCreatedAt,
  })
}

/** How many reviews wait for a decision (the dashboard overview's figure; read pool). */
export function countOpenReviews(deps: Deps, merchantId: string): Promise<number> {
  return repo.countOpenReviews(deps.readDb, merchantId)
}

/** Closes an open review with its event; the one that finds it closed gets it as it is. */
/**
 * A review decision's side of its Idempotency-Key record (decision 0035): the answer (the
 * review and its payment) recorded by the transaction that closes the review.
 */
export type ReviewAnswer = (tx: Tx, review: Review, payment: Payment) => Promise<void>
const NO_REVIEW_ANSWER: ReviewAnswer = async () => undefined

async function close(
  deps: Deps,
  review: ReviewRow,
  payment: Payment,
  reason: ReviewClosedReason,
  by: ReviewClosedBy,
  answer: ReviewAnswer = NO_REVIEW_ANSWER,
): Promise<Review> {
  return transact(deps.db, async (tx) => {
    const now = deps.clock.now()
    const closed = await repo.closeReview(tx, review.id, reason, now, by)
    if (!closed) {
      const current = await repo.findReviewById(tx, review.merchant_id, review.id)
      assert(current !== undefined, 'review vanished')
      const out = reviewRowToReview(current)
      await answer(tx, out, payment)
      return out
    }
    const out = reviewRowToReview(closed)
    await recordEvent(tx, {
      merchantId: review.merchant_id,
      storeId: payment.storeId,
      type: 'review.closed',
      resourceType: 'review',
      resourceId: review.id,
      data: reviewEventData(out),
      at: now,
    })
    await answer(tx, out, payment)
    return out
  })
}

async function openReviewFor(deps: Deps, merchantId: string, id: string, want: ReviewClosedReason) {
  const row = await repo.findReviewById(deps.db, merchantId, id)
  if (!row) throw riskError('review_not_found')
  if (row.status === 'closed' && row.closed_reason !== want) throw riskError('review_closed')
  return row
}

// A review follows its payment's state machine (decision 0036): approve and reject act only on
// an `authorized` payment (409 otherwise), and a capture or void made directly (not through
// the review) closes the open review with it, in the same transaction, as approved "by
// capture" or rejected "by void". While approve/reject capture or void, they close it
// themselves ("by review"): this store tells the payment's hook so.
const actingForReview = new AsyncLocalStorage<true>()

const CLOSED_BY_OUTCOME = {
  captured: ['approved', 'capture'],
  voided: ['rejected', 'void'],
  expired: ['expired', 'expiry'],
} as const satisfies Record<string, [ReviewClosedReason, ReviewClosedBy]>

/**
 * The payments module's hook (risk port), inside the transaction that captured or voided a
 * payment: its open review closes with it.
 */
export async function closeReviewWithPayment(
  tx: Tx,
  input: {
    merchantId: string
    storeId: string
    paymentId: string
    outcome: 'captured' | 'voided' | 'expired'
    at: Date
  },
): Promise<void> {
  if (actingForReview.getStore()) return
  const open = await repo.findOpenReviewOfPayment(tx, input.merchantId, input.paymentId)
  if (!open) return
  const [reason, by] = CLOSED_BY_OUTCOME[input.outcome]
  const closed = await repo.closeReview(tx, open.id, reason, input.at, by)
  if (!closed) return
  await recordEvent(tx, {
    merchantId: input.merchantId,
    storeId: input.storeId,
    type: 'review.closed',
    resourceType: 'review',
    resourceId: closed.id,
    data: reviewEventData(reviewRowToReview(closed)),
    at: input.at,
  })
}

/** Approve: captures the payment when its charge asked for capture, then closes the review. */
export async function approveReview(
  deps: Deps,
  merchantId: string,
  id: string,
  answer: ReviewAnswer = NO_REVIEW_ANSWER,
): Promise<{ review: Review; payment: Payment }> {
  const row = await openReviewFor(deps, merchantId, id, 'approved')
  let payment: Payment = await getPayment(deps, merchantId, row.payment_id)
  // An open review over a captured payment is an approval whose capture committed and whose
  // close did not (a capture made any other way closes the review in its own transaction):
  // the retry finishes it, never refuses what its first attempt did.
  const approvedBefore = payment.captureRequested && payment.status === 'captured'
  if (row.status === 'open' && payment.status !== 'authorized' && !approvedBefore) {
    throw riskError('review_payment_not_authorized')
  }
  if (row.status === 'open' && payment.captureRequested && !approvedBefore) {
    // The capture commits its own phases; a door's audit entry rides on the review's close
    // below, the decision's own transaction (decision 0036).
    payment = await withoutRider(() =>
      actingForReview.run(true, () => capturePayment(deps, merchantId, row.payment_id, {})),
    )
    failpoint('review.after_action')
  }
  const review = await close(deps, row, payment, 'approved', 'review', answer)
  return { review, payment }
}

/** Reject: voids the authorization, then closes the review. */
export async function rejectReview(
  deps: Deps,
  merchantId: string,
  id: string,
  answer: ReviewAnswer = NO_REVIEW_ANSWER,
): Promise<{ review: Review; payment: Payment }> {
  const row = await openReviewFor(deps, merchantId, id, 'rejected')
  let payment: Payment = await getPayment(deps, merchantId, row.payment_id)
  // As for approve: an open review over a payment voided for it is a rejection whose close
  // did not commit (any other void or expiry closes the review with it).
  const rejectedBefore = payment.status === 'voided' && payment.voidReason === 'review_rejected'
  if (row.status === 'open' && payment.status !== 'authorized' && !rejectedBefore) {
    throw riskError('review_payment_not_authorized')
  }
  if (row.status === 'open' && !rejectedBefore) {
    payment = await withoutRider(() =>
      actingForReview.run(true, () =>
        voidPayment(deps, merchantId, row.payment_id, 'review_rejected'),
      ),
    )
    failpoint('review.after_action')
  }
  const review = await close(deps, row, payment, 'rejected', 'review', answer)
  return { review, payment }
}

/**
 * Closes as `expired` the open reviews whose authorization is gone: only reviews older than
 * the authorization TTL are looked at (the payments module's expiry releases those), and a
 * review whose payment is still `authorized` (its expiry has not run yet) waits for the next
 * run. Returns how many closed.
 */
export async function expireReviews(deps: Deps, limit: number): Promise<number> {
  const before = new Date(deps.clock.now().getTime() - deps.config.authorizationTtlMs)
  let closed = 0
  for (const row of await repo.findOpenReviewsBefore(deps.db, before, limit)) {
    const payment = await getPayment(deps, row.merchant_id, row.payment_id)
    if (payment.status === 'authorized') continue
    const review = await close(deps, row, payment, 'expired', 'expiry')
    if (review.closedReason === 'expired') closed++
  }
  return closed
}
