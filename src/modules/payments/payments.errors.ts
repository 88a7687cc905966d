import { AppError, errorFactory, type ErrorTable } from '../../platform/errors.ts'

export type PaymentsErrorCode =
  | 'session_not_found'
  | 'session_not_active'
  | 'session_conflict'
  | 'session_mode_mismatch'
  | 'amount_mismatch'
  | 'payment_not_found'
  | 'fence_conflict'
  | 'not_capturable'
  | 'already_captured'
  | 'action_in_progress'
  | 'not_voidable'
  | 'not_pending_3ds'
  | 'too_many_failed_attempts'
  | 'card_token_revoked'
  | 'split_invalid'
  | 'not_refundable'
  | 'not_disputable'

const table: ErrorTable<PaymentsErrorCode> = {
  session_not_found: {
    code: 'SVC-RES-3301',
    status: 404,
    message: 'no checkout session with that transactionId',
  },
  session_not_active: {
    code: 'SVC-STATE-3401',
    status: 409,
    message: 'the checkout session is no longer active',
  },
  session_conflict: {
    code: 'SVC-RES-3302',
    status: 409,
    message: 'a session with this transactionId already exists with a different body',
  },
  session_mode_mismatch: {
    code: 'SVC-STATE-3401',
    status: 409,
    message: 'the checkout session is not a card payment session',
  },
  amount_mismatch: {
    code: 'SVC-VAL-3001',
    status: 400,
    message: "amount: must equal the session's amount",
  },
  payment_not_found: { code: 'SVC-RES-3301', status: 404, message: 'payment not found' },
  fence_conflict: {
    code: 'SVC-GW-2001',
    status: 409,
    message: 'a payment for this transactionId already exists with a different payload',
  },
  not_capturable: {
    code: 'SVC-STATE-3401',
    status: 409,
    message: 'only an authorized or partially captured payment can be captured',
  },
  already_captured: {
    code: 'SVC-STATE-3401',
    status: 409,
    message:
      'the payment is already captured: nothing is left to capture (a capture without amount is answered idempotently)',
  },
  action_in_progress: {
    code: 'SVC-STATE-3401',
    status: 409,
    message: 'another capture or void of this payment is in progress; retry shortly',
  },
  not_voidable: {
    code: 'SVC-STATE-3401',
    status: 409,
    message: 'only an authorized or partially captured payment can be voided',
  },
  not_pending_3ds: {
    code: 'SVC-STATE-3401',
    status: 409,
    message: 'the payment is not waiting for a 3DS challenge',
  },
  too_many_failed_attempts: {
    code: 'SVC-GW-1004',
    status: 429,
    message: 'too many failed attempts on this checkout session',
  },
  card_token_revoked: {
    code: 'SVC-STATE-3401',
    status: 409,
    message: 'the card token is revoked',
  },
  split_invalid: { code: 'SVC-VAL-3001', status: 400, message: 'splits: invalid' },
  not_disputable: {
    code: 'SVC-STATE-3401',
    status: 409,
    message: 'only a captured payment can be charged back',
  },
  not_refundable: {
    code: 'SVC-STATE-3401',
    status: 409,
    message: 'only a captured payment with a refundable amount left can be refunded',
  },
}

export const paymentsError = errorFactory(table)
export const isPaymentsError = paymentsError.is

/** A decline is an outcome, not a fault: 402 with the stored failed payment's id. */
export function declinedError(paymentId: string, declineCode: string): AppError {
  return new AppError('SVC-PAY-3501', 402, `card declined: ${declineCode}`, undefined, {
    paymentId,
    declineCode,
  })
}

/** A charge the bank declined (402 SVC-PAY-3501, with the failed payment's id). */
export function isDeclined(error: unknown): error is AppError {
  return error instanceof AppError && error.code === 'SVC-PAY-3501'
}
