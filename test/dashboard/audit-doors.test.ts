// Goal: every door a person uses writes the same audit entry for the same action, inside the
// action's own transaction (issue 36, finding 2; decision 0036): the dashboard API's login is
// a sign-in, and its key, webhook and submerchant actions are recorded like the web pages'; an
// action whose audit entry cannot be written is not done (through the API, the web, each group
// of web actions, and the operator API); the operator API records each change it makes.
// Method: the real app over HTTP; the audit log read through the web page and the table; a
// test-only trigger that refuses one action's audit row, to show the action and its entry
// commit together.
import assert from 'node:assert/strict'
import { test, type TestContext } from 'node:test'
import { sql } from 'kysely'
import { startTestApp, type TestApp } from '../helpers/app.ts'
import { newDashboardMerchant as newApiMerchant, startReceiver } from '../webhooks/_support.ts'
import { listMailbox } from '../../src/modules/mail/index.ts'
import { signedIn, WebClient } from './_web.ts'

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

/** Makes the database refuse audit rows of one action (the test's own fault), until its end. */
async function refuseAuditOf(t: TestContext, h: TestApp, action: string): Promise<void> {
  t.after(() => sql`drop trigger if exists test_refuse_audit on audit_log`.execute(h.deps.db))
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

  // The merchant's creation through the operator API is its log's first entry (below).
  const rows = (await auditRows(h, m.merchantId)).filter((r) => r.details['door'] !== 'operator')
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
  await refuseAuditOf(t, h, 'api_key.create')

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

/** Makes the database refuse audit rows of these actions (the test's own fault), until its end. */
async function refuseAuditsOf(t: TestContext, h: TestApp, actions: string[]): Promise<void> {
  t.after(() => sql`drop trigger if exists test_refuse_audits on audit_log`.execute(h.deps.db))
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
  await refuseAuditsOf(t, h, [
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

async function countOf(
  h: TestApp,
  table:
    | 'dashboard_invitations'
    | 'payment_links'
    | 'invoices'
    | 'risk_list_items'
    | 'transaction_exports',
  merchantId: string,
): Promise<number> {
  const rows = await h.deps.db
    .selectFrom(table)
    .select('id')
    .where('merchant_id', '=', merchantId)
    .execute()
  return rows.length
}

test('each group of web actions: an entry that cannot be written leaves the action undone', async (t) => {
  const h = await startTestApp(t)
  const m = await newApiMerchant(h)
  const web = await signedIn(h, m)
  await refuseAuditsOf(t, h, [
    'team.invite',
    'payment_links.create',
    'invoice.create',
    'risk.list_add',
    'bank_account.update',
    'payout_schedule.update',
    'reports.create',
    'session.sign_out',
  ])

  // The team.
  const invite = await web.submit(
    '/dashboard/settings/team/invite',
    { email: 'yeni@example.com', role: 'viewer' },
    '/dashboard/settings',
  )
  assert.equal(invite.status, 500)
  assert.equal(await countOf(h, 'dashboard_invitations', m.merchantId), 0, 'no invitation')

  // Creations whose entry is recorded under their parent.
  const link = await web.submit(
    '/dashboard/payment-links',
    { storeId: m.storeId, description: 'Kupa', amount: '149,90' },
    '/dashboard/payment-links/new',
  )
  assert.equal(link.status, 500)
  assert.equal(await countOf(h, 'payment_links', m.merchantId), 0, 'no link')
  const invoice = await web.submit(
    '/dashboard/invoices',
    { storeId: m.storeId, line0Name: 'Roman', line0Qty: '1', line0Price: '125,50' },
    '/dashboard/invoices/new',
  )
  assert.equal(invoice.status, 500)
  assert.equal(await countOf(h, 'invoices', m.merchantId), 0, 'no invoice')
  const item = await web.submit(
    '/dashboard/risk/lists/ip/items',
    { value: '198.51.100.9' },
    '/dashboard/risk/lists/ip',
  )
  assert.equal(item.status, 500)
  assert.equal(await countOf(h, 'risk_list_items', m.merchantId), 0, 'no list item')
  const day = new Date().toISOString().slice(0, 10)
  const report = await web.submit(
    '/dashboard/reports',
    { type: 'balance_summary', format: 'csv', from: day, to: day },
    '/dashboard/reports',
  )
  assert.equal(report.status, 500)
  assert.equal(await countOf(h, 'transaction_exports', m.merchantId), 0, 'no report queued')

  // Settlement settings.
  const bank = await web.submit(
    '/dashboard/settings/bank-account',
    { iban: 'TR330006100519786457841326', holderName: 'Anadolu Kitap' },
    '/dashboard/settings/bank-account',
  )
  assert.equal(bank.status, 500)
  assert.equal((await h.clientFor(m).request('GET', '/v1/bank-account')).status, 404)
  const schedule = await web.submit(
    '/dashboard/settings/payout-schedule',
    { interval: 'daily', anchor: '', minimum: '10,00' },
    '/dashboard/settings/bank-account',
  )
  assert.equal(schedule.status, 500)
  const schedules = await h.deps.db
    .selectFrom('payout_schedules')
    .select('merchant_id')
    .where('merchant_id', '=', m.merchantId)
    .execute()
  assert.equal(schedules.length, 0, 'no schedule')

  // Signing out: the session stays open without its entry.
  const out = await web.submit('/dashboard/logout', {}, '/dashboard')
  assert.equal(out.status, 500)
  assert.equal((await web.get('/dashboard')).status, 200, 'still signed in')

  const rows = await auditRows(h, m.merchantId)
  assert.deepEqual(
    rows.filter((r) => r.details['door'] !== 'operator').map((r) => r.action),
    ['session.sign_in'],
  )
})

test('the invitation’s acceptance: no entry, no member', async (t) => {
  const h = await startTestApp(t)
  const m = await newApiMerchant(h)
  const web = await signedIn(h, m)
  const email = 'katilan@example.com'
  const invited = await web.submit(
    '/dashboard/settings/team/invite',
    { email, role: 'viewer' },
    '/dashboard/settings',
  )
  assert.equal(invited.status, 303)
  const [mail] = await listMailbox(h.deps, { to: email, limit: 1 })
  const path = /\/dashboard\/invite\/\S+/.exec(mail?.text ?? '')?.[0]
  assert.ok(path, 'the invitation link')
  await refuseAuditOf(t, h, 'team.join')
  const guest = new WebClient(h.url)
  const accepted = await guest.submit(
    path,
    { password: 'bir-uzun-parola-1', passwordConfirm: 'bir-uzun-parola-1' },
    path,
  )
  assert.equal(accepted.status, 500)
  const users = await h.deps.db
    .selectFrom('dashboard_users')
    .select('id')
    .where('email', '=', email)
    .execute()
  assert.equal(users.length, 0, 'no member without the entry')
})

test('the operator API: each change is recorded, actor operator, in the log of the merchant concerned or the platform’s', async (t) => {
  const h = await startTestApp(t)
  const created = await h.operator<{
    merchantId: string
    apiKeyId: string
    dashboard: { email: string; password: string }
  }>('POST', '/operator/v1/merchants', { name: 'Operatör Mağaza' })
  assert.equal(created.status, 201, JSON.stringify(created.body))
  const id = created.body.merchantId
  const store = await h.operator('POST', `/operator/v1/merchants/${id}/stores`, {})
  assert.equal(store.status, 201, JSON.stringify(store.body))
  const kyc = await h.operator('PUT', `/operator/v1/merchants/${id}/kyc`, { status: 'approved' })
  assert.equal(kyc.status, 200, JSON.stringify(kyc.body))
  const sub = await h.operator('POST', `/operator/v1/merchants/${id}/submerchants`, {
    name: 'Satıcı',
    iban: 'TR330006100519786457841326',
    holderName: 'Satıcı Ltd',
  })
  assert.equal(sub.status, 201, JSON.stringify(sub.body))
  const keyPath = `/operator/v1/merchants/${id}/api-keys/${created.body.apiKeyId}`
  assert.equal((await h.operator('POST', `${keyPath}/roll`)).status, 201)
  assert.equal((await h.operator('POST', `${keyPath}/revoke`)).status, 204)
  // A read is not an action.
  assert.equal((await h.operator('GET', `/operator/v1/merchants/${id}`)).status, 200)

  const rows = await auditRows(h, id)
  assert.deepEqual(
    rows.map((r) => r.action),
    [
      'operator.merchant_create',
      'operator.store_create',
      'operator.kyc_set',
      'submerchant.create',
      'api_key.roll',
      'api_key.revoke',
    ],
  )
  for (const row of rows) {
    assert.equal(row.actor_id, 'operator', row.action)
    assert.equal(row.details['door'], 'operator', row.action)
  }
  assert.equal(rows.find((r) => r.action === 'api_key.roll')?.target, created.body.apiKeyId)

  // Read back through the operator API, newest first.
  const log = await h.operator<{ items: { action: string; actorId: string }[] }>(
    'GET',
    `/operator/v1/audit-log?merchantId=${id}&limit=2`,
  )
  assert.equal(log.status, 200, JSON.stringify(log.body))
  assert.deepEqual(
    log.body.items.map((e) => e.action),
    ['api_key.revoke', 'api_key.roll'],
  )

  // What no merchant owns (the platform's POS accounts) goes to the platform's log.
  const pos = await h.operator<{ id: string }>('POST', '/operator/v1/pos-accounts', {
    provider: 'est_v3',
    name: 'Platform POS',
    environment: 'test',
    credentials: {
      bank: 'isbank',
      clientId: '700000001',
      username: 'api',
      password: 'p',
      storeKey: 'k',
    },
  })
  assert.equal(pos.status, 201, JSON.stringify(pos.body))
  assert.equal((await h.operator('DELETE', `/operator/v1/pos-accounts/${pos.body.id}`)).status, 204)
  const platform = await h.operator<{ items: { action: string; target: string | null }[] }>(
    'GET',
    '/operator/v1/audit-log',
  )
  assert.deepEqual(
    platform.body.items.slice(0, 2).map((e) => [e.action, e.target]),
    [
      ['pos_account.delete', pos.body.id],
      ['pos_account.create', null],
    ],
  )
  // The merchant's staff read who did it and what, in words, not the codes.
  const web = await signedIn(h, created.body.dashboard)
  const page = await web.get('/dashboard/settings/audit-log')
  assert.equal(page.status, 200)
  assert.match(page.text, /Kuruş operasyon ekibi/)
  assert.match(page.text, /Üye işyeri açıldı/)
  assert.match(page.text, /KYC durumu değişti/)
  assert.doesNotMatch(page.text, /operator\.(merchant_create|kyc_set|store_create)/)
})

test('the operator API: an action whose entry cannot be written is not done', async (t) => {
  const h = await startTestApp(t)
  const m = await newApiMerchant(h)
  const before = await keyCount(h, m.merchantId)
  await refuseAuditsOf(t, h, [
    'operator.kyc_set',
    'operator.store_create',
    'operator.merchant_create',
  ])

  const kyc = await h.operator('PUT', `/operator/v1/merchants/${m.merchantId}/kyc`, {
    status: 'rejected',
  })
  assert.equal(kyc.status, 500)
  const merchant = await h.operator<{ kycStatus: string }>(
    'GET',
    `/operator/v1/merchants/${m.merchantId}`,
  )
  assert.equal(merchant.body.kycStatus, 'approved', 'KYC unchanged')
  const store = await h.operator('POST', `/operator/v1/merchants/${m.merchantId}/stores`, {})
  assert.equal(store.status, 500)
  assert.equal(await keyCount(h, m.merchantId), before, 'no store, no key')
  const count = async () => (await h.deps.db.selectFrom('merchants').select('id').execute()).length
  const merchants = await count()
  const created = await h.operator('POST', '/operator/v1/merchants', { name: 'Olmayacak' })
  assert.equal(created.status, 500)
  assert.equal(await count(), merchants, 'no merchant')
})
