// The ledger module's public surface. Other modules import only this file.
export {
  apportionCapture,
  capturedCommission,
  captureStepCommission,
  commissionRefundFor,
  refundStepCommission,
  PLATFORM_OWNER_ID,
} from './ledger.postings.ts'
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
