import type { Deps } from '../../database.ts'
import { AssertionError } from '../../platform/assert.ts'
import { transact } from '../../platform/db/transaction.ts'
import { assertCustomerExists } from '../customers/index.ts'
import { assertKycApproved, getMerchant } from '../merchants/index.ts'
import { cancelSession, createSession, getSessionById, type Session } from '../payments/index.ts'
import { paymentState, refreshInvoice } from './invoice-sync.service.ts'
import { renderInvoicePdf } from './invoice-pdf.ts'
import {
  emitInvoiceEvent,
  invoiceRowToInvoice,
  invoiceUrl,
  isTerminal,
  publicHashDigest,
  sessionTransactionId,
  type Invoice,
} from './invoice-view.ts'
import { invoicesError } from './invoices.errors.ts'
import * as repo from './invoices.repository.ts'
import type { InvoiceRow } from './invoices.table.ts'

// The buyer's side. The publicHash in the path is the bearer: looked up by its SHA-256
// across merchants, so a wrong hash is a plain 404 that tells nothing. A draft is not
// published yet: its link answers 404 until the merchant sends or activates it.

export interface PublicInvoice {
  merchantName: string
  invoice: Invoice
}

async function rowByHash(deps: Deps, publicHash: string): Promise<InvoiceRow> {
  const row = await repo.findInvoiceByHashDigest(deps.db, publicHashDigest(publicHash))
  if (!row || row.status === 'draft') throw invoicesError('invoice_not_found')
  return row
}

/**
 * What the buyer sees (the public view and the hosted page). A captured payment or a
 * passed expiry is taken in first; the first read of a sent or activated invoice moves it
 * to `viewed`.
 */
export async function viewInvoice(deps: Deps, publicHash: string): Promise<PublicInvoice> {
  let row = await refreshInvoice(deps, await rowByHash(deps, publicHash))
  if (row.status === 'sent' || row.status === 'activated') {
    row = await transact(deps.db, async (tx) => {
      const current = await repo.lockInvoice(tx, row.merchant_id, row.id)
      if (!current) throw invoicesError('invoice_not_found')
      if (current.status !== 'sent' && current.status !== 'activated') return current
      const now = deps.clock.now()
      const updated = await repo.transitionInvoice(tx, current.id, current.status, {
        status: 'viewed',
        viewed_at: now,
        updated_at: now,
      })
      await emitInvoiceEvent(tx, updated, 'invoice.viewed', now)
      return updated
    })
  }
  const merchant = await getMerchant(deps, row.merchant_id)
  return { merchantName: merchant.name, invoice: invoiceRowToInvoice(deps.config, row) }
}

async function liveCustomerId(deps: Deps, row: InvoiceRow): Promise<string | undefined> {
  if (!row.customer_id) return undefined
  try {
    await assertCustomerExists(deps, row.merchant_id, row.customer_id)
    return row.customer_id
  } catch {
    return undefined
  }
}

function sessionDescription(row: InvoiceRow): string {
  const names = row.line_items.map((l) => l.name).join(', ')
  const text = `${row.id}: ${names}`
  return text.length > 200 ? `${text.slice(0, 199)}…` : text
}

/**
 * The checkout session that pays the invoice, made on first use: session n is
 * `<invoiceId>:<n>` and returns to the invoice page. While it is active it is handed out
 * again (and the session's transactionId fence makes concurrent calls share it); once it
 * has ended without a payment, session n + 1 is made. Needs the merchant's KYC approved.
 */
export async function payInvoice(deps: Deps, publicHash: string): Promise<Session> {
  let row = await refreshInvoice(deps, await rowByHash(deps, publicHash))
  if (row.status !== 'sent' && row.status !== 'activated' && row.status !== 'viewed') {
    throw invoicesError('not_payable', `this invoice can no longer be paid; it is ${row.status}`)
  }
  await assertKycApproved(deps, row.merchant_id)
  if (row.session_id) {
    const open = await getSessionById(deps, row.session_id)
    if (open?.status === 'active') return open
    if ((await paymentState(deps, row)).inFlight) throw invoicesError('payment_in_progress')
  }
  // Normally one round. More only when session n was made but its number not recorded
  // (a crash in between): the fence then hands back that ended session, so n + 1 is tried.
  const customerId = await liveCustomerId(deps, row)
  for (let round = 0; round < 3; round++) {
    const n = row.session_seq + 1
    const { session } = await createSession(
      deps,
      { merchantId: row.merchant_id, storeId: row.store_id },
      {
        transactionId: sessionTransactionId(row.id, n),
        amount: row.amount_minor,
        currency: 'TRY',
        description: sessionDescription(row),
        returnUrl: invoiceUrl(deps.config, publicHash),
        // The customer (save-card at checkout), unless the merchant has deleted it since.
        ...(customerId ? { customerId } : {}),
        metadata: { ...row.metadata, invoiceId: row.id },
      },
    )
    await repo.recordSession(deps.db, row.id, n, session)
    const reloaded = await repo.findInvoiceByIdUnscoped(deps.db, row.id)
    if (!reloaded) throw invoicesError('invoice_not_found')
    // Looked at again now that session n is recorded: the invoice may have been cancelled
    // or expired meanwhile, or (after a crash) session n may be an old one that was paid.
    const current = await refreshInvoice(deps, reloaded)
    if (isTerminal(current.status)) {
      if (session.status === 'active') await cancelSession(deps, current.merchant_id, session.id)
      throw invoicesError(
        'not_payable',
        `this invoice can no longer be paid; it is ${current.status}`,
      )
    }
    if (session.status === 'active') return session
    if ((await paymentState(deps, current)).inFlight) throw invoicesError('payment_in_progress')
    row = current
  }
  throw new AssertionError('no invoice checkout session could be made in three rounds')
}

/** The invoice's PDF for its buyer. A read only: it changes no status. */
export async function publicInvoicePdf(deps: Deps, publicHash: string): Promise<Buffer> {
  const row = await rowByHash(deps, publicHash)
  const merchant = await getMerchant(deps, row.merchant_id)
  return renderInvoicePdf({
    invoice: invoiceRowToInvoice(deps.config, row),
    merchantName: merchant.name,
    payUrl: invoiceUrl(deps.config, publicHash),
    generatedAt: deps.clock.now(),
  })
}

/** The merchant's copy of the PDF (signed API); a read only, as the buyer's. */
export async function merchantInvoicePdf(
  deps: Deps,
  merchantId: string,
  id: string,
): Promise<{ invoiceId: string; pdf: Buffer }> {
  const row = await repo.findInvoiceById(deps.db, merchantId, id)
  if (!row) throw invoicesError('invoice_not_found')
  const invoice = invoiceRowToInvoice(deps.config, row)
  const merchant = await getMerchant(deps, merchantId)
  const pdf = await renderInvoicePdf({
    invoice,
    merchantName: merchant.name,
    payUrl: invoiceUrl(deps.config, invoice.publicHash),
    generatedAt: deps.clock.now(),
  })
  return { invoiceId: invoice.id, pdf }
}
