// Goal: every door a person uses writes the same audit entry for the same action, inside the
// action's own transaction (issue 36, finding 2; decision 0036): the dashboard API's login is
// a sign-in, and its key, webhook and submerchant actions are recorded like the web pages'; an
// action whose audit entry cannot be written is not done (through the API and the web).
// Method: the real app over HTTP; the audit log read through the web page and the table; a
// test-only trigger that refuses one action's audit row, to show the action and its entry
// commit together.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { sql } from 'kysely'
import { startTestApp, type TestApp } from '../helpers/app.ts'
import { newDashboardMerchant as newApiMerchant, startReceiver } from '../webhooks/_support.ts'
import { signedIn } from './_web.ts'

async function auditRows(h: TestApp, merchantId: string) {
  return h.deps.db
    .selectFrom('audit_log')
    .select(['actor_id', 'action', 'target', 'details'])
    .where('merchant_id', '=', merchantId)
    .orderBy('at')
    .orderBy('id')
    .execute()
}

async function keyCount(h: TestApp, merchantId: string): Promise<number> {
  const rows = await h.deps.db
    .selectFrom('api_keys')
    .select('id')
    .where('merchant_id', '=', merchantId)
    .execute()
  return rows.length
}

/** Makes the database refuse audit rows of one action (the test's own fault). */
async function refuseAuditOf(h: TestApp, action: string): Promise<void> {
  await sql
    .raw(
      `create or replace function test_refuse_audit() returns trigger language plpgsql as $$
       begin
         if new.action = '${action}' then raise exception 'audit refused by the test'; end if;
         return new;
       end $$`,
    )
    .execute(h.deps.db)
  await sql`create trigger test_refuse_audit before insert on audit_log
    for each row execute function test_refuse_audit()`.execute(h.deps.db)
}

test('the dashboard API: its login and its actions are audited like the web’s', async (t) => {
  const h = await startTestApp(t)
  const m = await newApiMerchant(h)
  const receiver = await startReceiver(t)
  const key = await m.dash<{ apiKeyId: string }>('POST', `/v1/stores/${m.storeId}/api-keys`, {})
  assert.equal(key.status, 201)
  const roll = await m.dash(
    'POST',
    `/v1/stores/${m.storeId}/api-keys/${key.body.apiKeyId}/roll`,
    {},
  )
  assert.equal(roll.status, 200)
  const hook = await m.dash<{ id: string }>('POST', `/v1/stores/${m.storeId}/webhooks`, {
    url: receiver.url,
  })
  assert.equal(hook.status, 201)
  assert.equal(
    (await m.dash('GET', `/v1/stores/${m.storeId}/webhooks/callback-secret`)).status,
    200,
  )
  assert.equal(
    (await m.dash('DELETE', `/v1/stores/${m.storeId}/webhooks/${hook.body.id}`)).status,
    204,
  )
  assert.equal(
    (await m.dash('DELETE', `/v1/stores/${m.storeId}/api-keys/${key.body.apiKeyId}`)).status,
    204,
  )
  const sub = await m.dash('POST', '/v1/dashboard/submerchants', {
    name: 'Satıcı',
    iban: 'TR330006100519786457841326',
    holderName: 'Satıcı Ltd',
  })
  assert.equal(sub.status, 201, JSON.stringify(sub.body))
  // A read is not an action.
  assert.equal((await m.dash('GET', `/v1/stores/${m.storeId}/api-keys`)).status, 200)

  const rows = await auditRows(h, m.merchantId)
  assert.deepEqual(
    rows.map((r) => r.action),
    [
      'session.sign_in',
      'api_key.create',
      'api_key.roll',
      'webhook.create',
      'webhook.callback_secret_read',
      'webhook.delete',
      'api_key.revoke',
      'submerchant.create',
    ],
  )
  const actors = new Set(rows.map((r) => r.actor_id))
  assert.equal(actors.size, 1)
  assert.match([...actors][0] ?? '', /^usr_/)
  for (const row of rows) assert.equal(row.details['door'], 'dashboard_api', row.action)
  assert.equal(rows.find((r) => r.action === 'api_key.roll')?.target, key.body.apiKeyId)

  // The web's audit log page shows them.
  const web = await signedIn(h, m)
  const page = await web.get('/dashboard/settings/audit-log')
  for (const action of ['api_key.create', 'webhook.delete', 'submerchant.create']) {
    assert.ok(page.text.includes(action), action)
  }
})

test('an action whose audit entry cannot be written is not done, through the API and the web', async (t) => {
  const h = await startTestApp(t)
  const m = await newApiMerchant(h)
  const web = await signedIn(h, m)
  const before = await keyCount(h, m.merchantId)
  await refuseAuditOf(h, 'api_key.create')

  const viaApi = await m.dash<{ code: string }>('POST', `/v1/stores/${m.storeId}/api-keys`, {})
  assert.equal(viaApi.status, 500)
  const viaWeb = await web.submit(
    '/dashboard/developers/keys',
    { storeId: m.storeId },
    '/dashboard/developers',
  )
  assert.equal(viaWeb.status, 500)
  assert.equal(await keyCount(h, m.merchantId), before, 'no key without its audit entry')
})
