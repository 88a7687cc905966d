import { errorFactory, type ErrorTable } from '../../platform/errors.ts'

export type CustomersErrorCode =
  | 'customer_not_found'
  | 'external_id_taken'
  | 'email_taken'
  | 'card_not_found'
  | 'no_default_card'
  | 'card_token_revoked'
  | 'too_many_cards'

const table: ErrorTable<CustomersErrorCode> = {
  customer_not_found: { code: 'SVC-RES-3301', status: 404, message: 'customer not found' },
  external_id_taken: {
    code: 'SVC-RES-3302',
    status: 409,
    message: 'a customer with this externalId already exists',
  },
  email_taken: {
    code: 'SVC-RES-3302',
    status: 409,
    message: 'a customer with this email already exists',
  },
  card_not_found: { code: 'SVC-RES-3301', status: 404, message: 'customer card not found' },
  no_default_card: {
    code: 'SVC-RES-3301',
    status: 404,
    message: 'the customer has no default card',
  },
  card_token_revoked: {
    code: 'SVC-STATE-3401',
    status: 409,
    message: 'card token is revoked (its card was detached) and cannot be attached again',
  },
  too_many_cards: {
    code: 'SVC-VAL-3001',
    status: 400,
    message: 'cardToken: the customer already has the maximum number of cards',
  },
}

export const customersError = errorFactory(table)
