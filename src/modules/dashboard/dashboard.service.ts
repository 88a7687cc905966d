import type { Deps } from '../../database.ts'
import {
  createStoreKey,
  createSubmerchant,
  getStore,
  listApiKeys,
  revokeApiKey,
  rollApiKey,
  verifyDashboardLogin,
  type ApiKeySummary,
  type IssuedKey,
  type PayoutLimits,
} from '../merchants/index.ts'
import { dashboardError } from './dashboard.errors.ts'
import { issueDashboardToken } from './dashboard.tokens.ts'

// The dashboard's use cases: thin over the merchants module, always inside the caller's
// merchant (a store of another merchant is a 404, as everywhere).

export async function login(
  deps: Deps,
  email: string,
  password: string,
): Promise<{ token: string; expiresAt: Date }> {
  const user = await verifyDashboardLogin(deps, email, password)
  if (!user) throw dashboardError('bad_credentials')
  return issueDashboardToken(deps, user)
}

export async function listStoreKeys(
  deps: Deps,
  merchantId: string,
  storeId: string,
): Promise<ApiKeySummary[]> {
  await getStore(deps, merchantId, storeId)
  const keys = await listApiKeys(deps, merchantId)
  return keys.filter((k) => k.storeId === storeId)
}

export async function issueStoreKey(
  deps: Deps,
  merchantId: string,
  storeId: string,
): Promise<IssuedKey> {
  return createStoreKey(deps, merchantId, storeId)
}

/** The key must belong to this store: a key of another store is not found here. */
async function assertStoreKey(deps: Deps, merchantId: string, storeId: string, keyId: string) {
  const keys = await listStoreKeys(deps, merchantId, storeId)
  if (!keys.some((k) => k.apiKeyId === keyId)) throw dashboardError('api_key_not_found')
}

export async function rollStoreKey(
  deps: Deps,
  merchantId: string,
  storeId: string,
  keyId: string,
): Promise<IssuedKey & { previousExpiresAt: Date }> {
  await assertStoreKey(deps, merchantId, storeId, keyId)
  return rollApiKey(deps, merchantId, keyId)
}

export async function revokeStoreKey(
  deps: Deps,
  merchantId: string,
  storeId: string,
  keyId: string,
): Promise<void> {
  await assertStoreKey(deps, merchantId, storeId, keyId)
  await revokeApiKey(deps, merchantId, keyId)
}

export async function createDashboardSubmerchant(
  deps: Deps,
  merchantId: string,
  input: { name: string; iban: string; holderName: string; payoutLimits?: Partial<PayoutLimits> },
): Promise<{ submerchantId: string; key: IssuedKey }> {
  return createSubmerchant(deps, merchantId, input)
}
