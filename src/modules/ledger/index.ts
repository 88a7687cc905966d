// The ledger module's public surface. Other modules import only this file.
export { isLedgerError } from './ledger.errors.ts'
export {
  apportionCapture,
  capturedCommission,
  captureStepCommission,
  commissionRefundFor,
  refundStepCommission,
} from './ledger.postings.ts'
export type { Share } from './ledger.postings.ts'
export {
  postCapture,
  postChargeback,
  postChargebackReversal,
  postRefund,
  postSettlement,
} from './ledger.service.ts'
export {
  listUnsettledReserveCredits,
  lockedOwnerBalance,
  postPayoutCreated,
  postPayoutFailed,
  postPayoutPaid,
  postPayoutsCreated,
  settleReserveCredit,
} from './settlement.service.ts'
export type { ReserveCredit } from './settlement.service.ts'
export {
  allPaymentsLedgerTotals,
  balancesFor,
  checkLedger,
  legsForPayment,
  ownerBalance,
  paymentLedgerTotals,
} from './ledger-reads.service.ts'
export type { LegView, OwnerBalance, PaymentLedgerTotals } from './ledger-reads.service.ts'
// Balance transactions and finance reports (issue 27): read-only views of an owner's legs.
export {
  balanceBefore,
  balanceSummary,
  findPayout,
  listBalanceTransactions,
  payoutAllocationBatches,
  payoutAllocationPage,
  payoutBatches,
  payoutWindowPage,
} from './balance.service.ts'
export type {
  BalanceOwner,
  BalanceSummary,
  BalanceTransaction,
  BalanceTransactionType,
  PayoutAllocation,
  PayoutHeader,
} from './balance.service.ts'
