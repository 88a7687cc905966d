// The merchant's API request log: each signed request's metadata, written in batches off the
// request path, read through GET /v1/logs (`kurus logs tail`), purged after the retention.
export { installRequestLog, requestLogsRoutes } from './request-logs.http.ts'
export { requestLogsReconcilers } from './request-logs.jobs.ts'
