/* global crypto, TextEncoder, URL */
// Request signing in the browser, for the API reference's "Try it" (demo only): the same
// canonical string as @kurus/node and docs/api.md — X-Timestamp, the upper-case method, the
// path without its query, the hex SHA-256 of the exact body bytes, joined by "\n" — signed
// with HMAC-SHA256 (WebCrypto) keyed with the secret key, hex. test/vectors/signing.json holds
// it to the same answers as the SDK and the gateway (test/docs/api-reference.test.ts).

const encoder = new TextEncoder()

function hex(buffer) {
  return Array.from(new Uint8Array(buffer), (b) => b.toString(16).padStart(2, '0')).join('')
}

export async function canonicalString(timestamp, method, path, body) {
  const bodyHash = hex(await crypto.subtle.digest('SHA-256', encoder.encode(body)))
  return `${timestamp}\n${method.toUpperCase()}\n${path}\n${bodyHash}`
}

export async function sign(secretKey, canonical) {
  const key = await crypto.subtle.importKey(
    'raw',
    encoder.encode(secretKey),
    { name: 'HMAC', hash: 'SHA-256' },
    false,
    ['sign'],
  )
  return hex(await crypto.subtle.sign('HMAC', key, encoder.encode(canonical)))
}

// A state-changing signature is accepted once (401 SVC-GW-1006 for a replay): digits below
// the millisecond, counting on, keep two presses of Execute in one millisecond apart.
let subMillisecond = Math.floor(Math.random() * 1_000_000)

export function timestampFor(date) {
  subMillisecond = (subMillisecond + 1) % 1_000_000
  return date.toISOString().replace('Z', String(subMillisecond).padStart(6, '0') + 'Z')
}

/** The three authentication headers of one request to `url` (its path is signed, not its query). */
export async function signedHeaders(keys, method, url, body) {
  const timestamp = timestampFor(new Date())
  const path = new URL(url, 'http://placeholder.invalid').pathname
  const canonical = await canonicalString(timestamp, method, path, body)
  return {
    'X-Api-Key': keys.publicKey,
    'X-Timestamp': timestamp,
    'X-Signature': await sign(keys.secretKey, canonical),
  }
}
