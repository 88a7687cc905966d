import { errorFactory, type ErrorTable } from '../../platform/errors.ts'

export type InvoicesErrorCode =
  | 'invoice_not_found'
  | 'not_sendable'
  | 'not_activatable'
  | 'not_cancellable'
  | 'not_payable'
  | 'payment_in_progress'

const table: ErrorTable<InvoicesErrorCode> = {
  invoice_not_found: { code: 'SVC-RES-3301', status: 404, message: 'invoice not found' },
  not_sendable: {
    code: 'SVC-STATE-3401',
    status: 409,
    message: 'only a draft invoice can be sent',
  },
  not_activatable: {
    code: 'SVC-STATE-3401',
    status: 409,
    message: 'only a draft invoice can be activated',
  },
  not_cancellable: {
    code: 'SVC-STATE-3401',
    status: 409,
    message: 'a paid, expired or cancelled invoice cannot be cancelled',
  },
  not_payable: {
    code: 'SVC-STATE-3401',
    status: 409,
    message: 'this invoice can no longer be paid',
  },
  payment_in_progress: {
    code: 'SVC-STATE-3401',
    status: 409,
    message: 'a payment of this invoice is in progress; try again in a minute',
  },
}

export const invoicesError = errorFactory(table)
