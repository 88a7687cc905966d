import { Type, type Static } from 'typebox'

export const ErrorEnvelope = Type.Object(
  {
    code: Type.String({ examples: ['SVC-VAL-3001'] }),
    message: Type.String(),
    requestId: Type.String({ format: 'uuid' }),
    details: Type.Optional(
      Type.Array(Type.Object({ field: Type.String(), reason: Type.String() })),
    ),
    paymentId: Type.Optional(Type.String()),
    declineCode: Type.Optional(Type.String()),
  },
  { title: 'ErrorEnvelope' },
)
export type ErrorEnvelope = Static<typeof ErrorEnvelope>

/** Response map entries every route shares; spread into each route's `response`. */
export const errorResponses = {
  400: ErrorEnvelope,
  401: ErrorEnvelope,
  403: ErrorEnvelope,
  404: ErrorEnvelope,
  409: ErrorEnvelope,
  429: ErrorEnvelope,
}

export const Timestamp = Type.String({ format: 'date-time', examples: ['2026-11-22T10:00:00Z'] })

/** ISO 8601 UTC with a trailing Z, as every timestamp in the API. */
export function isoZ(date: Date): string
export function isoZ(date: Date | null): string | null
export function isoZ(date: Date | null): string | null {
  return date ? date.toISOString() : null
}
