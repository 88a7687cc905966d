import type { ColumnType, Insertable, Selectable } from 'kysely'

// The risk module's tables (migration 0290).

export type RiskListName = 'card_fingerprint' | 'email' | 'ip' | 'bin' | 'customer_id'
export type RiskAction = 'block' | 'review' | 'require_3ds'
export type ReviewStatus = 'open' | 'closed'
export type ReviewClosedReason = 'approved' | 'rejected' | 'expired'
export type ReviewClosedBy = 'review' | 'capture' | 'void' | 'expiry'

type Json<T> = ColumnType<T, string, string>

export interface RiskListItemsTable {
  id: string
  merchant_id: string
  list: RiskListName
  /** Normalised: emails lowercased, IPs in their canonical form. */
  value: string
  note: string | null
  created_at: Date
}

export interface RiskRulesTable {
  id: string
  merchant_id: string
  name: string
  action: RiskAction
  /** A JSON Logic expression checked at creation (risk.conditions.ts). */
  condition: Json<unknown>
  enabled: boolean
  created_at: Date
  updated_at: Date
}

export interface RiskReviewsTable {
  id: string
  merchant_id: string
  payment_id: string
  status: ReviewStatus
  closed_reason: ReviewClosedReason | null
  reasons: Json<string[]>
  created_at: Date
  closed_at: Date | null
  /** Who closed it (migration 0412): approve/reject, a direct capture or void, or expiry. */
  closed_by: ColumnType<ReviewClosedBy | null, ReviewClosedBy | null | undefined, ReviewClosedBy>
}

export interface RiskTables {
  risk_list_items: RiskListItemsTable
  risk_rules: RiskRulesTable
  risk_reviews: RiskReviewsTable
}

export type ListItemRow = Selectable<RiskListItemsTable>
export type NewListItem = Insertable<RiskListItemsTable>
export type RuleRow = Selectable<RiskRulesTable>
export type NewRule = Insertable<RiskRulesTable>
export type ReviewRow = Selectable<RiskReviewsTable>
export type NewReview = Insertable<RiskReviewsTable>
