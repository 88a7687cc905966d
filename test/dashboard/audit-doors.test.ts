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
  // In words, whatever the door (api_key.create, webhook.delete, submerchant.create).
  for (const words of [
    'API anahtarı oluşturuldu',
    'Webhook silindi',
    'Alt üye işyeri oluşturuldu',
  ]) {
    assert.ok(page.text.includes(words), words)
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

/** Makes the database refuse audit rows of these actions (the test's own fault). */
async function refuseAuditsOf(h: TestApp, actions: string[]): Promise<void> {
  const list = actions.map((a) => `'${a}'`).join(', ')
  await sql
    .raw(
      `create or replace function test_refuse_audits() returns trigger language plpgsql as $$
       begin
         if new.action in (${list}) then raise exception 'audit refused by the test'; end if;
         return new;
       end $$`,
    )
    .execute(h.deps.db)
  await sql`create trigger test_refuse_audits before insert on audit_log
    for each row execute function test_refuse_audits()`.execute(h.deps.db)
}

test('web actions whose entry used to be written after them: no entry, no action', async (t) => {
  const h = await startTestApp(t)
  const m = await newApiMerchant(h)
  const web = await signedIn(h, m)
  const api = h.clientFor(m)
  const link = await api.request<{ id: string }>('POST', '/v1/payment-links', {
    body: { storeId: m.storeId, amount: 5_000, description: 'Kupa' },
  })
  assert.equal(link.status, 201, JSON.stringify(link.body))
  const rule = await api.request<{ id: string }>('POST', '/v1/risk/rules', {
    body: { name: 'Büyük', action: 'review', condition: { '>=': [{ var: 'amount' }, 500_000] } },
  })
  assert.equal(rule.status, 201, JSON.stringify(rule.body))
  const item = await api.request<{ id: string }>('POST', '/v1/risk/lists/ip/items', {
    body: { value: '198.51.100.7' },
  })
  assert.equal(item.status, 201, JSON.stringify(item.body))
  await refuseAuditsOf(h, [
    'payment_links.deactivate',
    'risk.rule_disable',
    'risk.rule_delete',
    'risk.list_remove',
    'two_factor.require',
  ])

  const deactivate = await web.submit(
    `/dashboard/payment-links/${link.body.id}/deactivate`,
    {},
    `/dashboard/payment-links/${link.body.id}`,
  )
  assert.equal(deactivate.status, 500)
  const after = await api.request<{ active: boolean }>('GET', `/v1/payment-links/${link.body.id}`)
  assert.equal(after.body.active, true, 'the link stays active without its entry')

  const disable = await web.submit(
    `/dashboard/risk/rules/${rule.body.id}/disable`,
    {},
    `/dashboard/risk/rules/${rule.body.id}`,
  )
  assert.equal(disable.status, 500)
  const del = await web.submit(
    `/dashboard/risk/rules/${rule.body.id}/delete`,
    { confirm: 'yes' },
    `/dashboard/risk/rules/${rule.body.id}`,
  )
  assert.equal(del.status, 500)
  const ruleNow = await api.request<{ enabled: boolean }>('GET', `/v1/risk/rules/${rule.body.id}`)
  assert.equal(ruleNow.status, 200, 'not deleted')
  assert.equal(ruleNow.body.enabled, true, 'not disabled')

  const remove = await web.submit(
    `/dashboard/risk/lists/ip/items/${item.body.id}/remove`,
    {},
    '/dashboard/risk/lists/ip',
  )
  assert.equal(remove.status, 500)
  const items = await api.request<{ items: { id: string }[] }>('GET', '/v1/risk/lists/ip/items')
  assert.ok(
    items.body.items.some((i) => i.id === item.body.id),
    'the entry is still listed',
  )

  const rows = await auditRows(h, m.merchantId)
  for (const action of ['payment_links.deactivate', 'risk.rule_disable', 'risk.list_remove']) {
    assert.ok(!rows.some((r) => r.action === action), action)
  }
})
