import type { ColumnType, Insertable, Selectable } from 'kysely'

type Json<T> = ColumnType<T, string, string>

export interface CustomersTable {
  id: string
  merchant_id: string
  external_id: string
  email: string | null
  /** E.164, +90… */
  phone: string | null
  name: string | null
  extra_data: Json<Record<string, unknown>>
  created_at: Date
  updated_at: Date
  /** Soft delete: a row with deleted_at is gone for every read. */
  deleted_at: Date | null
  /** Sandbox: the test clock its card charges live on (migration 0360, decision 0031). */
  test_clock_id: ColumnType<string | null, string | null | undefined, string | null>
}

export interface CustomerCardsTable {
  id: string
  merchant_id: string
  customer_id: string
  card_token: string
  last4: string
  bin: string
  brand: string
  exp_month: number
  exp_year: number
  is_default: boolean
  /** The vault token's fingerprint (migration 0290). */
  card_fingerprint: ColumnType<string | null, string | null | undefined, string | null>
  created_at: Date
  /** Set when the card is detached (its vault token is revoked at the same time). */
  detached_at: Date | null
}

export interface CustomersTables {
  customers: CustomersTable
  customer_cards: CustomerCardsTable
}

export type CustomerRow = Selectable<CustomersTable>
export type NewCustomer = Insertable<CustomersTable>
export type CustomerCardRow = Selectable<CustomerCardsTable>
export type NewCustomerCard = Insertable<CustomerCardsTable>
