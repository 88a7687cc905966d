import { hkdfSync } from 'node:crypto'
import { SignJWT, jwtVerify } from 'jose'

// The ACS's signed assertion (pares): a compact JWS, HS256 under a key derived from the
// master key for this purpose only. It binds the result to both the payment and the
// challenge, and expires, so it cannot be replayed on another payment or much later.

const ISSUER = 'kurus-acs'
const PARES_TTL_SECONDS = 15 * 60
const PARES_CHARS_MAX = 4096

export interface ParesClaims {
  paymentId: string
  correlationId: string
  result: 'Y' | 'N'
}

function acsKey(masterKey: Buffer): Uint8Array {
  return new Uint8Array(
    hkdfSync('sha256', masterKey, Buffer.alloc(0), 'kurus/acquirer/acs-pares', 32),
  )
}

export async function signPares(
  masterKey: Buffer,
  claims: ParesClaims,
  now: Date,
): Promise<string> {
  const iat = Math.floor(now.getTime() / 1000)
  return new SignJWT({ ...claims })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setIssuer(ISSUER)
    .setIssuedAt(iat)
    .setExpirationTime(iat + PARES_TTL_SECONDS)
    .sign(acsKey(masterKey))
}

/** The claims of a pares we signed and that has not expired; undefined for anything else. */
export async function readPares(
  masterKey: Buffer,
  pares: string,
  now: Date,
): Promise<ParesClaims | undefined> {
  if (pares.length > PARES_CHARS_MAX) return undefined
  try {
    const { payload } = await jwtVerify(pares, acsKey(masterKey), {
      algorithms: ['HS256'],
      issuer: ISSUER,
      currentDate: now,
      requiredClaims: ['iat', 'exp'],
    })
    const { paymentId, correlationId, result } = payload
    if (typeof paymentId !== 'string' || typeof correlationId !== 'string') return undefined
    if (result !== 'Y' && result !== 'N') return undefined
    return { paymentId, correlationId, result }
  } catch {
    return undefined
  }
}
