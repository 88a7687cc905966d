import type { Db, Tx } from '../../database.ts'
import type { NewPaymentLink, PaymentLinkRow, PaymentLinkUpdate } from './payment-links.table.ts'

// All of the payment_links table's SQL.

export async function insertLink(db: Db | Tx, row: NewPaymentLink): Promise<PaymentLinkRow> {
  return db.insertInto('payment_links').values(row).returningAll().executeTakeFirstOrThrow()
}

export function findLinkById(
  db: Db,
  merchantId: string,
  id: string,
): Promise<PaymentLinkRow | undefined> {
  return db
    .selectFrom('payment_links')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .where('id', '=', id)
    .executeTakeFirst()
}

/** The public page's lookup: the hash is the bearer, across merchants. */
export function findLinkByHash(db: Db, publicHash: string): Promise<PaymentLinkRow | undefined> {
  return db
    .selectFrom('payment_links')
    .selectAll()
    .where('public_hash', '=', publicHash)
    .executeTakeFirst()
}

export function lockLinkById(tx: Tx, id: string): Promise<PaymentLinkRow | undefined> {
  return tx
    .selectFrom('payment_links')
    .selectAll()
    .where('id', '=', id)
    .forUpdate()
    .executeTakeFirst()
}

export function updateLink(tx: Tx, id: string, set: PaymentLinkUpdate): Promise<PaymentLinkRow> {
  return tx
    .updateTable('payment_links')
    .set(set)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow()
}

export interface LinkPageQuery {
  merchantId: string
  before: { createdAt: Date; id: string } | undefined
  limit: number
}

/** Newest first, keyset on (created_at, id): payment_links_merchant_created_idx. */
export function findLinkPage(db: Db, q: LinkPageQuery): Promise<PaymentLinkRow[]> {
  let query = db.selectFrom('payment_links').selectAll().where('merchant_id', '=', q.merchantId)
  const { before } = q
  if (before) {
    query = query.where((eb) =>
      eb(eb.refTuple('created_at', 'id'), '<', eb.tuple(before.createdAt, before.id)),
    )
  }
  return query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(q.limit).execute()
}
