// Goal: every dashboard page route that changes something declares the rule of its use case,
// `{schema, permission, kyc}` (issue 36, "A page route declares {schema, permission, kyc}; no
// page handler restates a rule"): the schema is the API route's body schema the form's input
// is checked against (page-rules.ts `pageInput`), the permission is checked before the handler.
// This test is the lint rule: it fails when a POST page route declares no rule, or a rule
// without a schema or a permission.
// The routes in NOT_YET predate the rule and still check their input and permission in their
// handlers (issue 36 open). The list may only shrink: a route added to the dashboard is not in
// it and fails here until it declares its rule; a listed route that declares one fails here
// until it is taken off the list.
// Method: the real app; the rules as the dashboard's context recorded them at registration.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { pageRouteRules } from '../../src/modules/dashboard/index.ts'
import { startTestApp } from '../helpers/app.ts'

const NOT_YET = new Set([
  'POST /dashboard/login',
  'POST /dashboard/login/two-factor',
  'POST /dashboard/logout',
  'POST /dashboard/invite/:token',
  'POST /dashboard/payments/export',
  'POST /dashboard/customers/:id/cards/:cardId/remove',
  'POST /dashboard/payment-links/:id/deactivate',
  'POST /dashboard/chargebacks/:id/evidence',
  'POST /dashboard/chargebacks/:id/evidence/submit',
  'POST /dashboard/chargebacks/:id/evidence/files',
  'POST /dashboard/chargebacks/:id/evidence/files/:fileId/remove',
  'POST /dashboard/chargebacks/:id/accept',
  'POST /dashboard/chargebacks/:id/reverse',
  'POST /dashboard/risk/rules/backtest',
  'POST /dashboard/risk/rules/:id',
  'POST /dashboard/risk/rules/:id/enable',
  'POST /dashboard/risk/rules/:id/disable',
  'POST /dashboard/risk/rules/:id/backtest',
  'POST /dashboard/risk/rules/:id/delete',
  'POST /dashboard/risk/lists/:list/items/:id/remove',
  'POST /dashboard/settings/bank-account',
  'POST /dashboard/settings/payout-schedule',
  'POST /dashboard/reports',
  'POST /dashboard/developers/keys',
  'POST /dashboard/developers/keys/:keyId/roll',
  'POST /dashboard/developers/keys/:keyId/revoke',
  'POST /dashboard/developers/webhooks',
  'POST /dashboard/developers/webhooks/:id/rotate',
  'POST /dashboard/developers/webhooks/:id/delete',
  'POST /dashboard/developers/webhooks/deliveries/:id/redeliver',
  'POST /dashboard/settings/team/invite',
  'POST /dashboard/settings/team/invitations/:id/revoke',
  'POST /dashboard/settings/team/:userId/role',
  'POST /dashboard/settings/team/:userId/remove',
  'POST /dashboard/settings/two-factor/enrol',
  'POST /dashboard/settings/two-factor/disable',
  'POST /dashboard/settings/two-factor/recovery-codes',
  'POST /dashboard/settings/two-factor/required',
])

test('every state-changing page route declares {schema, permission, kyc}', async (t) => {
  await startTestApp(t)
  const rules = pageRouteRules()
  const posts = [...rules].filter(([route]) => /^(POST|PUT|PATCH|DELETE) /.test(route))
  assert.ok(posts.length > 20, 'the dashboard registered its page routes')
  const missing: string[] = []
  const incomplete: string[] = []
  const listedButDeclared: string[] = []
  for (const [route, rule] of posts) {
    if (!rule) {
      if (!NOT_YET.has(route)) missing.push(route)
      continue
    }
    if (NOT_YET.has(route)) listedButDeclared.push(route)
    const schema = rule.schema as { type?: unknown; anyOf?: unknown } | undefined
    if (typeof rule.permission !== 'string' || !schema || (!schema.type && !schema.anyOf)) {
      incomplete.push(route)
    }
  }
  assert.deepEqual(missing, [], 'page routes without a declared rule')
  assert.deepEqual(incomplete, [], 'rules without a schema or a permission')
  assert.deepEqual(listedButDeclared, [], 'declared now: take them off NOT_YET')
  const gone = [...NOT_YET].filter((route) => !rules.has(route))
  assert.deepEqual(gone, [], 'NOT_YET names routes that no longer exist')
})
