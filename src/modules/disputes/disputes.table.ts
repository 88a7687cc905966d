import type { Insertable, Selectable } from 'kysely'

export type ChargebackStatus = 'received' | 'accepted' | 'reversed'

export interface ChargebacksTable {
  id: string
  merchant_id: string
  payment_id: string
  amount: number
  status: ChargebackStatus
  reason_code: string
  bank_chargeback_id: string
  received_at: Date
  resolved_at: Date | null
}

export interface DisputesTables {
  chargebacks: ChargebacksTable
}

export type ChargebackRow = Selectable<ChargebacksTable>
export type NewChargeback = Insertable<ChargebacksTable>
