// Payment links: a merchant's reusable pay page (/l/{hash}), its API and its QR code.
export { paymentLinksRoutes } from './payment-links.http.ts'
export { paymentLinkPagesRoutes } from './payment-links.pages.ts'
export {
  createPaymentLink,
  deactivatePaymentLink,
  getPaymentLink,
  listPaymentLinks,
} from './payment-links.service.ts'
export type { LinkStatus, PaymentLink } from './payment-links.service.ts'
// The API's body schema: the dashboard's form is checked against the same (issue 36).
export { CreateLinkBody } from './payment-links.schemas.ts'
export { paymentLinksMessages } from './payment-links.messages.ts'
