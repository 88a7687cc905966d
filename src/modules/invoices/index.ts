// Invoices: line items, a public pay link with a hosted page, PDF and email. Other modules
// import only this file.
export { invoicesRoutes, invoicesPublicRoutes } from './invoices.http.ts'
export { invoicePagesRoutes } from './invoices.pages.ts'
export { invoicesReconcilers } from './invoices.jobs.ts'
export {
  createPaidRenewalInvoice,
  getInvoice,
  reencryptInvoicePublicHashes,
} from './invoices.service.ts'
export type { PaidRenewalInvoiceInput } from './invoices.service.ts'
export type { Invoice } from './invoice-view.ts'
export type { InvoiceStatus, LineItem } from './invoices.table.ts'
