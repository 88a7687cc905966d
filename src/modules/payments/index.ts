// Payments: checkout sessions, card charges with 3DS, capture, void, retrieval.
export {
  paymentsRoutes,
  paymentsPublicRoutes,
  paymentsSandboxRoutes,
  paymentJson,
} from './payments.http.ts'
export {
  createSession,
  getSessionById,
  getSessionByTransactionId,
  expireSessions,
} from './sessions.service.ts'
export type { Session, CreateSessionInput } from './sessions.service.ts'
export { chargeCard, settleAuthorization } from './charge.service.ts'
export { capturePayment, voidPayment, getPayment, complete3ds } from './payments.service.ts'
export { computeCommission } from './commission.ts'
export type { Payment } from './payment-view.ts'
export { paymentsReconcilers } from './payments.jobs.ts'
export { refundPayment, listRefunds } from './refunds.service.ts'
