import { createHash } from 'node:crypto'
import { hmacSha256Hex } from '../../platform/crypto.ts'

// The spec's canonical string: four lines joined by "\n" with no trailing newline.
// (1) X-Timestamp byte for byte, (2) method upper-case, (3) the path without scheme, host,
// query or trailing slash, (4) hex SHA-256 of the exact body bytes (of "" when there is none).
export function canonicalString(
  timestamp: string,
  method: string,
  path: string,
  body: Buffer | string | undefined,
): string {
  const bodyHash = createHash('sha256')
    .update(body ?? '')
    .digest('hex')
  return [timestamp, method, path, bodyHash].join('\n')
}

export function signCanonical(secretKey: string, canonical: string): string {
  return hmacSha256Hex(secretKey, canonical)
}

const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z$/

/** Milliseconds since the epoch, or undefined unless the value is ISO 8601 UTC ending in Z. */
export function parseTimestamp(value: string): number | undefined {
  if (!TIMESTAMP.test(value)) return undefined
  const ms = Date.parse(value)
  if (Number.isNaN(ms)) return undefined
  // Date.parse rolls 2026-02-30 over into March; a real timestamp survives the round trip.
  if (new Date(ms).toISOString().slice(0, 19) !== value.slice(0, 19)) return undefined
  return ms
}

export const TIMESTAMP_SKEW_MS_MAX = 5 * 60 * 1000
