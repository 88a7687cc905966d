// Payments: checkout sessions, card charges with 3DS, capture, void, retrieval.
export { paymentsRoutes, paymentsPublicRoutes, paymentsSandboxRoutes } from './payments.http.ts'
export {
  createLinkSession,
  createSession,
  getSessionById,
  paymentLinkUsage,
  getSessionByTransactionId,
} from './sessions.service.ts'
export type { Session, LinkUsage } from './sessions.service.ts'
export { cancelSession } from './session-cancel.service.ts'
export { chargeCard } from './charge.service.ts'
export { installRiskPort } from './risk-port.ts'
export { isDeclined, isPaymentsError } from './payments.errors.ts'
export { isRiskBlocked } from './risk-check.ts'
export type {
  RiskAssessment,
  RiskDecision,
  RiskFacts,
  RiskPort,
  RiskScreen,
  ScreenFacts,
} from './risk-port.ts'
export { getPaymentRiskFacts, riskFactsSince } from './risk-facts.service.ts'
export { getPayment, complete3ds } from './payments.service.ts'
export {
  capturePayment,
  expireClockAuthorizations,
  nextAuthorizationExpiryOnClock,
  voidPayment,
} from './captures.service.ts'
export type { Payment } from './payment-view.ts'
export type { PaymentStatus, RefundStatus } from './payments.table.ts'
export {
  // The API's body schemas the dashboard's forms are checked against (issue 36).
  CaptureBody,
  RefundBody,
  VoidBody,
  PaymentListQuery as PaymentListQuerySchema,
  PaymentStatus as PaymentStatusSchema,
  RefundStatus as RefundStatusSchema,
} from './payments.schemas.ts'
export { paymentsReconcilers } from './payments.jobs.ts'
export { refundPayment } from './refunds.service.ts'
export { holdChargeback, releaseChargeback } from './chargeback-holds.service.ts'
export {
  auditPaymentsPage,
  searchPayments,
  findPaymentWithRefunds,
  PAYMENT_STATUSES,
  isPaymentStatus,
  type PaymentSearchEntry,
  type PaymentSearchFilter,
  type SearchPosition,
} from './search.service.ts'
export { completedRefundFigures, dailyPaymentFigures } from './figures.service.ts'
export type { DayFigures } from './figures.service.ts'
export { quoteInstallments } from './payments.service.ts'
export { payQrSession, qrPayloadForSession } from './qr.service.ts'
export { buildEmvPayload, crc16CcittFalse, emvAmount, emvCrcValid, parseTlv } from './emv-qr.ts'
export { completeSession, getPaymentForChallenge, getSessionPayment } from './hosted.service.ts'
export { chargeSavedCard, findPaymentByTransactionId } from './mit.service.ts'
