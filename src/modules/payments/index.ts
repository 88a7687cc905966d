// Payments: checkout sessions, card charges with 3DS, capture, void, retrieval.
export {
  paymentsRoutes,
  paymentsPublicRoutes,
  paymentsSandboxRoutes,
  paymentJson,
} from './payments.http.ts'
export {
  createLinkSession,
  createSession,
  getSessionById,
  paymentLinkUsage,
  getSessionByTransactionId,
  expireSessions,
} from './sessions.service.ts'
export type { Session, CreateSessionInput, LinkUsage } from './sessions.service.ts'
export { cancelSession } from './session-cancel.service.ts'
export { chargeCard, settleAuthorization } from './charge.service.ts'
export { getPayment, complete3ds } from './payments.service.ts'
export { capturePayment, voidPayment, AUTHORIZATION_EXPIRED } from './captures.service.ts'
export type { CaptureInput } from './captures.service.ts'
export { computeCommission } from './commission.ts'
export type { CaptureView, Payment, PaymentDetail } from './payment-view.ts'
export { paymentsReconcilers } from './payments.jobs.ts'
export { refundPayment, listRefunds } from './refunds.service.ts'
export { holdChargeback, releaseChargeback } from './chargeback-holds.service.ts'
export {
  auditPaymentsPage,
  searchPayments,
  findPaymentWithRefunds,
  PAYMENT_STATUSES,
  SEARCH_LIMIT_MAX,
  type PaymentSearchEntry,
  type PaymentSearchFilter,
  type SearchPosition,
} from './search.service.ts'
export { completedRefundFigures, dailyPaymentFigures } from './figures.service.ts'
export type { DayFigures } from './figures.service.ts'
export { quoteInstallments } from './payments.service.ts'
export type { InstallmentOption } from './payments.service.ts'
export { payQrSession, qrPayloadForSession } from './qr.service.ts'
export { buildEmvPayload, crc16CcittFalse, emvAmount, emvCrcValid, parseTlv } from './emv-qr.ts'
export { completeSession, getPaymentForChallenge, getSessionPayment } from './hosted.service.ts'
export { chargeSavedCard, findPaymentByTransactionId } from './mit.service.ts'
export type { SavedCardCharge } from './mit.service.ts'
