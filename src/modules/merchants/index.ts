// The merchants module's public surface. Other modules import only this file.
export {
  assertKycApproved,
  countMerchants,
  createMerchant,
  createStore,
  createStoreKey,
  createSubmerchant,
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
export type { AuthKey, ApiKeySummary, IssuedKey, PayoutLimits } from './merchants.service.ts'
export type { Pricing } from './merchants.table.ts'
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
