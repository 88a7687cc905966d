import { stateMachine } from '../../platform/state-machine.ts'
import type { ColumnType, Insertable, Selectable, Updateable } from 'kysely'

export type InvoiceStatus =
  'draft' | 'sent' | 'activated' | 'viewed' | 'paid' | 'expired' | 'cancelled'

/**
 * The invoice state machine: a draft is sent (emailed) or activated (link shared), the buyer
 * opening the link makes it viewed, and any open invoice ends paid, expired or cancelled.
 * Every status write is `transitionInvoice`, conditional on this table.
 */
export const INVOICES = stateMachine<InvoiceStatus>({
  draft: ['sent', 'activated', 'cancelled', 'expired'],
  sent: ['viewed', 'paid', 'cancelled', 'expired'],
  activated: ['viewed', 'paid', 'cancelled', 'expired'],
  viewed: ['paid', 'cancelled', 'expired'],
  paid: [],
  expired: [],
  cancelled: [],
})

export interface LineItem {
  name: string
  qty: number
  unitPriceMinor: number
  lineTotalMinor: number
}

export interface InvoicesTable {
  id: string
  merchant_id: string
  store_id: string
  customer_id: string | null
  /** SHA-256 (hex) of the public link's bearer: the public lookup key. */
  public_hash_sha256: string
  /** The bearer itself, AES-256-GCM under a key derived from the master key (for the email). */
  public_hash_enc: string
  status: InvoiceStatus
  amount_minor: number
  currency: 'TRY'
  /** jsonb: written as its JSON text, read back parsed. */
  line_items: ColumnType<LineItem[], string, string>
  buyer_email: string | null
  buyer_name: string | null
  due_date: Date | null
  expires_at: Date | null
  notes: string | null
  /** jsonb (migration 0251): written as its JSON text, read back parsed. */
  metadata: ColumnType<Record<string, string>, string | undefined, string>
  /** The n of the latest checkout session `<id>:<n>`; 0 when none was minted. */
  session_seq: ColumnType<number, number | undefined, number>
  /** The id of that latest session. */
  session_id: string | null
  /** When that latest session was minted (the payment sweep looks back a day from now). */
  session_minted_at: Date | null
  /** The captured payment that paid the invoice. */
  payment_id: string | null
  /** A subscription's renewal invoice: the subscription and its cycle. */
  subscription_id: string | null
  cycle_number: number | null
  /** When the invoice email was handed to the SMTP server (or the demo mailbox). */
  email_sent_at: Date | null
  /** Failed delivery attempts so far. */
  email_attempts: ColumnType<number, number | undefined, number>
  /** The email outbox: when the next attempt is due (or a claimed one's lease ends). */
  email_next_at: Date | null
  created_at: Date
  updated_at: Date
  sent_at: Date | null
  activated_at: Date | null
  viewed_at: Date | null
  paid_at: Date | null
  expired_at: Date | null
  cancelled_at: Date | null
}

export interface InvoicesTables {
  invoices: InvoicesTable
}

export type InvoiceRow = Selectable<InvoicesTable>
export type InvoicePatch = Updateable<InvoicesTable>
export type NewInvoice = Insertable<InvoicesTable>
