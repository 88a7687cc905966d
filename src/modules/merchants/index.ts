// The merchants module's public surface. Other modules import only this file.
export {
  KYC_STATUSES,
  DEFAULT_PAYOUT_LIMITS,
  assertKycApproved,
  countMerchants,
  createMerchant,
  createStore,
  createStoreKey,
  createSubmerchant,
  defaultPricing,
  findSubmerchantIds,
  findUsableKey,
  getMerchant,
  getStore,
  getSubmerchant,
  listApiKeys,
  listDashboardEmails,
  normalizeIban,
  reencryptApiKeySecrets,
  revealDemoCredentials,
  revokeApiKey,
  rollApiKey,
  setKycStatus,
  verifyDashboardLogin,
} from './merchants.service.ts'
export type {
  AuthKey,
  CommissionInput,
  ApiKeySummary,
  CreatedMerchant,
  DashboardUser,
  IssuedKey,
  Merchant,
  PayoutLimits,
} from './merchants.service.ts'
export type { KycStatus, Pricing, SubjectScope } from './merchants.table.ts'
export {
  DASHBOARD_ROLES,
  addDashboardMember,
  changeDashboardMemberRole,
  dashboardMemberTotpSecret,
  getDashboardMember,
  hashDashboardPassword,
  isDashboardEmailTaken,
  isDashboardRole,
  listDashboardMembers,
  reencryptDashboardTotpSecrets,
  removeDashboardMember,
  setDashboardMemberTotp,
  spendTotpStep,
} from './dashboard-users.service.ts'
export type { DashboardMember, DashboardRole } from './dashboard-users.service.ts'
export { merchantsRoutes } from './merchants.http.ts'
export { KycStatusSchema } from './merchants.schemas.ts'
export { listStores } from './stores.service.ts'
export type { StoreSummary } from './stores.service.ts'
