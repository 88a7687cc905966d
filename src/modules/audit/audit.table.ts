import type { ColumnType, Selectable } from 'kysely'

/** What a person did in the merchant dashboard (migration 0232; append-only). */
export interface AuditLogTable {
  id: string
  merchant_id: string
  /** The dashboard user's id. */
  actor_id: string
  /** A dotted verb, e.g. `payment.refund`, `team.invite`, `session.sign_in`. */
  action: string
  /** What it was done to (a payment id, a key id, an email…); null when nothing in particular. */
  target: string | null
  details: ColumnType<AuditDetails, string | undefined, never>
  at: Date
}

export type AuditDetails = Record<string, string | number | boolean | null>

export interface AuditTables {
  audit_log: AuditLogTable
}

export type AuditLogRow = Selectable<AuditLogTable>
