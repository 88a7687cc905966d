import { errorFactory, type ErrorTable } from '../../platform/errors.ts'

export type PaymentLinksErrorCode = 'link_not_found'

const table: ErrorTable<PaymentLinksErrorCode> = {
  link_not_found: { code: 'SVC-RES-3301', status: 404, message: 'payment link not found' },
}

export const paymentLinksError = errorFactory(table)
