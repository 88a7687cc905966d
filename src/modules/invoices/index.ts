// Invoices: line items, a public pay link with a hosted page, PDF and email. Other modules
// import only this file.
export { invoicesRoutes, invoicesPublicRoutes } from './invoices.http.ts'
export { invoicePagesRoutes } from './invoices.pages.ts'
export { invoicesReconcilers } from './invoices.jobs.ts'
export { createPaidRenewalInvoice, reencryptInvoicePublicHashes } from './invoices.service.ts'
