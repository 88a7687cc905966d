import { errorFactory, type ErrorTable } from '../../platform/errors.ts'

export type MerchantsErrorCode =
  | 'merchant_not_found'
  | 'store_not_found'
  | 'submerchant_not_found'
  | 'api_key_not_found'
  | 'api_key_revoked'
  | 'kyc_not_approved'
  | 'invalid_iban'
  | 'dashboard_user_not_found'
  | 'dashboard_email_taken'
  | 'last_owner'

const table: ErrorTable<MerchantsErrorCode> = {
  merchant_not_found: { code: 'SVC-RES-3301', status: 404, message: 'merchant not found' },
  store_not_found: { code: 'SVC-RES-3301', status: 404, message: 'store not found' },
  submerchant_not_found: { code: 'SVC-RES-3301', status: 404, message: 'submerchant not found' },
  api_key_not_found: { code: 'SVC-RES-3301', status: 404, message: 'API key not found' },
  api_key_revoked: {
    code: 'SVC-STATE-3401',
    status: 409,
    message: 'API key is revoked or already rolled',
  },
  kyc_not_approved: {
    code: 'SVC-KYC-3101',
    status: 403,
    message: 'KYC status must be approved to move money',
  },
  invalid_iban: { code: 'SVC-VAL-3001', status: 400, message: 'iban: not a valid Turkish IBAN' },
  dashboard_user_not_found: {
    code: 'SVC-RES-3301',
    status: 404,
    message: 'dashboard user not found',
  },
  dashboard_email_taken: {
    code: 'SVC-RES-3302',
    status: 409,
    message: 'email: a dashboard user with this email already exists',
  },
  // A team always keeps someone who can manage it.
  last_owner: {
    code: 'SVC-STATE-3401',
    status: 409,
    message: 'the last owner cannot be removed or given another role',
  },
}

export const merchantsError = errorFactory(table)
