import { errorFactory, type ErrorTable } from '../../platform/errors.ts'

export type RiskErrorCode =
  | 'list_not_found'
  | 'list_item_not_found'
  | 'list_item_exists'
  | 'rule_not_found'
  | 'too_many_rules'
  | 'review_not_found'
  | 'review_closed'
  | 'review_payment_not_authorized'

const table: ErrorTable<RiskErrorCode> = {
  list_not_found: {
    code: 'SVC-RES-3301',
    status: 404,
    message: 'no such list: card_fingerprint, email, ip, bin or customer_id',
  },
  list_item_not_found: { code: 'SVC-RES-3301', status: 404, message: 'list item not found' },
  list_item_exists: {
    code: 'SVC-RES-3302',
    status: 409,
    message: 'this value is already on the list',
  },
  rule_not_found: { code: 'SVC-RES-3301', status: 404, message: 'rule not found' },
  too_many_rules: {
    code: 'SVC-VAL-3001',
    status: 400,
    message: 'a merchant has at most 100 rules; delete one first',
  },
  review_not_found: { code: 'SVC-RES-3301', status: 404, message: 'review not found' },
  review_closed: { code: 'SVC-STATE-3401', status: 409, message: 'the review is already closed' },
  review_payment_not_authorized: {
    code: 'SVC-STATE-3401',
    status: 409,
    message:
      'the payment is no longer authorized: a review is approved or rejected only from authorized',
  },
}

export const riskError = errorFactory(table)
