import { isValidPhoneNumber, parsePhoneNumberFromString } from 'libphonenumber-js/max'
import type { Updateable } from 'kysely'
import type { Deps, Tx } from '../../database.ts'
import { assert } from '../../platform/assert.ts'
import { byCreatedAt, keysetCursor } from '../../platform/cursor.ts'
import { isUniqueViolation, transact } from '../../platform/db/transaction.ts'
import { validationError } from '../../platform/errors.ts'
import type { RecordAnswer } from '../../platform/http/idempotent-answer.ts'
import { newId } from '../../platform/ids.ts'
import { recordEvent } from '../events/index.ts'
import { getTestClock } from '../test-clocks/index.ts'
import { revokeCardToken } from '../vault/index.ts'
import { customersError } from './customers.errors.ts'
import * as repo from './customers.repository.ts'
import type { CustomerRow, CustomersTable } from './customers.table.ts'

// The list's cursor: signed with a key of its own, names its merchant.
const CUSTOMERS_CURSOR = keysetCursor('customers', 'kurus/customers/list')

export interface Customer {
  id: string
  merchantId: string
  externalId: string
  email: string | null
  phone: string | null
  name: string | null
  extraData: Record<string, unknown>
  createdAt: Date
  updatedAt: Date
  /** Sandbox: the test clock its card charges live on; null for wall time (decision 0031). */
  testClockId: string | null
}

export interface CreateCustomerInput {
  externalId: string
  email?: string | null
  phone?: string | null
  name?: string | null
  extraData?: Record<string, unknown>
  /** Sandbox: a test clock of the merchant's (404 otherwise); fixed for the customer's life. */
  testClockId?: string | undefined
}

/** Only the fields present change; null clears email, phone or name; extraData replaces. */
export interface UpdateCustomerInput {
  email?: string | null
  phone?: string | null
  name?: string | null
  extraData?: Record<string, unknown>
}

export const EXTRA_DATA_KEYS_MAX = 50
export const EXTRA_DATA_BYTES_MAX = 16 * 1024
/** Deep nesting is no use to a merchant and costs the JSON parser and PostgreSQL stack. */
export const EXTRA_DATA_DEPTH_MAX = 8
export const CUSTOMERS_LIMIT_MAX = 100

export function customerRowToCustomer(row: CustomerRow): Customer {
  return {
    id: row.id,
    merchantId: row.merchant_id,
    externalId: row.external_id,
    email: row.email,
    phone: row.phone,
    name: row.name,
    extraData: row.extra_data,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    testClockId: row.test_clock_id,
  }
}

/**
 * A Turkish number in international form, normalised to E.164 (`+905321234567`). Spaces,
 * dashes and brackets are accepted as typed; an extension or another country is not.
 */
export function normalizePhone(field: string, value: string): string {
  const trimmed = value.trim()
  if (!trimmed.startsWith('+90')) {
    throw validationError(field, 'must be in international form starting +90')
  }
  const parsed = parsePhoneNumberFromString(trimmed)
  if (
    !isValidPhoneNumber(trimmed) ||
    parsed?.countryCallingCode !== '90' ||
    parsed.ext !== undefined
  ) {
    throw validationError(field, 'is not a valid Turkish phone number')
  }
  return parsed.number
}

/**
 * extraData is the merchant's own JSON, stored as jsonb: bounded in keys, bytes and depth,
 * and free of NUL characters (which jsonb cannot hold). Reasons never quote the value.
 */
export function checkExtraData(value: Record<string, unknown>): string {
  if (Object.keys(value).length > EXTRA_DATA_KEYS_MAX) {
    throw validationError('extraData', `must have at most ${EXTRA_DATA_KEYS_MAX} keys`)
  }
  // Depth first, with a stack of our own: JSON.stringify recurses, so the value must be known
  // to be shallow before it is serialised (a 10,000-deep value overflowed it: a 500).
  const pending: [unknown, number][] = [[value, 1]]
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [node, depth] = next
    if (depth > EXTRA_DATA_DEPTH_MAX) {
      throw validationError('extraData', `must be nested at most ${EXTRA_DATA_DEPTH_MAX} deep`)
    }
    if (typeof node === 'string') {
      if (node.includes('\u0000')) throw validationError('extraData', 'must not contain NUL')
    } else if (Array.isArray(node)) {
      for (const item of node) pending.push([item, depth + 1])
    } else if (typeof node === 'object' && node !== null) {
      for (const [key, item] of Object.entries(node)) pending.push([key, depth], [item, depth + 1])
    }
  }
  const json = JSON.stringify(value)
  if (Buffer.byteLength(json, 'utf8') > EXTRA_DATA_BYTES_MAX) {
    throw validationError('extraData', `must be at most ${EXTRA_DATA_BYTES_MAX} bytes as JSON`)
  }
  return json
}

/** A unique-index violation of our customers table, as the 409 the client should see. */
function uniquenessError(error: unknown): Error {
  if (isUniqueViolation(error, repo.UNIQUE_EXTERNAL_ID)) {
    return customersError('external_id_taken', undefined, [
      { field: 'externalId', reason: 'already used by another customer' },
    ])
  }
  if (isUniqueViolation(error, repo.UNIQUE_EMAIL)) {
    return customersError('email_taken', undefined, [
      { field: 'email', reason: 'already used by another customer' },
    ])
  }
  return error instanceof Error ? error : new Error('unexpected error', { cause: error })
}

function storeless(merchantId: string, type: string, customerId: string, at: Date) {
  // Customers belong to the merchant, not to a store: their events carry no store.
  return {
    merchantId,
    storeId: null,
    type,
    resourceType: 'customer',
    resourceId: customerId,
    at,
  }
}

/**
 * Creates a customer. externalId is unique among the merchant's live customers, and so is
 * the email (case-insensitively); the partial unique indexes decide races: of two concurrent
 * creates with one externalId, one commits and the other gets 409 SVC-RES-3302.
 */
export async function createCustomer(
  deps: Deps,
  merchantId: string,
  input: CreateCustomerInput,
  record?: RecordAnswer<Tx, Customer>,
): Promise<Customer> {
  const phone = input.phone == null ? null : normalizePhone('phone', input.phone)
  const extraData = checkExtraData(input.extraData ?? {})
  // The customer record itself has nothing that falls due, so it is dated at wall time; the
  // clock is what its card charges live on (decision 0031, "Customers on a clock").
  if (input.testClockId !== undefined) await getTestClock(deps, merchantId, input.testClockId)
  const now = deps.clock.now()
  const id = newId('cus')
  try {
    return await transact(deps.db, async (tx) => {
      await repo.insertCustomer(tx, {
        id,
        merchant_id: merchantId,
        external_id: input.externalId,
        email: input.email ?? null,
        phone,
        name: input.name ?? null,
        extra_data: extraData,
        created_at: now,
        updated_at: now,
        deleted_at: null,
        test_clock_id: input.testClockId ?? null,
      })
      await recordEvent(tx, {
        ...storeless(merchantId, 'customer.created', id, now),
        data: { customerId: id, externalId: input.externalId },
      })
      const row = await repo.findLiveCustomerById(tx, merchantId, id)
      assert(row, `customer ${id} not found in its own transaction`)
      const customer = customerRowToCustomer(row)
      await record?.(tx, customer)
      return customer
    })
  } catch (error) {
    throw uniquenessError(error)
  }
}

/** The live customer; 404 SVC-RES-3301 when missing, deleted or another merchant's. */
export async function getCustomer(
  deps: Deps,
  merchantId: string,
  customerId: string,
): Promise<Customer> {
  const row = await repo.findLiveCustomerById(deps.db, merchantId, customerId)
  if (!row) throw customersError('customer_not_found')
  return customerRowToCustomer(row)
}

/** Throws 404 SVC-RES-3301 unless the merchant has this live customer. */
export async function assertCustomerExists(
  deps: Deps,
  merchantId: string,
  customerId: string,
): Promise<void> {
  await getCustomer(deps, merchantId, customerId)
}

/** Locks the live customer row for the rest of the transaction; 404 when there is none. */
export async function lockCustomer(
  tx: Tx,
  merchantId: string,
  customerId: string,
): Promise<CustomerRow> {
  const row = await repo.lockLiveCustomerById(tx, merchantId, customerId)
  if (!row) throw customersError('customer_not_found')
  return row
}

export async function updateCustomer(
  deps: Deps,
  merchantId: string,
  customerId: string,
  input: UpdateCustomerInput,
  record?: RecordAnswer<Tx, Customer>,
): Promise<Customer> {
  const changes: Updateable<CustomersTable> = {}
  if (input.email !== undefined) changes.email = input.email
  if (input.phone !== undefined) {
    changes.phone = input.phone === null ? null : normalizePhone('phone', input.phone)
  }
  if (input.name !== undefined) changes.name = input.name
  if (input.extraData !== undefined) changes.extra_data = checkExtraData(input.extraData)
  const fields = Object.keys(input).filter(
    (k) => input[k as keyof UpdateCustomerInput] !== undefined,
  )
  try {
    return await transact(deps.db, async (tx) => {
      const current = await lockCustomer(tx, merchantId, customerId)
      // Nothing sent, nothing changes (not even updatedAt).
      let row = current
      if (fields.length > 0) {
        const now = deps.clock.now()
        row = await repo.updateCustomer(tx, current.id, { ...changes, updated_at: now })
        await recordEvent(tx, {
          ...storeless(merchantId, 'customer.updated', current.id, now),
          data: { customerId: current.id, fields },
        })
      }
      const customer = customerRowToCustomer(row)
      await record?.(tx, customer)
      return customer
    })
  } catch (error) {
    throw uniquenessError(error)
  }
}

/**
 * Soft-deletes a customer. Its saved cards are detached and their tokens revoked in the same
 * transaction: a deleted customer's cards must not stay chargeable. Afterwards the customer
 * is 404 everywhere and its externalId and email are free for a new customer.
 */
export async function deleteCustomer(
  deps: Deps,
  merchantId: string,
  customerId: string,
  record?: RecordAnswer<Tx, null>,
): Promise<void> {
  await transact(deps.db, async (tx) => {
    const customer = await lockCustomer(tx, merchantId, customerId)
    const now = deps.clock.now()
    const cards = await repo.findAttachedCards(tx, merchantId, customer.id)
    for (const card of cards) {
      await repo.detachCard(tx, card.id, now)
      await revokeCardToken(tx, merchantId, card.card_token)
    }
    await repo.updateCustomer(tx, customer.id, { deleted_at: now, updated_at: now })
    await recordEvent(tx, {
      ...storeless(merchantId, 'customer.deleted', customer.id, now),
      data: { customerId: customer.id, detachedCardIds: cards.map((c) => c.id) },
    })
    await record?.(tx, null)
  })
}

export interface CustomerListQuery {
  email?: string
  phone?: string
  limit: number
  cursor?: string
}

/** The merchant's live customers, newest first, in pages of `limit` (keyset, signed cursor). */
export async function listCustomers(
  deps: Deps,
  merchantId: string,
  q: CustomerListQuery,
): Promise<{ items: Customer[]; nextCursor: string | null }> {
  assert(Number.isInteger(q.limit) && q.limit >= 1 && q.limit <= CUSTOMERS_LIMIT_MAX, 'limit')
  const phone = q.phone === undefined ? undefined : normalizePhone('phone', q.phone)
  return CUSTOMERS_CURSOR.page(deps.config.masterKey, merchantId, q, {
    // A list: the read pool.
    fetch: (before, limit) =>
      repo.findCustomerPage(deps.readDb, { merchantId, email: q.email, phone, before, limit }),
    view: (rows) => rows.map(customerRowToCustomer),
    position: byCreatedAt,
  })
}

/** The email of each of these customers that has one (lists showing who paid). */
export async function customerEmails(
  deps: Deps,
  merchantId: string,
  ids: readonly string[],
): Promise<Map<string, string>> {
  const rows = await repo.findCustomerEmails(deps.readDb, merchantId, [...new Set(ids)])
  return new Map(rows.flatMap((r) => (r.email ? [[r.id, r.email] as const] : [])))
}
