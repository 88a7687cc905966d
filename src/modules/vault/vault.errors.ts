import { errorFactory, type ErrorTable } from '../../platform/errors.ts'

export type VaultErrorCode =
  | 'invalid_card'
  | 'card_token_not_found'
  | 'card_token_revoked'
  | 'card_token_used'
  | 'card_bound_to_other_customer'

const table: ErrorTable<VaultErrorCode> = {
  invalid_card: { code: 'SVC-VAL-3001', status: 400, message: 'card details are invalid' },
  card_token_not_found: { code: 'SVC-RES-3301', status: 404, message: 'card token not found' },
  card_token_used: {
    code: 'SVC-STATE-3401',
    status: 409,
    message:
      'this card token was made in a browser for one order: it is used by another order, or ' +
      'its 15 minutes are over; ask the buyer for the card again',
  },
  card_token_revoked: {
    code: 'SVC-STATE-3401',
    status: 409,
    message: 'card token is revoked and cannot be used',
  },
  card_bound_to_other_customer: {
    code: 'SVC-RES-3302',
    status: 409,
    message: 'card token is already attached to another customer',
  },
}

export const vaultError = errorFactory(table)
