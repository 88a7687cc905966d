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
