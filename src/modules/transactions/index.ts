// Transactions: the read model over payments (lists, details, ledger legs) and statement exports.
export { transactionsRoutes } from './transactions.http.ts'
export { transactionsJobs, transactionsReconcilers } from './transactions.jobs.ts'
export { listTransactions, getTransaction, getTransactionLedger } from './transactions.service.ts'
export type { TransactionDetail } from './transactions.service.ts'
export { createExport, getExport, buildExport, openExportDownload } from './exports.service.ts'
// Balance transactions and finance reports (issue 27; docs/reports.md).
export { reportsRoutes } from './reports.http.ts'
export { listBalanceTransactionsPage } from './balance-transactions.service.ts'
export { createReport, getReport, listReports, openReportDownload } from './reports.service.ts'
export type { ReportType } from './reports.service.ts'
// The API's body schemas of the dashboard's export and report forms (issue 36).
export { CreateExportBody, CreateReportBody } from './transactions.schemas.ts'
