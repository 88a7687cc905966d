import { errorFactory, type ErrorTable } from '../../platform/errors.ts'

export type SubscriptionsErrorCode =
  | 'subscription_not_found'
  | 'not_chargeable'
  | 'not_pausable'
  | 'not_resumable'
  | 'not_retryable'
  | 'not_cancellable'
  | 'charge_in_progress'
  | 'subscription_ended'
  | 'card_token_revoked'

const table: ErrorTable<SubscriptionsErrorCode> = {
  subscription_not_found: {
    code: 'SVC-RES-3301',
    status: 404,
    message: 'subscription not found',
  },
  not_chargeable: {
    code: 'SVC-STATE-3401',
    status: 409,
    message: 'a charge can start only from trialing, active or past_due',
  },
  not_pausable: {
    code: 'SVC-STATE-3401',
    status: 409,
    message: 'only an active or trialing subscription can be paused',
  },
  not_resumable: {
    code: 'SVC-STATE-3401',
    status: 409,
    message: 'only a paused subscription can be resumed',
  },
  not_retryable: {
    code: 'SVC-STATE-3401',
    status: 409,
    message: 'only a past_due subscription can be retried',
  },
  not_cancellable: {
    code: 'SVC-STATE-3401',
    status: 409,
    message: 'the subscription has already ended',
  },
  charge_in_progress: {
    code: 'SVC-STATE-3401',
    status: 409,
    message: 'a charge of this subscription is in progress; try again in a few seconds',
  },
  subscription_ended: {
    code: 'SVC-STATE-3401',
    status: 409,
    message: 'the subscription has ended',
  },
  card_token_revoked: {
    code: 'SVC-STATE-3401',
    status: 409,
    message: 'the card token is revoked',
  },
}

export const subscriptionsError = errorFactory(table)
