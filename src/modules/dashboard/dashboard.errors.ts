import { errorFactory, type ErrorTable } from '../../platform/errors.ts'

export type DashboardErrorCode =
  | 'bad_credentials'
  | 'token_missing'
  | 'token_invalid'
  | 'api_key_not_accepted'
  | 'api_key_not_found'

const table: ErrorTable<DashboardErrorCode> = {
  // One message for a wrong email and a wrong password: it must not tell which exists.
  bad_credentials: { code: 'SVC-GW-1003', status: 401, message: 'email or password is wrong' },
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
