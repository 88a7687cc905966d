import type { DashboardRole } from '../merchants/index.ts'

// THE table of what each dashboard role may do (CONTRACT.md, "Merchant dashboard (web)"):
// owner and admin everything; developer keys + webhooks + read; finance payouts + reports +
// refunds + read; support refunds + customers + read; viewer read-only. Every handler asks
// `can(role, permission)` before it acts (dashboard.web.ts `allow`); the pages hide what a
// role may not do only as a courtesy. Nothing else in the code decides on roles.

export type Permission =
  /** See every page of the merchant's data (lists, details, logs, CSV exports). */
  | 'read'
  /** Refund a captured payment; accept a chargeback or mark it reversed (a refund-like call). */
  | 'payments.refund'
  /** Capture or void an authorization (money the merchant has not taken yet). */
  | 'payments.capture_void'
  /** The customer relationship: remove saved cards, act on subscriptions and invoices. */
  | 'customers.manage'
  /** Create and deactivate payment links (a way to take money: owners and admins). */
  | 'payment_links.manage'
  /**
   * Risk rules and block lists: create, change, enable or disable, delete, backtest; add and
   * remove list entries. They decide who may pay the merchant at all, as payment links decide
   * how: owners and admins.
   */
  | 'risk.manage'
  /**
   * Bank virtual POS accounts: add, test (1 TRY auth+void), rename, enable and disable. Where
   * and through which bank the merchant's money is taken: owners and admins.
   */
  | 'pos.manage'
  /** Upload, approve and cancel payout drafts; set the payout schedule. */
  | 'payouts.manage'
  /**
   * Set the bank account settlement payouts go to (CONTRACT.md: owner or finance — not
   * admin: where the money goes is the owner's decision, or finance's).
   */
  | 'bank_account.manage'
  | 'reports.manage'
  | 'developers.keys'
  | 'developers.webhooks'
  /** Invite, remove and change the role of members; require two-factor for the merchant. */
  | 'team.manage'
  /** Give or take the owner role (an admin cannot make or unmake owners). */
  | 'team.owners'

const EVERYTHING: readonly Permission[] = [
  'read',
  'payments.refund',
  'payments.capture_void',
  'customers.manage',
  'payment_links.manage',
  'risk.manage',
  'pos.manage',
  'payouts.manage',
  'reports.manage',
  'developers.keys',
  'developers.webhooks',
  'team.manage',
]

export const ROLE_PERMISSIONS: Readonly<Record<DashboardRole, ReadonlySet<Permission>>> = {
  owner: new Set([...EVERYTHING, 'team.owners', 'bank_account.manage']),
  admin: new Set(EVERYTHING),
  developer: new Set(['read', 'developers.keys', 'developers.webhooks']),
  finance: new Set([
    'read',
    'payouts.manage',
    'bank_account.manage',
    'reports.manage',
    'payments.refund',
  ]),
  support: new Set(['read', 'payments.refund', 'customers.manage']),
  viewer: new Set(['read']),
}

export function can(role: DashboardRole, permission: Permission): boolean {
  return ROLE_PERMISSIONS[role].has(permission)
}

/** Owners and admins must use two-factor once the merchant requires it. */
export function twoFactorApplies(role: DashboardRole): boolean {
  return role === 'owner' || role === 'admin'
}
