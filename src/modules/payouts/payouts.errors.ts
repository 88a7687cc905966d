import { errorFactory, type ErrorTable } from '../../platform/errors.ts'

export type PayoutsErrorCode =
  | 'draft_not_found'
  | 'draft_not_approvable'
  | 'draft_not_cancellable'
  | 'draft_has_no_valid_rows'
  | 'payout_not_found'
  | 'insufficient_funds'
  | 'outside_limits'
  | 'scope_forbidden'
  | 'rail_unsupported'
  | 'idempotency_mismatch'

const table: ErrorTable<PayoutsErrorCode> = {
  draft_not_found: { code: 'SVC-RES-3301', status: 404, message: 'payout draft not found' },
  draft_not_approvable: {
    code: 'SVC-STATE-3401',
    status: 409,
    message: 'only a draft in status draft can be approved',
  },
  draft_not_cancellable: {
    code: 'SVC-STATE-3401',
    status: 409,
    message: 'an approved payout draft cannot be cancelled',
  },
  draft_has_no_valid_rows: {
    code: 'SVC-STATE-3401',
    status: 409,
    message: 'the payout draft has no valid rows to pay out',
  },
  payout_not_found: { code: 'SVC-RES-3301', status: 404, message: 'payout not found' },
  insufficient_funds: {
    code: 'SVC-PAY-3502',
    status: 409,
    message: 'the payout exceeds the available balance',
  },
  outside_limits: {
    code: 'SVC-PAY-3503',
    status: 400,
    message: "the payout is outside the submerchant's payout limits",
  },
  scope_forbidden: {
    code: 'SVC-AUTH-3201',
    status: 403,
    message: 'a submerchant key may only act for its own submerchant',
  },
  rail_unsupported: {
    code: 'SVC-VAL-3001',
    status: 400,
    message: 'rail: a submerchant is paid to the IBAN on file; use fast or eft',
  },
  // The gateway's code: the key's first request made a payout with other terms.
  idempotency_mismatch: {
    code: 'SVC-GW-2001',
    status: 409,
    message: 'Idempotency-Key was already used with a different payload',
  },
}

export const payoutsError = errorFactory(table)
