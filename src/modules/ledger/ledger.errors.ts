import { errorFactory, type ErrorTable } from '../../platform/errors.ts'

// Operating errors only; broken money invariants are assertions (programmer errors). A
// caller translates these to its own module's codes at the call site (STYLE.md 4.3).
export type LedgerErrorCode = 'insufficient_balance'

const table: ErrorTable<LedgerErrorCode> = {
  insufficient_balance: {
    code: 'SVC-PAY-3502',
    status: 409,
    message: 'the amount exceeds the available balance',
  },
}

export const ledgerError = errorFactory(table)
export const isLedgerError = ledgerError.is
