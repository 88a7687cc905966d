// JSON with object keys sorted at every level: two requests that differ only in key order
// or whitespace get the same fingerprint.
export function stableStringify(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null'
  if (Array.isArray(value)) return `[${value.map(stableStringify).join(',')}]`
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${stableStringify(v)}`).join(',')}}`
}

/**
 * How deep arrays and objects may nest in a request body. Nothing in the API needs more than
 * a handful of levels; the limit keeps every recursive walker downstream (schema validation,
 * stableStringify, JSON.stringify of a stored value, PostgreSQL's jsonb input) far from its
 * stack limit, and it lets a deeply nested body be refused before JSON.parse builds it.
 */
export const JSON_DEPTH_MAX = 64

const QUOTE = 0x22
const BACKSLASH = 0x5c
const OPEN_ARRAY = 0x5b
const CLOSE_ARRAY = 0x5d
const OPEN_OBJECT = 0x7b
const CLOSE_OBJECT = 0x7d

/**
 * True when the JSON text nests arrays or objects more than `limit` deep. One pass over the
 * bytes with a counter, no recursion and no allocation, stopping at the first level too many:
 * a megabyte of `[[[[…` costs a few dozen bytes of scanning. Brackets inside strings do not
 * count (UTF-8 continuation bytes are all >= 0x80, so they can never look like a quote or a
 * bracket). Malformed text is JSON.parse's to refuse; this only answers the depth question.
 */
export function jsonNestingExceeds(bytes: Uint8Array, limit: number = JSON_DEPTH_MAX): boolean {
  let depth = 0
  let inString = false
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i]
    if (inString) {
      if (byte === BACKSLASH) i++
      else if (byte === QUOTE) inString = false
    } else if (byte === QUOTE) {
      inString = true
    } else if (byte === OPEN_ARRAY || byte === OPEN_OBJECT) {
      if (++depth > limit) return true
    } else if (byte === CLOSE_ARRAY || byte === CLOSE_OBJECT) {
      depth--
    }
  }
  return false
}
