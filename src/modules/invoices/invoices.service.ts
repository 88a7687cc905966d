import type { Deps, Tx } from '../../database.ts'
import { assert } from '../../platform/assert.ts'
import { byCreatedAt, keysetCursor } from '../../platform/cursor.ts'
import { isUniqueViolation, transact } from '../../platform/db/transaction.ts'
import { AppError, validationError, type FieldIssue } from '../../platform/errors.ts'
import type { RecordAnswer } from '../../platform/http/idempotent-answer.ts'
import { metadataIssues } from '../../platform/metadata.ts'
import { newId } from '../../platform/ids.ts'
import {
  reencryptSealedRows,
  type ReencryptionReport,
  type SealedRow,
} from '../../platform/key-rotation.ts'
import { assertMinor } from '../../platform/money.ts'
import { assertCustomerExists, getCustomer } from '../customers/index.ts'
import { getStore } from '../merchants/index.ts'
import { deliverInvoiceEmail } from './invoice-email.ts'
import { closeInvoice, refreshInvoice } from './invoice-sync.service.ts'
import {
  emitInvoiceEvent,
  invoiceRowToInvoice,
  newPublicHash,
  publicHashDigest,
  publicHashRing,
  sealPublicHash,
  type Invoice,
} from './invoice-view.ts'
import { invoicesError } from './invoices.errors.ts'
import * as repo from './invoices.repository.ts'
import {
  INVOICES,
  type InvoiceRow,
  type InvoiceStatus,
  type LineItem,
  type NewInvoice,
} from './invoices.table.ts'

// The list's cursor: signed with a key of its own, names its merchant.
const INVOICES_CURSOR = keysetCursor('invoices', 'kurus/invoices/list')

// The merchant's use cases. Every state change locks the row, re-checks its status and
// writes the new state with its outbox event in one transaction. Paid detection and expiry
// live in invoice-sync.service.ts; the buyer's side in public.service.ts.

export const AMOUNT_MIN_MINOR = 100
export const AMOUNT_MAX_MINOR = 10_000_000_000
export const INVOICES_LIMIT_MAX = 100

export interface CreateInvoiceInput {
  storeId: string
  customerId?: string | undefined
  amountMinor: number
  currency: 'TRY'
  lineItems: LineItem[]
  buyerEmail?: string | undefined
  buyerName?: string | undefined
  dueDate?: Date | undefined
  expiresAt?: Date | undefined
  notes?: string | undefined
  metadata?: Record<string, string> | undefined
}

/**
 * The money rules, all reported at once: each lineTotalMinor is qty × unitPriceMinor and
 * amountMinor is the sum of the line totals. BigInt, so no product is ever rounded.
 */
export function checkAmounts(input: {
  amountMinor: number
  lineItems: readonly LineItem[]
}): FieldIssue[] {
  const issues: FieldIssue[] = []
  let sum = 0n
  for (const [i, line] of input.lineItems.entries()) {
    const expected = BigInt(line.qty) * BigInt(line.unitPriceMinor)
    if (BigInt(line.lineTotalMinor) !== expected) {
      issues.push({
        field: `lineItems[${i}].lineTotalMinor`,
        reason: `must equal qty × unitPriceMinor (${expected})`,
      })
    }
    sum += BigInt(line.lineTotalMinor)
  }
  if (BigInt(input.amountMinor) !== sum) {
    issues.push({ field: 'amountMinor', reason: `must equal the sum of the line totals (${sum})` })
  }
  if (input.amountMinor < AMOUNT_MIN_MINOR || input.amountMinor > AMOUNT_MAX_MINOR) {
    issues.push({
      field: 'amountMinor',
      reason: `must be between ${AMOUNT_MIN_MINOR} and ${AMOUNT_MAX_MINOR} kuruş`,
    })
  }
  return issues
}

function throwIssues(issues: FieldIssue[]): void {
  const [first] = issues
  if (!first) return
  const message = issues.map((i) => `${i.field}: ${i.reason}`).join('; ')
  throw new AppError('SVC-VAL-3001', 400, message, issues)
}

/** Creates an invoice in `draft`. The returned publicHash is the buyer's link. */
export async function createInvoice(
  deps: Deps,
  merchantId: string,
  input: CreateInvoiceInput,
  record?: RecordAnswer<Tx, Invoice>,
): Promise<Invoice> {
  const now = deps.clock.now()
  const issues = checkAmounts(input)
  if (input.expiresAt && input.expiresAt.getTime() <= now.getTime()) {
    issues.push({ field: 'expiresAt', reason: 'must be in the future' })
  }
  issues.push(...metadataIssues(input.metadata ?? {}))
  throwIssues(issues)
  await getStore(deps, merchantId, input.storeId)
  if (input.customerId !== undefined) {
    try {
      await assertCustomerExists(deps, merchantId, input.customerId)
    } catch {
      throw validationError('customerId', 'is not a customer of this merchant')
    }
  }
  const id = newId('inv')
  const publicHash = newPublicHash()
  const row = await transact(deps.db, async (tx) => {
    await repo.insertInvoice(tx, {
      ...baseRow(deps, id, merchantId, input.storeId, publicHash, now),
      customer_id: input.customerId ?? null,
      status: 'draft',
      amount_minor: input.amountMinor,
      line_items: JSON.stringify(input.lineItems),
      buyer_email: input.buyerEmail ?? null,
      buyer_name: input.buyerName ?? null,
      due_date: input.dueDate ?? null,
      expires_at: input.expiresAt ?? null,
      notes: input.notes ?? null,
      metadata: JSON.stringify(input.metadata ?? {}),
    })
    const inserted = await repo.lockInvoice(tx, merchantId, id)
    assert(inserted !== undefined, 'inserted invoice is readable')
    await emitInvoiceEvent(tx, inserted, 'invoice.created', now)
    await record?.(tx, invoiceRowToInvoice(deps.config, inserted))
    return inserted
  })
  return invoiceRowToInvoice(deps.config, row)
}

function baseRow(
  deps: Deps,
  id: string,
  merchantId: string,
  storeId: string,
  publicHash: string,
  now: Date,
): Omit<NewInvoice, 'status' | 'amount_minor' | 'line_items'> {
  return {
    id,
    merchant_id: merchantId,
    store_id: storeId,
    public_hash_sha256: publicHashDigest(publicHash),
    public_hash_enc: sealPublicHash(deps.config, id, publicHash),
    currency: 'TRY',
    created_at: now,
    updated_at: now,
  }
}

async function loadRow(deps: Deps, merchantId: string, id: string): Promise<InvoiceRow> {
  const row = await repo.findInvoiceById(deps.db, merchantId, id)
  if (!row) throw invoicesError('invoice_not_found')
  return row
}

/** The invoice, with a captured payment or a passed expiry taken in first. */
export async function getInvoice(deps: Deps, merchantId: string, id: string): Promise<Invoice> {
  const row = await refreshInvoice(deps, await loadRow(deps, merchantId, id))
  return invoiceRowToInvoice(deps.config, row)
}

/** One locked state change from `draft`, after the lazy checks (an expired draft is 409). */
async function changeDraft(
  deps: Deps,
  merchantId: string,
  id: string,
  refuse: 'not_sendable' | 'not_activatable',
  change: (tx: Tx, row: InvoiceRow, now: Date) => Promise<InvoiceRow>,
  record?: RecordAnswer<Tx, Invoice>,
): Promise<Invoice> {
  await refreshInvoice(deps, await loadRow(deps, merchantId, id))
  const row = await transact(deps.db, async (tx) => {
    const current = await repo.lockInvoice(tx, merchantId, id)
    if (!current) throw invoicesError('invoice_not_found')
    const now = deps.clock.now()
    if (!INVOICES.can(current.status, refuse === 'not_sendable' ? 'sent' : 'activated')) {
      throw invoicesError(refuse, `${invoicesError(refuse).message}; it is ${current.status}`)
    }
    if (current.expires_at && current.expires_at.getTime() <= now.getTime()) {
      throw invoicesError(refuse, `${invoicesError(refuse).message}; its link has expired`)
    }
    const changed = await change(tx, current, now)
    await record?.(tx, invoiceRowToInvoice(deps.config, changed))
    return changed
  })
  return invoiceRowToInvoice(deps.config, row)
}

/**
 * draft → sent: the buyer is emailed the link. The email is owed from the same transaction
 * (email_next_at, the invoice's outbox) and delivered right after it commits; a failing
 * SMTP server does not fail the request: the `invoices.send_emails` reconciler retries.
 */
export async function sendInvoice(
  deps: Deps,
  merchantId: string,
  id: string,
  record?: RecordAnswer<Tx, Invoice>,
): Promise<Invoice> {
  const invoice = await changeDraft(
    deps,
    merchantId,
    id,
    'not_sendable',
    async (tx, current, now) => {
      if (!current.buyer_email) {
        throw validationError('buyerEmail', 'is required to send the invoice')
      }
      const updated = await repo.transitionInvoice(tx, current.id, current.status, {
        status: 'sent',
        sent_at: now,
        email_next_at: now,
        updated_at: now,
      })
      await emitInvoiceEvent(tx, updated, 'invoice.sent', now)
      return updated
    },
    record,
  )
  await deliverSoon(deps, invoice.id)
  return invoice
}

/** How long `send` waits for the SMTP hand-off before it answers anyway. */
const SEND_WAIT_MS = 5_000

/**
 * Delivers the email now, but answers the request after SEND_WAIT_MS at most: a slow SMTP
 * server finishes in the background (its claim keeps the reconciler off it meanwhile).
 */
async function deliverSoon(deps: Deps, invoiceId: string): Promise<void> {
  const delivery = deliverInvoiceEmail(deps, invoiceId).catch((error: unknown) => {
    deps.log.error({ err: error, invoiceId }, 'invoice email delivery failed')
    return false
  })
  let timer: NodeJS.Timeout | undefined
  const waited = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, SEND_WAIT_MS)
  })
  try {
    await Promise.race([delivery, waited])
  } finally {
    clearTimeout(timer)
  }
}

/** draft → activated: the link works, no email is sent (the merchant shares it). */
export async function activateInvoice(
  deps: Deps,
  merchantId: string,
  id: string,
  record?: RecordAnswer<Tx, Invoice>,
): Promise<Invoice> {
  return changeDraft(
    deps,
    merchantId,
    id,
    'not_activatable',
    async (tx, current, now) => {
      const updated = await repo.transitionInvoice(tx, current.id, current.status, {
        status: 'activated',
        activated_at: now,
        updated_at: now,
      })
      await emitInvoiceEvent(tx, updated, 'invoice.activated', now)
      return updated
    },
    record,
  )
}

/**
 * Any open status → cancelled; its open checkout session is cancelled with it. A payment
 * captured meanwhile wins (the invoice is paid: 409); one still under way is 409 too.
 */
export async function cancelInvoice(
  deps: Deps,
  merchantId: string,
  id: string,
  record?: RecordAnswer<Tx, Invoice>,
): Promise<Invoice> {
  const row = await refreshInvoice(deps, await loadRow(deps, merchantId, id))
  const outcome = await closeInvoice(
    deps,
    row,
    'cancelled',
    record && ((tx, closed) => record(tx, invoiceRowToInvoice(deps.config, closed))),
  )
  if (!outcome.closed) {
    if (outcome.reason === 'payment_in_progress') throw invoicesError('payment_in_progress')
    throw invoicesError(
      'not_cancellable',
      `${invoicesError('not_cancellable').message}; it is ${outcome.row.status}`,
    )
  }
  return invoiceRowToInvoice(deps.config, outcome.row)
}

// The list. Its cursor is signed with a key of its own and names its merchant.

export interface InvoiceListQuery {
  storeId?: string | undefined
  status?: InvoiceStatus | undefined
  limit: number
  cursor?: string | undefined
}

/** The merchant's invoices, newest first, in pages of `limit` (keyset, signed cursor). */
export async function listInvoices(
  deps: Deps,
  merchantId: string,
  q: InvoiceListQuery,
): Promise<{ items: Invoice[]; nextCursor: string | null }> {
  assert(Number.isInteger(q.limit) && q.limit >= 1 && q.limit <= INVOICES_LIMIT_MAX, 'limit')
  return INVOICES_CURSOR.page(deps.config.masterKey, merchantId, q, {
    // A list: the read pool (Deps.readDb).
    fetch: (before, limit) =>
      repo.findInvoicePage(deps.readDb, {
        merchantId,
        storeId: q.storeId,
        status: q.status,
        before,
        limit,
      }),
    view: (rows) => rows.map((r) => invoiceRowToInvoice(deps.config, r)),
    position: byCreatedAt,
  })
}

export interface PaidRenewalInvoiceInput {
  merchantId: string
  storeId: string
  customerId: string
  amountMinor: number
  description: string
  paymentId: string
  subscriptionId: string
  cycleNumber: number
}

/**
 * A subscription renewal's invoice (`generateInvoices`), created directly as `paid` with
 * one line item. One per (subscription, cycle): a repeat returns the existing invoice. The
 * buyer's name and email come from the customer when it still exists.
 */
export async function createPaidRenewalInvoice(
  deps: Deps,
  input: PaidRenewalInvoiceInput,
): Promise<Invoice> {
  assertMinor(input.amountMinor, 'amountMinor')
  assert(input.amountMinor > 0, 'a renewal invoice has a positive amount')
  const existing = await repo.findInvoiceBySubscriptionCycle(
    deps.db,
    input.merchantId,
    input.subscriptionId,
    input.cycleNumber,
  )
  if (existing) return invoiceRowToInvoice(deps.config, existing)
  const customer = await getCustomer(deps, input.merchantId, input.customerId).catch(
    () => undefined,
  )
  const now = deps.clock.now()
  const id = newId('inv')
  const publicHash = newPublicHash()
  const name = input.description.trim() || `${input.subscriptionId} #${input.cycleNumber}`
  try {
    const row = await transact(deps.db, async (tx) => {
      await repo.insertInvoice(tx, {
        ...baseRow(deps, id, input.merchantId, input.storeId, publicHash, now),
        customer_id: input.customerId,
        status: 'paid',
        amount_minor: input.amountMinor,
        line_items: JSON.stringify([
          { name, qty: 1, unitPriceMinor: input.amountMinor, lineTotalMinor: input.amountMinor },
        ] satisfies LineItem[]),
        buyer_email: customer?.email ?? null,
        buyer_name: customer?.name ?? null,
        payment_id: input.paymentId,
        subscription_id: input.subscriptionId,
        cycle_number: input.cycleNumber,
        paid_at: now,
      })
      const inserted = await repo.lockInvoice(tx, input.merchantId, id)
      assert(inserted !== undefined, 'inserted invoice is readable')
      await emitInvoiceEvent(tx, inserted, 'invoice.created', now)
      await emitInvoiceEvent(tx, inserted, 'invoice.paid', now)
      return inserted
    })
    return invoiceRowToInvoice(deps.config, row)
  } catch (error) {
    if (!isUniqueViolation(error)) throw error
    // A concurrent call for the same cycle won: answer with its invoice.
    const winner = await repo.findInvoiceBySubscriptionCycle(
      deps.db,
      input.merchantId,
      input.subscriptionId,
      input.cycleNumber,
    )
    if (!winner) throw error
    return invoiceRowToInvoice(deps.config, winner)
  }
}

function publicHashRow(row: { id: string; public_hash_enc: string }): SealedRow {
  return { key: row.id, fields: [{ envelope: row.public_hash_enc, aad: row.id }] }
}

/**
 * Master-key rotation: re-seals every invoice's public-link bearer still under a key derived
 * from a previous master key under the current one. The bearer itself (and so its digest and
 * the buyer's link) does not change. Idempotent, restartable, conditional per row.
 */
export async function reencryptInvoicePublicHashes(
  deps: Pick<Deps, 'db' | 'config'>,
  batchSize = 500,
): Promise<ReencryptionReport> {
  return reencryptSealedRows(
    publicHashRing(deps.config),
    {
      page: async (after, limit) =>
        (await repo.findPublicHashesAfter(deps.db, after, limit)).map(publicHashRow),
      reload: async (id) => {
        const row = await repo.findPublicHash(deps.db, id)
        return row && publicHashRow(row)
      },
      update: async (row, [to]) => {
        const from = row.fields[0]?.envelope
        if (typeof from !== 'string' || typeof to !== 'string') return false
        return repo.updatePublicHashIfUnchanged(deps.db, row.key, from, to)
      },
    },
    batchSize,
  )
}
