import type { Generated, Insertable, Selectable } from 'kysely'
import type { CardBrand, CardType } from './cards.ts'

export type CardTokenStatus = 'active' | 'revoked'
export type CardAccessResult = 'ok' | 'denied'
export type CardAccessOp = 'detokenize'

export interface VaultCardTokensTable {
  id: string
  merchant_id: string
  /** The PAN sealed with this row's data key: the only place a PAN is stored. */
  pan_enc: string
  /** The row's data key, wrapped by the master key named in kek_id. */
  dek_wrapped: string
  kek_id: string
  /** Keyed HMAC of merchant and PAN (vault.crypto.ts), never a plain hash. */
  fingerprint: string
  last4: string
  bin: string
  brand: CardBrand
  card_type: CardType
  exp_month: number
  exp_year: number
  holder_name: string
  status: CardTokenStatus
  customer_id: string | null
  created_at: Date
  revoked_at: Date | null
  /** Made in a buyer's browser (Kuruş.js): charged for one order only (migration 0431). */
  single_use: Generated<boolean>
  /** A browser token's end (15 minutes after it was made); null for server-made tokens. */
  expires_at: Date | null
  /** The transactionId the first charge of a single-use token bound it to. */
  bound_transaction_id: string | null
}

export interface VaultCardAccessTable {
  id: Generated<number>
  op: CardAccessOp
  card_token: string
  merchant_id: string
  caller_service: string
  result: CardAccessResult
  created_at: Date
}

export interface VaultTables {
  vault_card_tokens: VaultCardTokensTable
  vault_card_access: VaultCardAccessTable
}

export type CardTokenRow = Selectable<VaultCardTokensTable>
export type NewCardToken = Insertable<VaultCardTokensTable>
export type CardAccessRow = Selectable<VaultCardAccessTable>
