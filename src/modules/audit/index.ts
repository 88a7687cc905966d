// Cross-module invariants of the books (`kurus check-ledger`, test/reliability). Read-only.
export { auditBooks, paymentProblems } from './audit.service.ts'
export type { AuditReport } from './audit.service.ts'
