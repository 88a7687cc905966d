import type { Deps, Tx } from '../../database.ts'
import { transact, withoutRider } from '../../platform/db/transaction.ts'
import {
  cancelSession,
  findPaymentByTransactionId,
  getSessionById,
  type Payment,
} from '../payments/index.ts'
import { invoicesError } from './invoices.errors.ts'
import * as repo from './invoices.repository.ts'
import type { InvoiceRow } from './invoices.table.ts'
import { emitInvoiceEvent, isTerminal, sessionTransactionId } from './invoice-view.ts'

// How an invoice learns that it was paid, and how it expires.
//
// Paying goes through checkout sessions the invoice mints itself (`<invoiceId>:<n>`, see
// public.service.ts). The payments module knows nothing about invoices, so the invoice looks
// its payments up: a captured payment of any of its sessions makes it `paid`. That look-up
// runs (1) in the `invoices.reconcile_payments` reconciler every minute, and (2) lazily
// whenever someone reads the invoice (GET /v1/invoices/{id}, the public view, the hosted
// page), so a buyer coming back from the checkout sees `paid` at once. Every move is a
// conditional change under the row lock, so the two paths never both record it.
//
// Closing an invoice (cancel, expiry) cancels its open session first and then looks at the
// payments once more: a payment captured in between wins, and the invoice becomes `paid`.

/** What the invoice's sessions hold: a payment that paid it, or one still under way. */
export interface PaymentState {
  paid: Payment | undefined
  inFlight: Payment | undefined
}

function paysInvoice(p: Payment): boolean {
  // A captured payment paid the invoice, even if it was refunded later.
  return p.status === 'captured' || p.status === 'refunded'
}

/**
 * The payments of the invoice's sessions, newest session first. In flight: the latest
 * session's payment while the acquirer has not answered (`pending`), an uncaptured
 * authorization, or a 3DS challenge while its session is still open. A challenge left on
 * an ended session counts as abandoned.
 */
export async function paymentState(deps: Deps, row: InvoiceRow): Promise<PaymentState> {
  let inFlight: Payment | undefined
  for (let n = row.session_seq; n >= 1; n--) {
    const payment = await findPaymentByTransactionId(
      deps,
      row.merchant_id,
      sessionTransactionId(row.id, n),
    )
    if (!payment) continue
    if (paysInvoice(payment)) return { paid: payment, inFlight: undefined }
    if (n !== row.session_seq) continue
    if (payment.status === 'pending' || payment.status === 'authorized') inFlight = payment
    if (payment.status === 'pending_3ds' && row.session_id) {
      const session = await getSessionById(deps, row.session_id)
      if (session?.status === 'active') inFlight = payment
    }
  }
  return { paid: undefined, inFlight }
}

/** open → paid, recording the payment; a terminal row is left as it is. */
export async function markPaid(deps: Deps, row: InvoiceRow, payment: Payment): Promise<InvoiceRow> {
  return transact(deps.db, async (tx) => {
    const current = await repo.lockInvoice(tx, row.merchant_id, row.id)
    if (!current) throw invoicesError('invoice_not_found')
    if (isTerminal(current.status)) return current
    const now = deps.clock.now()
    const updated = await repo.transitionInvoice(tx, current.id, current.status, {
      status: 'paid',
      paid_at: now,
      payment_id: payment.id,
      updated_at: now,
    })
    await emitInvoiceEvent(tx, updated, 'invoice.paid', now)
    return updated
  })
}

export type CloseOutcome =
  | { closed: true; row: InvoiceRow }
  /** A payment won the race: the invoice is paid (or another close got there first). */
  | { closed: false; row: InvoiceRow; reason: 'terminal' }
  | { closed: false; row: InvoiceRow; reason: 'payment_in_progress' }

/**
 * Moves an open invoice to `cancelled` or `expired`: its open checkout session is cancelled
 * first (no new payment can start), then a payment captured meanwhile makes it `paid`
 * instead, and a payment still under way leaves it open.
 */
export async function closeInvoice(
  deps: Deps,
  row: InvoiceRow,
  to: 'cancelled' | 'expired',
  /** Inside the closing transaction: the request's answer (decision 0035). */
  record?: (tx: Tx, row: InvoiceRow) => Promise<void>,
): Promise<CloseOutcome> {
  if (isTerminal(row.status)) return { closed: false, row, reason: 'terminal' }
  // The session's cancel and a payment taken in commit on their own: an audited close rides
  // on the invoice's own transaction below (decision 0036).
  const early = await withoutRider(async (): Promise<CloseOutcome | undefined> => {
    if (row.session_seq === 0) return undefined
    const before = await paymentState(deps, row)
    if (before.paid)
      return { closed: false, row: await markPaid(deps, row, before.paid), reason: 'terminal' }
    if (before.inFlight) return { closed: false, row, reason: 'payment_in_progress' }
    if (row.session_id) await cancelSession(deps, row.merchant_id, row.session_id)
    const after = await paymentState(deps, row)
    if (after.paid)
      return { closed: false, row: await markPaid(deps, row, after.paid), reason: 'terminal' }
    if (after.inFlight) return { closed: false, row, reason: 'payment_in_progress' }
    return undefined
  })
  if (early) return early
  return transact(deps.db, async (tx): Promise<CloseOutcome> => {
    const current = await repo.lockInvoice(tx, row.merchant_id, row.id)
    if (!current) throw invoicesError('invoice_not_found')
    if (isTerminal(current.status)) return { closed: false, row: current, reason: 'terminal' }
    // A session minted after we looked (a buyer pressing Pay just now): look again later.
    if (current.session_seq !== row.session_seq) {
      return { closed: false, row: current, reason: 'payment_in_progress' }
    }
    const now = deps.clock.now()
    const updated = await repo.transitionInvoice(
      tx,
      current.id,
      current.status,
      to === 'cancelled'
        ? { status: 'cancelled', cancelled_at: now, updated_at: now }
        : { status: 'expired', expired_at: now, updated_at: now },
    )
    await emitInvoiceEvent(tx, updated, `invoice.${to}`, now)
    await record?.(tx, updated)
    return { closed: true, row: updated }
  })
}

function isPastExpiry(row: InvoiceRow, now: Date): boolean {
  return row.expires_at !== null && row.expires_at.getTime() <= now.getTime()
}

/**
 * The invoice as it stands now: paid when a session's payment was captured, expired when
 * its link expiry has passed (unless a payment is under way). Readers call this first.
 */
export async function refreshInvoice(deps: Deps, row: InvoiceRow): Promise<InvoiceRow> {
  if (isTerminal(row.status)) return row
  // Taking in what already happened is never the action a caller audits (decision 0036).
  return withoutRider(async () => {
    if (row.session_seq > 0) {
      const state = await paymentState(deps, row)
      if (state.paid) return markPaid(deps, row, state.paid)
    }
    if (isPastExpiry(row, deps.clock.now())) return (await closeInvoice(deps, row, 'expired')).row
    return row
  })
}

const SWEEP_BATCH = 200
/**
 * How far back the payment sweep looks: a session lives 30 minutes and an acquirer timeout
 * is resolved within minutes, so a payment lands well inside a day of its session. Older
 * sessions are still looked at by every read of the invoice and before it closes.
 */
export const PAYMENT_SWEEP_LOOKBACK_MS = 24 * 60 * 60 * 1000

/** The reconciler: open invoices with a recent session, checked for a captured payment. */
export async function reconcileInvoicePayments(deps: Deps): Promise<number> {
  const since = new Date(deps.clock.now().getTime() - PAYMENT_SWEEP_LOOKBACK_MS)
  let moved = 0
  let after: { mintedAt: Date; id: string } | undefined
  for (;;) {
    const rows = await repo.findOpenInvoicesWithSessions(deps.db, since, after, SWEEP_BATCH)
    for (const row of rows) {
      const state = await paymentState(deps, row)
      if (!state.paid) continue
      const updated = await markPaid(deps, row, state.paid)
      if (updated.payment_id === state.paid.id) moved++
    }
    const last = rows.at(-1)
    if (!last?.session_minted_at || rows.length < SWEEP_BATCH) return moved
    after = { mintedAt: last.session_minted_at, id: last.id }
  }
}

/** The reconciler: open invoices past their link expiry → expired (their session cancelled). */
export async function expireDueInvoices(deps: Deps): Promise<number> {
  const now = deps.clock.now()
  let moved = 0
  let after: { expiresAt: Date; id: string } | undefined
  for (;;) {
    const rows = await repo.findExpiredOpenInvoices(deps.db, now, after, SWEEP_BATCH)
    for (const row of rows) {
      const outcome = await closeInvoice(deps, row, 'expired')
      if (outcome.closed) moved++
    }
    const last = rows.at(-1)
    if (!last?.expires_at || rows.length < SWEEP_BATCH) return moved
    after = { expiresAt: last.expires_at, id: last.id }
  }
}
