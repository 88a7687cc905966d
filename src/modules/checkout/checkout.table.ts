import type { Generated, Insertable, Selectable } from 'kysely'

/** A payment the hosted checkout started: its 3DS challenge is finished by the checkout. */
export interface CheckoutAttemptsTable {
  payment_id: string
  session_id: string
  merchant_id: string
  created_at: Date
}

/** One card tokenization through the public checkout API, for the per-IP guard. */
export interface CheckoutTokenizationsTable {
  id: Generated<string>
  /** sha256 of the client IP: enough to count by, without keeping the address itself. */
  ip_key: string
  created_at: Date
}

export interface CheckoutTables {
  checkout_attempts: CheckoutAttemptsTable
  checkout_tokenizations: CheckoutTokenizationsTable
}

export type CheckoutAttemptRow = Selectable<CheckoutAttemptsTable>
export type NewCheckoutAttempt = Insertable<CheckoutAttemptsTable>
