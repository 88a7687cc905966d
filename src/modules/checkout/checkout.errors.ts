import { AppError, errorFactory, type ErrorTable } from '../../platform/errors.ts'

export type CheckoutErrorCode =
  | 'session_not_found'
  | 'session_not_active'
  | 'wrong_mode'
  | 'installments_disabled'
  | 'payment_not_found'
  | 'challenge_invalid'
  | 'challenge_done'

const table: ErrorTable<CheckoutErrorCode> = {
  session_not_found: { code: 'SVC-RES-3301', status: 404, message: 'checkout session not found' },
  session_not_active: {
    code: 'SVC-STATE-3401',
    status: 409,
    message: 'the checkout session is no longer active (completed, expired or cancelled)',
  },
  wrong_mode: {
    code: 'SVC-STATE-3401',
    status: 409,
    message: "this call does not apply to the checkout session's mode",
  },
  installments_disabled: {
    code: 'SVC-VAL-3001',
    status: 400,
    message: 'installmentCount: this checkout takes single payments only',
  },
  payment_not_found: { code: 'SVC-RES-3301', status: 404, message: 'payment not found' },
  challenge_invalid: {
    code: 'SVC-3DS-3601',
    status: 400,
    message: 'the verification link is invalid',
  },
  challenge_done: {
    code: 'SVC-STATE-3401',
    status: 409,
    message: 'this verification is already complete',
  },
}

export const checkoutError = errorFactory(table)

/** The card-testing guard's refusal: 429 with the window as Retry-After. */
export function tooManyTokenizations(retryAfterSeconds: number): AppError {
  return new AppError(
    'SVC-GW-1004',
    429,
    'too many card attempts from this network; try again later',
    undefined,
    undefined,
    { 'retry-after': String(retryAfterSeconds) },
  )
}
