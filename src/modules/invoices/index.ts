// Invoices: line items, a public pay link with a hosted page, PDF and email. Other modules
// import only this file.
export { invoicesRoutes, invoicesPublicRoutes } from './invoices.http.ts'
export { invoicePagesRoutes } from './invoices.pages.ts'
export { invoicesReconcilers } from './invoices.jobs.ts'
export {
  cancelInvoice,
  createInvoice,
  createPaidRenewalInvoice,
  getInvoice,
  listInvoices,
  reencryptInvoicePublicHashes,
  sendInvoice,
  activateInvoice,
} from './invoices.service.ts'
export { merchantInvoicePdf } from './public.service.ts'
export { invoiceUrl } from './invoice-view.ts'
export type { Invoice } from './invoice-view.ts'
export type { InvoiceStatus, LineItem } from './invoices.table.ts'
export { PDF_FONT_FILES } from './invoice-pdf.ts'
export { formatDateTr, formatTryTr } from './money-format.ts'
// The API's body schemas: the dashboard's forms are checked against the same (issue 36).
export { CreateInvoiceBody } from './invoices.schemas.ts'
export { invoicesMessages } from './invoices.messages.ts'
