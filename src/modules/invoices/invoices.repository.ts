import type { Db, Tx } from '../../database.ts'
import { assert } from '../../platform/assert.ts'
import {
  INVOICES,
  type InvoicePatch,
  type InvoiceRow,
  type InvoiceStatus,
  type NewInvoice,
} from './invoices.table.ts'

/** Open statuses in which the buyer may pay (and so a checkout session may exist). */
const PAYABLE_STATUSES = INVOICES.sourcesOf('paid')

export async function insertInvoice(db: Db | Tx, row: NewInvoice): Promise<void> {
  await db.insertInto('invoices').values(row).execute()
}

export function findInvoiceById(
  db: Db,
  merchantId: string,
  id: string,
): Promise<InvoiceRow | undefined> {
  return db
    .selectFrom('invoices')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .where('id', '=', id)
    .executeTakeFirst()
}

/** For background work that holds only the invoice id (the email job). */
export function findInvoiceByIdUnscoped(db: Db, id: string): Promise<InvoiceRow | undefined> {
  return db.selectFrom('invoices').selectAll().where('id', '=', id).executeTakeFirst()
}

/** The public link: the bearer's digest is the key, across merchants. */
export function findInvoiceByHashDigest(db: Db, digest: string): Promise<InvoiceRow | undefined> {
  return db
    .selectFrom('invoices')
    .selectAll()
    .where('public_hash_sha256', '=', digest)
    .executeTakeFirst()
}

export function findInvoiceBySubscriptionCycle(
  db: Db,
  merchantId: string,
  subscriptionId: string,
  cycleNumber: number,
): Promise<InvoiceRow | undefined> {
  return db
    .selectFrom('invoices')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .where('subscription_id', '=', subscriptionId)
    .where('cycle_number', '=', cycleNumber)
    .executeTakeFirst()
}

export function lockInvoice(
  tx: Tx,
  merchantId: string,
  id: string,
): Promise<InvoiceRow | undefined> {
  return tx
    .selectFrom('invoices')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .where('id', '=', id)
    .forUpdate()
    .executeTakeFirst()
}

/**
 * The invoice state machine's only status write: conditional on the status the caller read
 * under the row's lock and on INVOICES allowing the move.
 */
export async function transitionInvoice(
  tx: Tx,
  id: string,
  from: InvoiceStatus,
  patch: InvoicePatch & { status: InvoiceStatus },
): Promise<InvoiceRow> {
  const row = await tx
    .updateTable('invoices')
    .set(patch)
    .where('id', '=', id)
    .where('status', 'in', INVOICES.guard(patch.status, [from]))
    .returningAll()
    .executeTakeFirst()
  assert(row, `invoice ${id} left ${from} under its lock`)
  return row
}

/**
 * Records that checkout session n was minted. Never moves backwards: a slow writer of an
 * older n changes nothing once a newer one is recorded.
 */
export async function recordSession(
  db: Db,
  id: string,
  seq: number,
  session: { id: string; createdAt: Date },
) {
  await db
    .updateTable('invoices')
    .set({ session_seq: seq, session_id: session.id, session_minted_at: session.createdAt })
    .where('id', '=', id)
    .where('session_seq', '<=', seq)
    .execute()
}

/**
 * Claims the invoice's due email for one delivery attempt: the due time moves to the end of
 * the lease, so no other process takes it meanwhile (and a crashed attempt is retried then).
 */
export function claimEmail(
  db: Db,
  id: string,
  now: Date,
  leaseUntil: Date,
): Promise<InvoiceRow | undefined> {
  return db
    .updateTable('invoices')
    .set({ email_next_at: leaseUntil })
    .where('id', '=', id)
    .where('email_next_at', '<=', now)
    .returningAll()
    .executeTakeFirst()
}

/** Invoices whose email is due, oldest first. */
export async function findDueEmails(db: Db, now: Date, limit: number): Promise<string[]> {
  const rows = await db
    .selectFrom('invoices')
    .select('id')
    .where('email_next_at', '<=', now)
    .orderBy('email_next_at')
    .orderBy('id')
    .limit(limit)
    .execute()
  return rows.map((r) => r.id)
}

/** The email went out, or no longer should: nothing is due any more. */
export async function finishEmail(db: Db, id: string, sentAt: Date | null): Promise<void> {
  await db
    .updateTable('invoices')
    .set({ email_next_at: null, ...(sentAt ? { email_sent_at: sentAt } : {}) })
    .where('id', '=', id)
    .execute()
}

/** A failed attempt: counted, and the next one due at `nextAt` (null: given up). */
export async function recordEmailFailure(
  db: Db,
  id: string,
  attempts: number,
  nextAt: Date | null,
): Promise<void> {
  await db
    .updateTable('invoices')
    .set({ email_attempts: attempts, email_next_at: nextAt })
    .where('id', '=', id)
    .execute()
}

export interface InvoicePageQuery {
  merchantId: string
  storeId: string | undefined
  status: InvoiceStatus | undefined
  before: { createdAt: Date; id: string } | undefined
  limit: number
}

/** Newest first; keyset on (created_at, id), served by invoices_list_idx. */
export function findInvoicePage(db: Db, q: InvoicePageQuery): Promise<InvoiceRow[]> {
  let query = db.selectFrom('invoices').selectAll().where('merchant_id', '=', q.merchantId)
  const { storeId, status, before } = q
  if (storeId !== undefined) query = query.where('store_id', '=', storeId)
  if (status !== undefined) query = query.where('status', '=', status)
  if (before) {
    query = query.where((eb) =>
      eb(eb.refTuple('created_at', 'id'), '<', eb.tuple(before.createdAt, before.id)),
    )
  }
  return query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(q.limit).execute()
}

/**
 * Open, payable invoices whose latest checkout session was minted since `since`, in
 * (session_minted_at, id) order after `after` (the payment sweep's keyset).
 */
export function findOpenInvoicesWithSessions(
  db: Db,
  since: Date,
  after: { mintedAt: Date; id: string } | undefined,
  limit: number,
): Promise<InvoiceRow[]> {
  let query = db
    .selectFrom('invoices')
    .selectAll()
    .where('status', 'in', PAYABLE_STATUSES)
    .where('session_seq', '>', 0)
    .where('session_minted_at', '>=', since)
  if (after) {
    query = query.where((eb) =>
      eb(eb.refTuple('session_minted_at', 'id'), '>', eb.tuple(after.mintedAt, after.id)),
    )
  }
  return query.orderBy('session_minted_at').orderBy('id').limit(limit).execute()
}

/** Open invoices whose link expiry has passed, soonest first (the expiry sweep). */
export function findExpiredOpenInvoices(
  db: Db,
  now: Date,
  after: { expiresAt: Date; id: string } | undefined,
  limit: number,
): Promise<InvoiceRow[]> {
  let query = db
    .selectFrom('invoices')
    .selectAll()
    .where('status', 'in', INVOICES.sourcesOf('expired'))
    .where('expires_at', 'is not', null)
    .where('expires_at', '<=', now)
  if (after) {
    query = query.where((eb) =>
      eb(eb.refTuple('expires_at', 'id'), '>', eb.tuple(after.expiresAt, after.id)),
    )
  }
  return query.orderBy('expires_at').orderBy('id').limit(limit).execute()
}

// ---- master-key rotation: every invoice's sealed bearer, in id order

export function findPublicHashesAfter(
  db: Db,
  afterId: string | null,
  limit: number,
): Promise<Pick<InvoiceRow, 'id' | 'public_hash_enc'>[]> {
  let query = db.selectFrom('invoices').select(['id', 'public_hash_enc'])
  if (afterId !== null) query = query.where('id', '>', afterId)
  return query.orderBy('id').limit(limit).execute()
}

export function findPublicHash(
  db: Db,
  id: string,
): Promise<Pick<InvoiceRow, 'id' | 'public_hash_enc'> | undefined> {
  return db
    .selectFrom('invoices')
    .select(['id', 'public_hash_enc'])
    .where('id', '=', id)
    .executeTakeFirst()
}

/** Conditional: false if the sealed bearer changed since `from` was read. */
export async function updatePublicHashIfUnchanged(
  db: Db,
  id: string,
  from: string,
  to: string,
): Promise<boolean> {
  const result = await db
    .updateTable('invoices')
    .set({ public_hash_enc: to })
    .where('id', '=', id)
    .where('public_hash_enc', '=', from)
    .executeTakeFirst()
  return result.numUpdatedRows === 1n
}
