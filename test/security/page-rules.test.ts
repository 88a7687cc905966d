// Goal: every dashboard page route that changes something declares the rule of its use case,
// `{schema, permission, kyc}` (issue 36, "A page route declares {schema, permission, kyc}; no
// page handler restates a rule"): the schema is the API route's body schema the form's input
// is checked against (page-rules.ts `pageInput`), the permission and the KYC gate are checked
// before the handler. This test is the lint rule: it fails when a POST page route declares no
// rule, or a rule without a schema or a permission, or when a route other than the sign-in
// steps declares itself `public` (needing no session).
// Method: the real app; the rules as the dashboard's context recorded them at registration.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { pageRouteRules } from '../../src/modules/dashboard/index.ts'
import { startTestApp } from '../helpers/app.ts'

// The steps before a full session (signing in, the second factor, enrolment, signing out) and
// what a mailed link opens (an invitation, a password reset, an email change confirmed from
// the new address): the person has no full session there yet.
const PUBLIC = [
  'POST /dashboard/account/email/:token',
  'POST /dashboard/invite/:token',
  'POST /dashboard/login',
  'POST /dashboard/login/two-factor',
  'POST /dashboard/logout',
  'POST /dashboard/password/forgot',
  'POST /dashboard/password/reset/:token',
  'POST /dashboard/settings/two-factor/enrol',
]

// The API's KYC-gated routes that have a page: money in (capture, review approve, resume,
// invoice send/activate) or out (payout draft approve).
const KYC = [
  'POST /dashboard/invoices/:id/activate',
  'POST /dashboard/invoices/:id/send',
  'POST /dashboard/payments/:id/capture',
  'POST /dashboard/payouts/drafts/:id/approve',
  'POST /dashboard/reviews/:id/approve',
  'POST /dashboard/subscriptions/:id/resume',
]

test('every state-changing page route declares {schema, permission, kyc}', async (t) => {
  await startTestApp(t)
  const rules = pageRouteRules()
  const posts = [...rules].filter(([route]) => /^(POST|PUT|PATCH|DELETE) /.test(route))
  assert.ok(posts.length > 50, 'the dashboard registered its page routes')
  const missing: string[] = []
  const incomplete: string[] = []
  for (const [route, rule] of posts) {
    if (!rule) {
      missing.push(route)
      continue
    }
    const schema = rule.schema as { type?: unknown; anyOf?: unknown } | undefined
    if (typeof rule.permission !== 'string' || !schema || (!schema.type && !schema.anyOf)) {
      incomplete.push(route)
    }
  }
  assert.deepEqual(missing, [], 'page routes without a declared rule')
  assert.deepEqual(incomplete, [], 'rules without a schema or a permission')
  const open = posts.filter(([, rule]) => rule?.permission === 'public').map(([route]) => route)
  assert.deepEqual(open.sort(), PUBLIC, 'only the sign-in steps and mailed links need no session')
  const gated = posts.filter(([, rule]) => rule?.kyc === true).map(([route]) => route)
  assert.deepEqual(gated.sort(), KYC, 'the KYC gate where the API has it')
})
