// The dashboard API: login (JWT) and the guarded context other modules' dashboard routes
// (webhooks) are registered in.
export { dashboardApi, dashboardAuthOf } from './dashboard.http.ts'
export type { DashboardApiOptions, DashboardAuth } from './dashboard.http.ts'
// The merchant dashboard's web pages under /dashboard (sessions, CSRF, roles, audit log).
export { dashboardPagesRoutes } from './dashboard.pages.ts'
export type { DashboardPagesOptions } from './dashboard.pages.ts'
