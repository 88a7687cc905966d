import { Type } from 'typebox'
import { AppError, type FieldIssue } from './errors.ts'

// Merchant metadata, the same on every resource that carries it (CONTRACT.md "Payments,
// later phase"): string key → string value pairs the merchant attaches to tie our objects
// to its own (an order id, a customer reference). The one schema (request bodies validate
// against it, and the OpenAPI document shows it) and the one check (for what a schema can't
// see: a merge of stored and new keys) live here.

export const METADATA_KEYS_MAX = 50
export const METADATA_KEY_LENGTH_MAX = 40
export const METADATA_VALUE_LENGTH_MAX = 500

export type MetadataMap = Record<string, string>

/** A body's `metadata`: a 400 names `metadata.<key>` (platform/http/errors.ts). */
export const Metadata = Type.Unsafe<MetadataMap>({
  type: 'object',
  maxProperties: METADATA_KEYS_MAX,
  propertyNames: { minLength: 1, maxLength: METADATA_KEY_LENGTH_MAX },
  additionalProperties: { type: 'string', maxLength: METADATA_VALUE_LENGTH_MAX },
  description:
    `Your own key–value pairs: at most ${METADATA_KEYS_MAX} keys of 1..${METADATA_KEY_LENGTH_MAX} ` +
    `characters, string values of at most ${METADATA_VALUE_LENGTH_MAX} characters.`,
})

/** The problems of a metadata map, each naming `metadata.<key>` (or `metadata`). */
export function metadataIssues(metadata: MetadataMap, field = 'metadata'): FieldIssue[] {
  const issues: FieldIssue[] = []
  const keys = Object.keys(metadata)
  if (keys.length > METADATA_KEYS_MAX) {
    issues.push({ field, reason: `must not have more than ${METADATA_KEYS_MAX} keys` })
  }
  for (const key of keys) {
    const value: unknown = metadata[key]
    if (key.length === 0 || key.length > METADATA_KEY_LENGTH_MAX) {
      issues.push({
        field: `${field}.${key}`,
        reason: `key must be 1 to ${METADATA_KEY_LENGTH_MAX} characters`,
      })
    }
    if (typeof value !== 'string') {
      issues.push({ field: `${field}.${key}`, reason: 'must be a string' })
    } else if (value.length > METADATA_VALUE_LENGTH_MAX) {
      issues.push({
        field: `${field}.${key}`,
        reason: `must NOT have more than ${METADATA_VALUE_LENGTH_MAX} characters`,
      })
    }
  }
  return issues
}

/** 400 SVC-VAL-3001 with every problem in `details` unless the map is within the limits. */
export function checkMetadata(metadata: MetadataMap, field = 'metadata'): void {
  const issues = metadataIssues(metadata, field)
  const first = issues[0]
  if (first) {
    throw new AppError('SVC-VAL-3001', 400, `${first.field}: ${first.reason}`, issues)
  }
}

/**
 * `patch` over `current`: a key with a value replaces or adds, a key set to "" is removed.
 * A merge that would take the map past the key limit is refused; one that leaves it no
 * larger is not (a renewal's payment carries two keys of ours beside the subscription's).
 */
export function mergeMetadata(current: MetadataMap, patch: MetadataMap): MetadataMap {
  checkMetadata(patch)
  // A Map, not property writes: a key such as "__proto__" must stay a plain key.
  const merged = new Map(Object.entries(current))
  for (const [key, value] of Object.entries(patch)) {
    if (value === '') merged.delete(key)
    else merged.set(key, value)
  }
  const before = Object.keys(current).length
  if (merged.size > METADATA_KEYS_MAX && merged.size > before) {
    throw new AppError(
      'SVC-VAL-3001',
      400,
      `metadata: must not have more than ${METADATA_KEYS_MAX} keys`,
      [
        {
          field: 'metadata',
          reason: `must not have more than ${METADATA_KEYS_MAX} keys once merged`,
        },
      ],
    )
  }
  return Object.fromEntries(merged)
}
