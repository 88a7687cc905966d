import { hkdfSync, randomBytes } from 'node:crypto'
import type { Config } from '../../config.ts'
import type { Tx } from '../../database.ts'
import { decryptWithAny, encrypt, sha256Hex } from '../../platform/crypto.ts'
import { deriveRing, keyRing, ringKeys, type KeyRing } from '../../platform/key-rotation.ts'
import { recordEvent } from '../events/index.ts'
import { INVOICES, type InvoiceRow, type InvoiceStatus, type LineItem } from './invoices.table.ts'

// The invoice as use cases return it, the public link's bearer, and the outbox events.

export interface Invoice {
  id: string
  merchantId: string
  storeId: string
  customerId: string | null
  /** The public link's bearer (decrypted from the row). */
  publicHash: string
  status: InvoiceStatus
  amountMinor: number
  currency: 'TRY'
  lineItems: LineItem[]
  buyerEmail: string | null
  buyerName: string | null
  dueDate: Date | null
  expiresAt: Date | null
  notes: string | null
  metadata: Record<string, string>
  paymentId: string | null
  subscriptionId: string | null
  cycleNumber: number | null
  createdAt: Date
  sentAt: Date | null
  activatedAt: Date | null
  viewedAt: Date | null
  paidAt: Date | null
  expiredAt: Date | null
  cancelledAt: Date | null
}

export function isTerminal(status: InvoiceStatus): boolean {
  return INVOICES.isFinal(status)
}

// The public link. 128 random bits, base64url (22 characters). Looked up by its SHA-256, so
// a copy of the table holds no usable link; kept encrypted as well because the email that
// carries it is sent later than the invoice is created.

export function newPublicHash(): string {
  return randomBytes(16).toString('base64url')
}

export function publicHashDigest(publicHash: string): string {
  return sha256Hex(publicHash)
}

function hashKey(masterKey: Buffer): Buffer {
  return Buffer.from(
    hkdfSync('sha256', masterKey, Buffer.alloc(0), 'kurus/invoices/public-hash', 32),
  )
}

/** The keys bearers are sealed under: derived from the current, then the previous master keys. */
export function publicHashRing(config: Config): KeyRing {
  return deriveRing(keyRing(config), hashKey)
}

/** The bearer encrypted for its row (the invoice id is the additional data). */
export function sealPublicHash(config: Config, invoiceId: string, publicHash: string): string {
  return encrypt(hashKey(config.masterKey), publicHash, invoiceId)
}

/** Opens under the current master key or a previous one (a rotation in progress). */
export function openPublicHash(config: Config, row: InvoiceRow): string {
  return decryptWithAny(ringKeys(publicHashRing(config)), row.public_hash_enc, row.id).toString(
    'utf8',
  )
}

/** `{checkout_url}/invoice/<publicHash>`: the buyer's page. */
export function invoiceUrl(config: Config, publicHash: string): string {
  return `${config.checkoutUrl}/invoice/${publicHash}`
}

/** The checkout session's transactionId for the invoice's n-th session. */
export function sessionTransactionId(invoiceId: string, n: number): string {
  return `${invoiceId}:${n}`
}

export function invoiceRowToInvoice(config: Config, row: InvoiceRow): Invoice {
  return {
    id: row.id,
    merchantId: row.merchant_id,
    storeId: row.store_id,
    customerId: row.customer_id,
    publicHash: openPublicHash(config, row),
    status: row.status,
    amountMinor: row.amount_minor,
    currency: row.currency,
    lineItems: row.line_items,
    buyerEmail: row.buyer_email,
    buyerName: row.buyer_name,
    dueDate: row.due_date,
    expiresAt: row.expires_at,
    notes: row.notes,
    metadata: row.metadata,
    paymentId: row.payment_id,
    subscriptionId: row.subscription_id,
    cycleNumber: row.cycle_number,
    createdAt: row.created_at,
    sentAt: row.sent_at,
    activatedAt: row.activated_at,
    viewedAt: row.viewed_at,
    paidAt: row.paid_at,
    expiredAt: row.expired_at,
    cancelledAt: row.cancelled_at,
  }
}

export type InvoiceEventType =
  | 'invoice.created'
  | 'invoice.sent'
  | 'invoice.activated'
  | 'invoice.viewed'
  | 'invoice.paid'
  | 'invoice.expired'
  | 'invoice.cancelled'

/** Records the event in the outbox; call it in the transaction that made the change. */
export async function emitInvoiceEvent(
  tx: Tx,
  row: InvoiceRow,
  type: InvoiceEventType,
  at: Date,
): Promise<void> {
  await recordEvent(tx, {
    merchantId: row.merchant_id,
    storeId: row.store_id,
    type,
    resourceType: 'invoice',
    resourceId: row.id,
    data: {
      id: row.id,
      storeId: row.store_id,
      customerId: row.customer_id,
      status: row.status,
      amountMinor: row.amount_minor,
      currency: row.currency,
      buyerEmail: row.buyer_email,
      dueDate: row.due_date?.toISOString() ?? null,
      expiresAt: row.expires_at?.toISOString() ?? null,
      paymentId: row.payment_id,
      subscriptionId: row.subscription_id,
      cycleNumber: row.cycle_number,
      metadata: row.metadata,
    },
    at,
  })
}
