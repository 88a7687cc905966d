import { errorFactory, type ErrorTable } from '../../platform/errors.ts'

export type DashboardErrorCode =
  | 'bad_credentials'
  | 'token_missing'
  | 'token_invalid'
  | 'api_key_not_accepted'
  | 'api_key_not_found'

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
}

export const dashboardError = errorFactory(table)
