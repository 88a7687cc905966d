import { hkdfSync } from 'node:crypto'
import { SignJWT, jwtVerify } from 'jose'
import type { Deps } from '../../database.ts'

// Dashboard session tokens: JWT HS256 under a key derived from the master key for this
// purpose only, one hour long. Expiry is checked against deps.clock, like every other time.

export const TOKEN_TTL_SECONDS = 60 * 60
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

export async function issueDashboardToken(
  deps: Deps,
  claims: DashboardClaims,
): Promise<{ token: string; expiresAt: Date }> {
  const issuedAt = Math.floor(deps.clock.now().getTime() / 1000)
  const expiresAt = issuedAt + TOKEN_TTL_SECONDS
  const token = await new SignJWT({
    mid: claims.merchantId,
    email: claims.email,
    env: deps.config.env,
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
): Promise<DashboardClaims | undefined> {
  try {
    const { payload } = await jwtVerify(token, signingKey(deps.config.masterKey), {
      algorithms: ['HS256'],
      issuer: ISSUER,
      audience: AUDIENCE,
      currentDate: deps.clock.now(),
      requiredClaims: ['sub', 'exp', 'iat'],
    })
    const { sub, mid, email, env } = payload
    if (typeof sub !== 'string' || typeof mid !== 'string' || typeof email !== 'string') {
      return undefined
    }
    if (env !== deps.config.env) return undefined
    return { userId: sub, merchantId: mid, email }
  } catch {
    return undefined
  }
}
