// Cross-module invariants of the books (`kurus check-ledger`, test/reliability). Read-only.
export { auditBooks } from './audit.service.ts'
// The dashboard's audit log of what people did.
export { AUDIT_PAGE_MAX, audited, listAuditEntries, recordAuditEntry } from './audit-log.service.ts'
export type { AuditInput } from './audit-log.service.ts'
