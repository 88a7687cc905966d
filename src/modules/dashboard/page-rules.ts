import type { FastifyRequest, RouteOptions } from 'fastify'
import type { Deps } from '../../database.ts'
import type { AppError } from '../../platform/errors.ts'
import { inputError } from '../../platform/http/input-rules.ts'
import { assertKycApproved } from '../merchants/index.ts'
import { dashboardError } from './dashboard.errors.ts'
import { can, type Permission } from './permissions.ts'

// A dashboard page route that changes something declares what the API's route for the same
// use case declares (issue 36, decision 0036): `{schema, permission, kyc}`.
// - schema: the API's TypeBox body schema of the use case; the handler builds the use case's
//   input from the form and `pageInput` checks it against that schema with the API's
//   validator (bidi and control characters, emails, integer maxima), so no page restates a rule.
// - permission: checked for every request before the handler. `public`: the sign-in steps, which
//   need no session (or a half one: dashboardAccess says which); `signedIn`: any active member
//   acting on their own account (two-factor), whatever the role.
// - kyc: the merchant's KYC must be approved, as the API's gate (money in or out); the pages no
//   longer check it in their handlers.
// test/security/page-rules.test.ts fails when a POST page route declares no rule.

export interface PageRule {
  permission: Permission | 'public' | 'signedIn'
  schema: object
  kyc?: boolean
}

declare module 'fastify' {
  interface FastifyContextConfig {
    page?: PageRule
  }
}

/** A page route's options declaring its rule: `app.post(url, pageRoute({...}), handler)`. */
export function pageRoute(rule: PageRule): { config: { page: PageRule } } {
  return { config: { page: rule } }
}

const declared = new Map<string, PageRule | undefined>()

/** Remembers each page route's rule as it is registered (for the rule test). */
export function notePageRoute(route: RouteOptions, prefix: string): void {
  const methods = Array.isArray(route.method) ? route.method : [route.method]
  const url = route.url.startsWith(prefix) ? route.url : `${prefix}${route.url}`
  for (const method of methods) {
    if (method === 'HEAD') continue
    declared.set(`${method} ${url}`, (route.config as { page?: PageRule } | undefined)?.page)
  }
}

/** Every page route registered so far, with its rule (undefined: none declared). */
export function pageRouteRules(): ReadonlyMap<string, PageRule | undefined> {
  return declared
}

/** The preHandler's part: the declared permission and KYC gate, before any handler runs. */
export async function enforcePageRule(deps: Deps, request: FastifyRequest): Promise<void> {
  const rule = request.routeOptions.config.page
  if (!rule || rule.permission === 'public') return
  const session = request.dashSession
  if (session?.stage !== 'active') throw dashboardError('forbidden')
  if (rule.permission !== 'signedIn' && !can(session.member.role, rule.permission)) {
    throw dashboardError('forbidden')
  }
  if (rule.kyc) await assertKycApproved(deps, session.member.merchantId)
}

/**
 * The use case's input built from the form, checked against the route's declared schema:
 * undefined when it passes, else the API's 400 (fields named as the API names them).
 */
export function pageInput(request: FastifyRequest, input: unknown): AppError | undefined {
  const rule = request.routeOptions.config.page
  if (!rule) throw new Error(`${request.routeOptions.url ?? ''} declares no page rule`)
  return inputError(rule.schema, input)
}
