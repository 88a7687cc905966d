// Goal: the CLI's dashboard sign-in (`kurus listen`) handles the two-factor challenge the API
// login answers for a user with two-factor on (issue 36; CONTRACT § "Dashboard sign-in
// everywhere"): without a code it says what to pass; with the app's current code, or one of the
// user's recovery codes, it signs in and registers its endpoint.
// Method: the real app; two-factor enrolled through the web pages; `listen` from
// src/merchant-cli.ts called as the command calls it; the endpoint read back through the
// dashboard API.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { listen } from '../../src/merchant-cli.ts'
import { startTestApp, type TestApp } from '../helpers/app.ts'
import {
  newDashboardMerchant,
  signedIn,
  textOf,
  totpCode,
  type DashboardMerchant,
  type WebClient,
} from '../dashboard/_web.ts'

async function enrol(h: TestApp, web: WebClient) {
  const page = await web.get('/dashboard/settings/two-factor')
  const secret = textOf(page.text, 'totp-secret') ?? ''
  const ok = await web.submit(
    '/dashboard/settings/two-factor/enrol',
    { code: totpCode(h, secret) },
    page,
  )
  assert.equal(ok.status, 303)
  const shown = await web.get('/dashboard/settings/two-factor')
  const list = /id="recovery-codes"[^>]*>([\s\S]*?)<\/ol>/.exec(shown.text)?.[1] ?? ''
  const codes = [...list.matchAll(/<code>([^<]+)<\/code>/g)].map((m) => m[1] ?? '')
  h.clock.advance(30_000)
  return { secret, codes }
}

function listenAs(h: TestApp, m: DashboardMerchant, code?: string) {
  return listen({
    baseUrl: h.url,
    login: { email: m.email, password: m.password, ...(code ? { code } : {}) },
    storeId: m.storeId,
    forwardTo: 'http://127.0.0.1:9/hooks',
    out: () => undefined,
  })
}

test('kurus listen answers the two-factor challenge with --code (app or recovery code)', async (t) => {
  const h = await startTestApp(t)
  const m = await newDashboardMerchant(h)
  const { secret, codes } = await enrol(h, await signedIn(h, m))

  await assert.rejects(listenAs(h, m), /two-factor: pass --code/)
  await assert.rejects(listenAs(h, m, '000000'), /401/)

  const withApp = await listenAs(h, m, totpCode(h, secret))
  assert.match(withApp.endpointId, /^\w+_/)
  await withApp.stop()
  // Stopping signs its token out (POST /v1/dashboard/logout) instead of leaving it to idle.
  const signOuts = await h.deps.db
    .selectFrom('audit_log')
    .select('action')
    .where('merchant_id', '=', m.merchantId)
    .where('action', '=', 'session.sign_out')
    .execute()
  assert.equal(signOuts.length, 1)

  const withRecovery = await listenAs(h, m, codes[0])
  assert.match(withRecovery.endpointId, /^\w+_/)
  await withRecovery.stop()
})
