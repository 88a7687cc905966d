// The dashboard API: login (JWT) and the guarded context other modules' dashboard routes
// (webhooks) are registered in.
export { dashboardApi } from './dashboard.http.ts'
// The merchant dashboard's web pages under /dashboard (sessions, CSRF, roles, audit log).
export { dashboardPagesRoutes } from './dashboard.pages.ts'
// Each page route's declared {schema, permission, kyc} (test/security/page-rules.test.ts).
export { pageRouteRules } from './page-rules.ts'
export { dashboardMessages } from './dashboard.messages.ts'
