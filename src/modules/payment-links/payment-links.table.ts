import type { ColumnType, Insertable, Selectable, Updateable } from 'kysely'

/** What the link's page asks the buyer for before the checkout. */
export interface Collect {
  email?: boolean
  phone?: boolean
  name?: boolean
}

type Json<T> = ColumnType<T, string, string>

export interface PaymentLinksTable {
  id: string
  merchant_id: string
  store_id: string
  /** The public page's path segment, /l/{public_hash}: random, 128 bits. */
  public_hash: string
  amount: number
  currency: ColumnType<'TRY', 'TRY' | undefined, 'TRY'>
  description: string
  max_payments: number | null
  expires_at: Date | null
  metadata: Json<Record<string, string>>
  installments: boolean
  collect: Json<Collect>
  return_url: string | null
  active: boolean
  deactivated_at: Date | null
  /** Checkout sessions made so far: session n is `<id>:<n>`. */
  session_seq: ColumnType<number, number | undefined, number>
  created_at: Date
  updated_at: Date
}

export interface PaymentLinksTables {
  payment_links: PaymentLinksTable
}

export type PaymentLinkRow = Selectable<PaymentLinksTable>
export type NewPaymentLink = Insertable<PaymentLinksTable>
export type PaymentLinkUpdate = Updateable<PaymentLinksTable>
