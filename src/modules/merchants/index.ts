// The merchants module's public surface. Other modules import only this file.
export {
  assertKycApproved,
  countMerchants,
  createMerchant,
  createStore,
  createSubmerchant,
  findSubmerchantIds,
  getMerchant,
  getStore,
  getSubmerchant,
  normalizeIban,
  setKycStatus,
} from './merchants.service.ts'
export type { PayoutLimits } from './merchants.service.ts'
export {
  createStoreKey,
  findUsableKey,
  listApiKeys,
  reencryptApiKeySecrets,
  revealDemoCredentials,
  revokeApiKey,
  rollApiKey,
} from './api-keys.service.ts'
export type { AuthKey, ApiKeySummary, IssuedKey } from './api-keys.service.ts'
export { listDashboardEmails, verifyDashboardLogin } from './sign-in.service.ts'
export type { Pricing } from './merchants.table.ts'
export {
  DASHBOARD_ROLES,
  addDashboardMember,
  changeDashboardMemberRole,
  dashboardMemberTotpSecret,
  findDashboardAccount,
  getDashboardMember,
  hashDashboardPassword,
  isDashboardEmailTaken,
  isDashboardRole,
  listDashboardMembers,
  reencryptDashboardTotpSecrets,
  removeDashboardMember,
  setDashboardMemberEmail,
  setDashboardMemberPassword,
  setDashboardMemberTotp,
  spendTotpStep,
} from './dashboard-users.service.ts'
export type { DashboardMember, DashboardRole } from './dashboard-users.service.ts'
export {
  MERCHANT_CHANGES_CHANNEL,
  forgetMerchant,
  setMerchantCachesLive,
} from './merchants.cache.ts'
export { merchantsRoutes } from './merchants.http.ts'
export { KycStatusSchema } from './merchants.schemas.ts'
export {
  allowedOriginsOfStore,
  getAllowedOrigins,
  listStores,
  setAllowedOrigins,
} from './stores.service.ts'
