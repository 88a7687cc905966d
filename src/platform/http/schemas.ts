import { Type, type Static } from 'typebox'
import type { StateMachine } from '../state-machine.ts'

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
  {
    title: 'ErrorEnvelope',
    examples: [
      {
        code: 'SVC-VAL-3001',
        message: 'validation failed',
        requestId: '4b1f2c3d-5e6f-4a7b-8c9d-0e1f2a3b4c5d',
        details: [{ field: 'amount', reason: 'must be >= 1' }],
      },
    ],
  },
)
export type ErrorEnvelope = Static<typeof ErrorEnvelope>

/** The envelope with a response description for the OpenAPI document. */
function described(description: string): typeof ErrorEnvelope {
  const schema: typeof ErrorEnvelope & { description: string } = { ...ErrorEnvelope, description }
  return schema
}

/** Response map entries every route shares; spread into each route's `response`. */
export const errorResponses = {
  400: described(
    'SVC-VAL-3001 validation (fields in `details`; also a JSON body nested deeper than 64 ' +
      'levels), SVC-VAL-3002 malformed JSON',
  ),
  401: described(
    'Not authenticated: SVC-GW-1001 timestamp, SVC-GW-1002 signature, SVC-GW-1003 key or ' +
      'bearer token, SVC-GW-1006 a replayed POST/PUT/PATCH/DELETE signature (sign afresh; a ' +
      'retry with the original Idempotency-Key gets the stored response)',
  ),
  403: ErrorEnvelope,
  404: ErrorEnvelope,
  409: ErrorEnvelope,
  429: described(
    'SVC-GW-1004: rate limited, or too many failed authentications from this address; ' +
      'see Retry-After',
  ),
}

/**
 * A status field as an enum named `title` (an OpenAPI component), listing the statuses of the
 * module's state machine: the one table its services, its conditional updates and the
 * document all read.
 */
export function StatusEnum<S extends string>(
  title: string,
  machine: StateMachine<S>,
  description?: string,
) {
  return Type.Enum([...machine.statuses], {
    title,
    type: 'string',
    ...(description === undefined ? {} : { description }),
  })
}

export const Timestamp = Type.String({ format: 'date-time', examples: ['2026-11-22T10:00:00Z'] })

/** ISO 8601 UTC with a trailing Z, as every timestamp in the API. */
export function isoZ(date: Date): string
export function isoZ(date: Date | null): string | null
export function isoZ(date: Date | null): string | null {
  return date ? date.toISOString() : null
}

/**
 * The largest amount of one payment, capture, refund, payout, split or link, in kuruş (100
 * million lira): far inside 2^53 − 1 (exact in a JS number) and the bigint columns, so sums of
 * many stay exact too. A larger one is 400 naming the field (decision 0036).
 */
export const AMOUNT_MINOR_MAX = 10_000_000_000
/** The largest limit (a submerchant's payout limits), in kuruş (10 billion lira). */
export const LIMIT_MINOR_MAX = 1_000_000_000_000
