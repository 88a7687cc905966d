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

/** `body`: the exact text sent, or the exact bytes (a multipart upload, multipartBody). */
export async function canonicalString(timestamp, method, path, body) {
  const bytes = typeof body === 'string' ? encoder.encode(body) : body
  const bodyHash = hex(await crypto.subtle.digest('SHA-256', bytes))
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

/**
 * A FormData as the bytes of a multipart/form-data body, with its Content-Type. The gateway
 * verifies the signature over the exact bytes received, and a browser chooses the boundary of
 * a FormData it sends itself: so the body is written out here, signed, and sent as these bytes.
 * The boundary is lower case: a Blob's type, which may carry it to the wire, is lower-cased.
 */
export async function multipartBody(form) {
  const boundary = `----kurus-try-it-${hex(crypto.getRandomValues(new Uint8Array(12)))}`
  const parts = []
  const quoted = (text) => String(text).replace(/[\r\n"]/g, (c) => encodeURIComponent(c))
  for (const [name, value] of form.entries()) {
    if (typeof value === 'string') {
      parts.push(
        encoder.encode(
          `--${boundary}\r\nContent-Disposition: form-data; name="${quoted(name)}"\r\n\r\n`,
        ),
        encoder.encode(value),
        encoder.encode('\r\n'),
      )
    } else {
      const type = value.type || 'application/octet-stream'
      parts.push(
        encoder.encode(
          `--${boundary}\r\nContent-Disposition: form-data; name="${quoted(name)}"; ` +
            `filename="${quoted(value.name || 'blob')}"\r\nContent-Type: ${type}\r\n\r\n`,
        ),
        new Uint8Array(await value.arrayBuffer()),
        encoder.encode('\r\n'),
      )
    }
  }
  parts.push(encoder.encode(`--${boundary}--\r\n`))
  const bytes = new Uint8Array(parts.reduce((n, part) => n + part.length, 0))
  let at = 0
  for (const part of parts) {
    bytes.set(part, at)
    at += part.length
  }
  return { bytes, contentType: `multipart/form-data; boundary=${boundary}` }
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
