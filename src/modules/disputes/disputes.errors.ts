import { errorFactory, type ErrorTable } from '../../platform/errors.ts'

export type DisputesErrorCode = 'chargeback_not_found' | 'chargeback_resolved'

const table: ErrorTable<DisputesErrorCode> = {
  chargeback_not_found: { code: 'SVC-RES-3301', status: 404, message: 'chargeback not found' },
  chargeback_resolved: {
    code: 'SVC-STATE-3401',
    status: 409,
    message: 'the chargeback is already resolved',
  },
}

export const disputesError = errorFactory(table)
