import { errorFactory, type ErrorTable } from '../../platform/errors.ts'

export type DashboardErrorCode =
  | 'bad_credentials'
  | 'token_missing'
  | 'token_invalid'
  | 'api_key_not_accepted'
  | 'api_key_not_found'
  | 'forbidden'
  | 'invitation_invalid'
  | 'totp_code_wrong'
  | 'two_factor_required'
  | 'two_factor_self_first'
  | 'two_factor_enrolment_required'
  | 'challenge_invalid'
  | 'two_factor_code_wrong'

const table: ErrorTable<DashboardErrorCode> = {
  // One answer for a wrong email, a wrong password and a locked email: it must not tell which
  // emails exist nor which one is locked. It names the lockout so a locked-out user knows to wait.
  bad_credentials: {
    code: 'SVC-GW-1003',
    status: 401,
    message:
      'email or password is wrong (after 5 failed attempts in 15 minutes, sign-in for that email is locked for 15 minutes)',
  },
  token_missing: {
    code: 'SVC-GW-1003',
    status: 401,
    message: 'Authorization: Bearer <dashboard token> is required',
  },
  token_invalid: {
    code: 'SVC-GW-1003',
    status: 401,
    message: 'the dashboard token is invalid or expired; log in again',
  },
  api_key_not_accepted: {
    code: 'SVC-GW-1003',
    status: 401,
    message: 'API keys are not accepted by the dashboard API; use a dashboard token',
  },
  api_key_not_found: { code: 'SVC-RES-3301', status: 404, message: 'API key not found' },
  // The web dashboard's own refusals (dashboard.pages.ts shows them as HTML pages or alerts).
  forbidden: {
    code: 'SVC-AUTH-3201',
    status: 403,
    message: 'your dashboard role does not allow this',
  },
  invitation_invalid: {
    code: 'SVC-RES-3301',
    status: 404,
    message: 'this invitation link is not valid: it was used, revoked or has expired',
  },
  totp_code_wrong: { code: 'SVC-VAL-3001', status: 400, message: 'the code is not valid' },
  // Owners and admins of a merchant that requires two-factor cannot turn theirs off.
  two_factor_required: {
    code: 'SVC-STATE-3401',
    status: 409,
    message: 'two-factor sign-in is required for owners and admins of this merchant',
  },
  two_factor_self_first: {
    code: 'SVC-STATE-3401',
    status: 409,
    message: 'turn on two-factor sign-in for yourself before requiring it of the team',
  },
  // The dashboard API's login of an owner or admin who must use two-factor and has none.
  two_factor_enrolment_required: {
    code: 'SVC-AUTH-3201',
    status: 403,
    message:
      'this merchant requires two-factor sign-in of owners and admins: set it up in the web dashboard first',
  },
  challenge_invalid: {
    code: 'SVC-GW-1003',
    status: 401,
    message:
      'the two-factor challenge is invalid, used or expired (5 minutes, 5 wrong codes); log in again',
  },
  two_factor_code_wrong: {
    code: 'SVC-GW-1003',
    status: 401,
    message: 'the two-factor code is not valid',
  },
}

export const dashboardError = errorFactory(table)
