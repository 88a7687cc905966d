import type { ColumnType, Selectable } from 'kysely'
import type { BankOutcome } from './bank-wire.ts'

type Json<T> = ColumnType<T, string, string>

/** 3D: the gate authenticates, the XML API authorizes; 3D Pay: the gate does both. */
export type ThreeDModel = '3d' | '3d_pay'

export type Pos3dsState = 'waiting' | 'authenticated' | 'failed'

/** One challenge at a bank POS's 3D gate per payment (migration 0520). */
export interface AcquirerPos3dsTable {
  payment_id: string
  merchant_id: string
  /** Chosen before the challenge: the authorization goes to this POS only. */
  pos_account_id: string
  model: ThreeDModel
  correlation_id: string
  /** The vault token the gate's form is filled from (the PAN is read per page view). */
  card_token: string
  amount: number
  installment_count: number
  pre_auth: boolean
  state: Pos3dsState
  md_status: string | null
  /** What the XML authorization needs from the verified callback (md, xid, eci, cavv, …). */
  authentication: Json<Record<string, string> | null> | null
  /** 3D Pay: what the gate answered to the payment itself. */
  gate_payment: Json<BankOutcome | null> | null
  created_at: Date
  updated_at: Date
}

export interface Pos3dsTables {
  acquirer_pos_3ds: AcquirerPos3dsTable
}

export type Pos3dsRow = Selectable<AcquirerPos3dsTable>
