import type { FastifyRequest } from 'fastify'
import { AppError } from '../errors.ts'

// The dashboard API's caller (a dashboard user's JWT), as its guard (modules/dashboard) sets it
// on the request and the routes other modules register behind that guard (webhooks) read it.
// Here, in platform, so those modules need not import the dashboard module (which imports
// them for its web pages).

export interface DashboardAuth {
  userId: string
  merchantId: string
  email: string
}

declare module 'fastify' {
  interface FastifyRequest {
    dashboard: DashboardAuth | null
  }
}

/** The caller of a dashboard API route; 401 outside the dashboard's guarded context. */
export function dashboardAuthOf(request: FastifyRequest): DashboardAuth {
  if (!request.dashboard) {
    throw new AppError('SVC-GW-1003', 401, 'Authorization: Bearer <dashboard token> is required')
  }
  return request.dashboard
}
