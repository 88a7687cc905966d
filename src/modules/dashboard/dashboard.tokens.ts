import { hkdfSync } from 'node:crypto'
import { SignJWT, jwtVerify } from 'jose'
import type { Deps } from '../../database.ts'

// Dashboard API tokens: JWT HS256 under a key derived from the master key for this purpose
// only, naming a server-side session (`sid`, a session of kind `api` in dashboard_sessions).
// The signature proves we made it; the session decides whether it still works (idle limit,
// sign-out, removal, a new password: decision 0036). Expiry is checked against deps.clock.
const ISSUER = 'kurus'
const AUDIENCE = 'kurus-dashboard'

function signingKey(masterKey: Buffer): Uint8Array {
  return new Uint8Array(hkdfSync('sha256', masterKey, Buffer.alloc(0), 'kurus/dashboard/jwt', 32))
}

export interface DashboardClaims {
  userId: string
  merchantId: string
  email: string
}

export interface TokenClaims extends DashboardClaims {
  /** The session's id (its SHA-256 is the row's key). */
  sessionId: string
}

export async function issueDashboardToken(
  deps: Deps,
  claims: TokenClaims,
  until: Date,
): Promise<{ token: string; expiresAt: Date }> {
  const issuedAt = Math.floor(deps.clock.now().getTime() / 1000)
  const expiresAt = Math.floor(until.getTime() / 1000)
  const token = await new SignJWT({
    mid: claims.merchantId,
    email: claims.email,
    env: deps.config.env,
    sid: claims.sessionId,
  })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(claims.userId)
    .setIssuer(ISSUER)
    .setAudience(AUDIENCE)
    .setIssuedAt(issuedAt)
    .setExpirationTime(expiresAt)
    .sign(signingKey(deps.config.masterKey))
  return { token, expiresAt: new Date(expiresAt * 1000) }
}

/** The claims of a valid, unexpired token of this environment; undefined otherwise. */
export async function verifyDashboardToken(
  deps: Deps,
  token: string,
): Promise<TokenClaims | undefined> {
  try {
    const { payload } = await jwtVerify(token, signingKey(deps.config.masterKey), {
      algorithms: ['HS256'],
      issuer: ISSUER,
      audience: AUDIENCE,
      currentDate: deps.clock.now(),
      requiredClaims: ['sub', 'exp', 'iat'],
    })
    const { sub, mid, email, env, sid } = payload
    if (typeof sub !== 'string' || typeof mid !== 'string' || typeof email !== 'string') {
      return undefined
    }
    // A token without a session (made before decision 0036) cannot be ended: refused.
    if (typeof sid !== 'string') return undefined
    if (env !== deps.config.env) return undefined
    return { userId: sub, merchantId: mid, email, sessionId: sid }
  } catch {
    return undefined
  }
}
