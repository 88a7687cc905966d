import type { Updateable } from 'kysely'
import type { Db, Tx } from '../../database.ts'
import type {
  CustomerCardRow,
  CustomerRow,
  CustomersTable,
  NewCustomer,
  NewCustomerCard,
} from './customers.table.ts'

// All of the customers module's SQL. Every lookup names the merchant (tenancy) and skips
// soft-deleted customers and detached cards unless the name says otherwise.

/** The partial unique indexes of migration 0050, by the field whose uniqueness they keep. */
export const UNIQUE_EXTERNAL_ID = 'customers_external_id_key'
export const UNIQUE_EMAIL = 'customers_email_key'

// Customers

export async function insertCustomer(tx: Tx, row: NewCustomer): Promise<void> {
  await tx.insertInto('customers').values(row).execute()
}

export function findLiveCustomerById(
  db: Db,
  merchantId: string,
  id: string,
): Promise<CustomerRow | undefined> {
  return db
    .selectFrom('customers')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .where('id', '=', id)
    .where('deleted_at', 'is', null)
    .executeTakeFirst()
}

/**
 * FOR UPDATE on the customer row: every change to a customer or to its cards takes it first,
 * so writers of one customer (e.g. two default-card switches) run one after the other.
 */
export function lockLiveCustomerById(
  tx: Tx,
  merchantId: string,
  id: string,
): Promise<CustomerRow | undefined> {
  return tx
    .selectFrom('customers')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .where('id', '=', id)
    .where('deleted_at', 'is', null)
    .forUpdate()
    .executeTakeFirst()
}

export async function updateCustomer(
  tx: Tx,
  id: string,
  changes: Updateable<CustomersTable>,
): Promise<CustomerRow> {
  return tx
    .updateTable('customers')
    .set(changes)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow()
}

export interface CustomerPageQuery {
  merchantId: string
  email: string | undefined
  phone: string | undefined
  /** Keyset position: rows strictly older than this (created_at, id). */
  before: { createdAt: Date; id: string } | undefined
  limit: number
}

/** Newest first; keyset on (created_at, id), served by customers_list_idx. */
export function findCustomerPage(db: Db, q: CustomerPageQuery): Promise<CustomerRow[]> {
  let query = db
    .selectFrom('customers')
    .selectAll()
    .where('merchant_id', '=', q.merchantId)
    .where('deleted_at', 'is', null)
  const { email, phone, before } = q
  // lower(email) matches the expression of customers_email_key, which serves this filter.
  if (email !== undefined) {
    query = query.where((eb) => eb(eb.fn('lower', ['email']), '=', email.toLowerCase()))
  }
  if (phone !== undefined) query = query.where('phone', '=', phone)
  if (before) {
    query = query.where((eb) =>
      eb(eb.refTuple('created_at', 'id'), '<', eb.tuple(before.createdAt, before.id)),
    )
  }
  return query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(q.limit).execute()
}

/** Email (and id) of the merchant's customers among `ids`, deleted ones included. */
export function findCustomerEmails(
  db: Db,
  merchantId: string,
  ids: readonly string[],
): Promise<{ id: string; email: string | null }[]> {
  if (ids.length === 0) return Promise.resolve([])
  return db
    .selectFrom('customers')
    .select(['id', 'email'])
    .where('merchant_id', '=', merchantId)
    .where('id', 'in', ids)
    .execute()
}

// Cards

export async function insertCard(tx: Tx, row: NewCustomerCard): Promise<void> {
  await tx.insertInto('customer_cards').values(row).execute()
}

/** The card ever made from this token, attached or not (a token is attached at most once). */
export function findCardByToken(
  tx: Tx,
  merchantId: string,
  cardToken: string,
): Promise<CustomerCardRow | undefined> {
  return tx
    .selectFrom('customer_cards')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .where('card_token', '=', cardToken)
    .executeTakeFirst()
}

export function findAttachedCardById(
  db: Db,
  merchantId: string,
  customerId: string,
  cardId: string,
): Promise<CustomerCardRow | undefined> {
  return db
    .selectFrom('customer_cards')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .where('customer_id', '=', customerId)
    .where('id', '=', cardId)
    .where('detached_at', 'is', null)
    .executeTakeFirst()
}

/** Newest first (created_at, id), served by customer_cards_customer_idx. */
export function findAttachedCards(
  db: Db,
  merchantId: string,
  customerId: string,
): Promise<CustomerCardRow[]> {
  return db
    .selectFrom('customer_cards')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .where('customer_id', '=', customerId)
    .where('detached_at', 'is', null)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .execute()
}

export async function countAttachedCards(tx: Tx, customerId: string): Promise<number> {
  const row = await tx
    .selectFrom('customer_cards')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('customer_id', '=', customerId)
    .where('detached_at', 'is', null)
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

export function findDefaultCard(
  db: Db,
  merchantId: string,
  customerId: string,
): Promise<CustomerCardRow | undefined> {
  return db
    .selectFrom('customer_cards')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .where('customer_id', '=', customerId)
    .where('is_default', '=', true)
    .where('detached_at', 'is', null)
    .executeTakeFirst()
}

/** Clears the customer's default. Runs before setting a new one: the unique index allows one. */
export async function clearDefaultCard(tx: Tx, customerId: string): Promise<void> {
  await tx
    .updateTable('customer_cards')
    .set({ is_default: false })
    .where('customer_id', '=', customerId)
    .where('is_default', '=', true)
    .where('detached_at', 'is', null)
    .execute()
}

export async function setDefaultCard(tx: Tx, cardId: string): Promise<CustomerCardRow> {
  return tx
    .updateTable('customer_cards')
    .set({ is_default: true })
    .where('id', '=', cardId)
    .where('detached_at', 'is', null)
    .returningAll()
    .executeTakeFirstOrThrow()
}

/** Detaches one card (conditional: a card already detached stays as it was). */
export async function detachCard(tx: Tx, cardId: string, at: Date): Promise<boolean> {
  const result = await tx
    .updateTable('customer_cards')
    .set({ detached_at: at, is_default: false })
    .where('id', '=', cardId)
    .where('detached_at', 'is', null)
    .executeTakeFirst()
  return result.numUpdatedRows === 1n
}
