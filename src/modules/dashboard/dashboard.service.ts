import type { Deps } from '../../database.ts'
import {
  createStoreKey,
  createSubmerchant,
  getStore,
  listApiKeys,
  revokeApiKey,
  rollApiKey,
  type ApiKeySummary,
  type IssuedKey,
  type PayoutLimits,
} from '../merchants/index.ts'
import { dashboardError } from './dashboard.errors.ts'
import { issueDashboardToken, verifyDashboardToken } from './dashboard.tokens.ts'
import {
  endApiSession,
  resolveSession,
  signInApi,
  verifySecondFactor,
  type WebSession,
} from './sessions.service.ts'

// The dashboard's use cases: thin over the merchants module, always inside the caller's
// merchant (a store of another merchant is a 404, as everywhere).

export type ApiLogin =
  | { token: string; expiresAt: Date; session: WebSession['member'] }
  | { twoFactorRequired: true; challengeToken: string; expiresAt: Date }

/**
 * The dashboard API's login, under the web's sign-in policy (sessions.service.ts): a user with
 * two-factor gets a challenge and no token.
 */
export async function login(deps: Deps, email: string, password: string): Promise<ApiLogin> {
  const signedIn = await signInApi(deps, email, password)
  if (!signedIn) throw dashboardError('bad_credentials')
  if (signedIn.outcome === 'enrol') throw dashboardError('two_factor_enrolment_required')
  const { member } = signedIn
  if (signedIn.outcome === 'challenge') {
    return {
      twoFactorRequired: true,
      challengeToken: signedIn.challengeId,
      expiresAt: signedIn.expiresAt,
    }
  }
  const claims = { userId: member.userId, merchantId: member.merchantId, email: member.email }
  const issued = await issueDashboardToken(
    deps,
    { ...claims, sessionId: signedIn.sessionId },
    signedIn.expiresAt,
  )
  return { ...issued, session: member }
}

/** The second step: a right code for the challenge gives the token (once). */
export async function loginSecondFactor(
  deps: Deps,
  challengeToken: string,
  code: string,
): Promise<{ token: string; expiresAt: Date; session: WebSession['member'] }> {
  const challenge = await resolveSession(deps, challengeToken, 'api')
  if (challenge?.stage !== 'second_factor') throw dashboardError('challenge_invalid')
  const outcome = await verifySecondFactor(deps, challenge, code, 'api')
  if (!outcome.ok) {
    throw dashboardError(outcome.ended ? 'challenge_invalid' : 'two_factor_code_wrong')
  }
  const { member } = challenge
  const claims = { userId: member.userId, merchantId: member.merchantId, email: member.email }
  const issued = await issueDashboardToken(
    deps,
    { ...claims, sessionId: outcome.token },
    outcome.expiresAt,
  )
  return { ...issued, session: member }
}

/**
 * The session behind a bearer token: signature, then the server-side session (not ended, not
 * idle, its user still in the team, fully signed in). Undefined otherwise.
 */
export async function authenticateToken(
  deps: Deps,
  token: string,
): Promise<WebSession | undefined> {
  const claims = await verifyDashboardToken(deps, token)
  if (!claims) return undefined
  const session = await resolveSession(deps, claims.sessionId, 'api')
  if (session?.stage !== 'active') return undefined
  if (session.member.userId !== claims.userId || session.member.merchantId !== claims.merchantId) {
    return undefined
  }
  return session
}

/** Ends the token's own session (`POST /v1/dashboard/logout`), in a transaction of its own. */
export async function signOutToken(deps: Deps, token: string): Promise<void> {
  const session = await authenticateToken(deps, token)
  if (session) await endApiSession(deps, session)
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
