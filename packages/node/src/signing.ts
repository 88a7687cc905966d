import { createHash, createHmac, randomInt } from 'node:crypto'

// Request signing, as the API guide (docs/api.md) says: the canonical string is X-Timestamp,
// the upper-case method, the path (no query, no trailing slash) and the hex SHA-256 of the
// exact body bytes sent, joined by "\n"; the signature is hex HMAC-SHA256 of it keyed with
// the secret key. Written independently of the server's verifier; test/vectors/signing.json
// (computed with openssl) holds both to the same answers.

export function canonicalString(
  timestamp: string,
  method: string,
  path: string,
  body: string | Uint8Array,
): string {
  const hash = createHash('sha256')
  const bodyHash = (
    typeof body === 'string' ? hash.update(body, 'utf8') : hash.update(body)
  ).digest('hex')
  return `${timestamp}\n${method.toUpperCase()}\n${path}\n${bodyHash}`
}

export function sign(secretKey: string, canonical: string): string {
  return createHmac('sha256', secretKey).update(canonical, 'utf8').digest('hex')
}

// The server accepts each state-changing signature once (a byte-identical replay is 401
// SVC-GW-1006), so no two requests of this process may share a signature: the timestamp
// carries six digits below the millisecond, counting on from a random start. Two identical
// calls in the same millisecond (or under a test's frozen clock) still sign differently.
let subMillisecond = randomInt(1_000_000)

/** X-Timestamp for `date`: ISO 8601 UTC with nine fractional digits, unique in this process. */
export function timestampFor(date: Date): string {
  subMillisecond = (subMillisecond + 1) % 1_000_000
  return date.toISOString().replace('Z', String(subMillisecond).padStart(6, '0') + 'Z')
}

export interface SignedHeaders {
  'X-Api-Key': string
  'X-Timestamp': string
  'X-Signature': string
}

/** The three authentication headers of one request. */
export function signedHeaders(
  keys: { publicKey: string; secretKey: string },
  method: string,
  path: string,
  body: string | Uint8Array,
  timestamp: string = timestampFor(new Date()),
): SignedHeaders {
  return {
    'X-Api-Key': keys.publicKey,
    'X-Timestamp': timestamp,
    'X-Signature': sign(keys.secretKey, canonicalString(timestamp, method, path, body)),
  }
}
