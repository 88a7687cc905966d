import { errorFactory, type ErrorTable } from '../../platform/errors.ts'

export type AcquirerErrorCode =
  | 'pares_invalid'
  | 'correlation_invalid'
  | 'authorization_not_found'
  | 'refund_not_found'
  | 'not_capturable'
  | 'not_voidable'
  | 'not_refundable'
  | 'refund_exceeds_captured'
  | 'gate_callback_refused'

const table: ErrorTable<AcquirerErrorCode> = {
  pares_invalid: {
    code: 'SVC-3DS-3601',
    status: 400,
    message: 'pares is invalid, expired or not for this payment',
  },
  correlation_invalid: {
    code: 'SVC-3DS-3601',
    status: 400,
    message: 'correlationId does not match a 3-D Secure challenge of this payment',
  },
  authorization_not_found: {
    code: 'SVC-RES-3301',
    status: 404,
    message: 'the acquirer has no approved authorization with this reference',
  },
  refund_not_found: {
    code: 'SVC-RES-3301',
    status: 404,
    message: 'the acquirer has no such refund',
  },
  not_capturable: {
    code: 'SVC-STATE-3401',
    status: 409,
    message: 'the authorization cannot be captured for this amount',
  },
  not_voidable: {
    code: 'SVC-STATE-3401',
    status: 409,
    message: 'the authorization is captured and cannot be voided',
  },
  not_refundable: {
    code: 'SVC-STATE-3401',
    status: 409,
    message: 'the payment has no captured amount to refund',
  },
  refund_exceeds_captured: {
    code: 'SVC-STATE-3401',
    status: 409,
    message: 'refunds would exceed the captured amount',
  },
  gate_callback_refused: {
    code: 'SVC-3DS-3601',
    status: 400,
    message: "the bank's 3-D Secure callback failed its check (hash, order or amount)",
  },
}

export const acquirerError = errorFactory(table)
