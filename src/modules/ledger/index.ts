// The ledger module's public surface. Other modules import only this file.
export { apportionCapture, commissionRefundFor, PLATFORM_OWNER_ID } from './ledger.postings.ts'
export type { OwnerApportionment, Share } from './ledger.postings.ts'
export {
  allPaymentsLedgerTotals,
  balancesFor,
  checkLedger,
  legsForPayment,
  listUnsettledReserveCredits,
  ownerBalance,
  paymentLedgerTotals,
  postCapture,
  postChargeback,
  postChargebackReversal,
  postPayoutCreated,
  postPayoutFailed,
  postPayoutPaid,
  postPayoutsCreated,
  postRefund,
  postSettlement,
  settleReserveCredit,
} from './ledger.service.ts'
export type { LegView, OwnerBalance, PaymentLedgerTotals, ReserveCredit } from './ledger.service.ts'
export type { AccountType, Direction, EntryKind, OwnerType } from './ledger.table.ts'
export type { LedgerErrorCode } from './ledger.errors.ts'
// Balance transactions and finance reports (issue 27): read-only views of an owner's legs.
export {
  BALANCE_TRANSACTION_TYPES,
  balanceBefore,
  balanceSummary,
  balanceTransactionBatches,
  findPayout,
  listBalanceTransactions,
  payoutAllocationBatches,
  payoutAllocationPage,
  payoutBatches,
} from './balance.service.ts'
export type {
  ActivityLine,
  BalanceOwner,
  BalanceSummary,
  BalanceTransaction,
  BalanceTransactionType,
  PayoutAllocation,
  PayoutHeader,
} from './balance.service.ts'
