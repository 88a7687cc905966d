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
// Balance transactions and finance reports (issue 27): read-only views of an owner's legs.
export {
  balanceBefore,
  balanceSummary,
  findPayout,
  listBalanceTransactions,
  payoutAllocationBatches,
  payoutAllocationPage,
  payoutBatches,
} from './balance.service.ts'
export type {
  BalanceOwner,
  BalanceSummary,
  BalanceTransaction,
  BalanceTransactionType,
  PayoutAllocation,
  PayoutHeader,
} from './balance.service.ts'
