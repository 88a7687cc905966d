// Goal: the risk settings pages (rules and block lists, under Reviews) act through the risk
// module as the API does: a rule written in the form is the API's rule; a condition that is
// not JSON, or names an unknown fact or operator, is shown at the text area with the service's
// reason and nothing is saved; backtest counts what the API's backtest counts; enable, disable,
// edit and delete (after a confirmation) are what the API then reports, each audited; list
// entries are added (a malformed value refused at the field) and removed; only owners and
// admins change anything (no forms for others, forged POST 403); no CSRF token changes
// nothing; another merchant's rule or entry is the 404 page, an unknown list too.
// Method: the real app over HTTP, a cookie-jar client, the signed API to make and check data.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { startTestApp } from '../helpers/app.ts'
import { addItem, createRule } from '../risk/_support.ts'
import { actionWords, auditText, forged, memberWeb } from './_sections.ts'
import {
  alertOf,
  newDashboardMerchant,
  paidPayment,
  signedIn,
  tableText,
  textOf,
  type DashboardMerchant,
} from './_web.ts'

interface RuleBody {
  id: string
  name: string
  action: string
  enabled: boolean
  condition: unknown
}

async function apiRules(m: DashboardMerchant) {
  const res = await m.client.request<{ items: RuleBody[] }>('GET', '/v1/risk/rules')
  assert.equal(res.status, 200)
  return res.body.items
}

async function apiItems(m: DashboardMerchant, list: string) {
  const res = await m.client.request<{ items: { id: string; value: string }[] }>(
    'GET',
    `/v1/risk/lists/${list}/items`,
  )
  assert.equal(res.status, 200)
  return res.body.items
}

test('rules: invalid conditions shown at the field, create, backtest, disable, edit, delete', async (t) => {
  const h = await startTestApp(t)
  const m = await newDashboardMerchant(h)
  const big = await paidPayment(m, 30_000)
  await paidPayment(m, 5_000)
  const web = await signedIn(h, m)
  const page = await web.get('/dashboard/risk/rules')
  assert.equal(page.status, 200)
  assert.match(page.text, /Henüz kural yok/)

  const notJson = await web.submit(
    '/dashboard/risk/rules',
    { name: 'Yüksek', action: 'block', condition: '{">=": [amount' },
    page,
  )
  assert.equal(notJson.status, 400)
  assert.match(textOf(notJson.text, 'f-condition-error') ?? '', /JSON nesnesi/)
  assert.ok(alertOf(notJson.text))
  assert.match(notJson.text, /id="f-condition"[^>]*aria-invalid="true"/)

  const unknownFact = await web.submit(
    '/dashboard/risk/rules',
    { name: 'Yüksek', action: 'block', condition: '{">=": [{"var": "card.colour"}, 1]}' },
    page,
  )
  assert.equal(unknownFact.status, 400)
  assert.match(textOf(unknownFact.text, 'f-condition-error') ?? '', /card\.colour/)
  // What was typed stays in the form.
  assert.match(unknownFact.text, /card\.colour&quot;\}, 1\]\}<\/textarea>/)
  const noName = await web.submit(
    '/dashboard/risk/rules',
    { name: '', action: 'block', condition: '{">=": [{"var": "amount"}, 1]}' },
    page,
  )
  assert.equal(noName.status, 400)
  assert.ok(textOf(noName.text, 'f-name-error'))
  assert.deepEqual(await apiRules(m), [], 'nothing was saved')

  const condition = '{">=": [{"var": "amount"}, 20000]}'
  const tried = await web.submit(
    '/dashboard/risk/rules/backtest',
    { name: 'Yüksek tutar', action: 'review', condition },
    page,
  )
  assert.equal(tried.status, 200)
  assert.equal(textOf(tried.text, 'backtest-matched'), '1')
  assert.match(tried.text, new RegExp(`href="/dashboard/payments/${big.paymentId}"`))
  const api = await m.client.request<{ matched: number }>('POST', '/v1/risk/rules/backtest', {
    body: { condition: JSON.parse(condition) as unknown },
  })
  assert.equal(api.body.matched, 1)
  assert.deepEqual(await apiRules(m), [], 'a backtest saves nothing')

  const created = await web.submit(
    '/dashboard/risk/rules',
    { name: 'Yüksek tutar', action: 'review', condition, enabled: '1' },
    tried,
  )
  assert.equal(created.status, 303, created.text.slice(0, 300))
  const [rule] = await apiRules(m)
  assert.ok(rule)
  assert.equal(created.location, `/dashboard/risk/rules/${rule.id}`)
  assert.deepEqual(
    { name: rule.name, action: rule.action, enabled: rule.enabled, condition: rule.condition },
    {
      name: 'Yüksek tutar',
      action: 'review',
      enabled: true,
      condition: JSON.parse(condition) as unknown,
    },
  )
  const rulePage = await web.get(created.location)
  assert.match(rulePage.text, /role="status"[\s\S]*Kural oluşturuldu/)
  assert.equal(textOf(rulePage.text, 'rule-status'), 'Etkin')

  const disabled = await web.submit(`/dashboard/risk/rules/${rule.id}/disable`, {}, rulePage)
  assert.equal(disabled.status, 303)
  assert.equal((await apiRules(m))[0]?.enabled, false)

  const badEdit = await web.submit(
    `/dashboard/risk/rules/${rule.id}`,
    { name: 'Yüksek tutar', condition: '{"regex": [{"var": "ip"}, "x"]}' },
    rulePage,
  )
  assert.equal(badEdit.status, 400)
  assert.match(textOf(badEdit.text, 'f-condition-error') ?? '', /regex/)
  assert.deepEqual((await apiRules(m))[0]?.condition, JSON.parse(condition))
  const edited = await web.submit(
    `/dashboard/risk/rules/${rule.id}`,
    { name: 'Çok yüksek', condition: '{">": [{"var": "amount"}, 40000]}' },
    rulePage,
  )
  assert.equal(edited.status, 303)
  assert.equal((await apiRules(m))[0]?.name, 'Çok yüksek')

  const bt = await web.submit(`/dashboard/risk/rules/${rule.id}/backtest`, {}, rulePage)
  assert.equal(bt.status, 200)
  assert.equal(textOf(bt.text, 'backtest-matched'), '0')

  const ask = await web.submit(`/dashboard/risk/rules/${rule.id}/delete`, {}, rulePage)
  assert.equal(ask.status, 200)
  assert.equal((await apiRules(m)).length, 1, 'not deleted before the confirmation')
  const deleted = await web.submit(
    `/dashboard/risk/rules/${rule.id}/delete`,
    { confirm: 'yes' },
    ask,
  )
  assert.equal(deleted.status, 303)
  assert.deepEqual(await apiRules(m), [])

  const log = await auditText(web)
  for (const action of ['rule_create', 'rule_disable', 'rule_update', 'rule_delete']) {
    assert.ok(log.includes(actionWords(`risk.${action}`)), action)
  }
})

test('block lists: add, a malformed value refused at the field, remove; an unknown list is 404', async (t) => {
  const h = await startTestApp(t)
  const m = await newDashboardMerchant(h)
  const web = await signedIn(h, m)
  const page = await web.get('/dashboard/risk/lists/email')
  assert.equal(page.status, 200)
  const added = await web.submit(
    '/dashboard/risk/lists/email/items',
    { value: 'Dolandirici@Example.com', note: 'iki ters ibraz' },
    page,
  )
  assert.equal(added.status, 303)
  const [item] = await apiItems(m, 'email')
  assert.equal(item?.value, 'dolandirici@example.com')
  const after = await web.get('/dashboard/risk/lists/email')
  const rows = tableText(after.text, 'list-table')
  assert.ok(rows.includes('dolandirici@example.com') && rows.includes('iki ters ibraz'), rows)

  const twice = await web.submit(
    '/dashboard/risk/lists/email/items',
    { value: 'dolandirici@example.com' },
    after,
  )
  assert.equal(twice.status, 409)
  assert.match(alertOf(twice.text) ?? '', /listede zaten var/)

  const bin = await web.get('/dashboard/risk/lists/bin')
  const badBin = await web.submit('/dashboard/risk/lists/bin/items', { value: '41' }, bin)
  assert.equal(badBin.status, 400)
  assert.match(textOf(badBin.text, 'f-value-error') ?? '', /ilk 6 hanesi/)
  assert.deepEqual(await apiItems(m, 'bin'), [])

  const removed = await web.submit(
    `/dashboard/risk/lists/email/items/${item?.id ?? ''}/remove`,
    {},
    after,
  )
  assert.equal(removed.status, 303)
  assert.deepEqual(await apiItems(m, 'email'), [])
  assert.equal((await web.get('/dashboard/risk/lists/phone')).status, 404)
  const log = await auditText(web)
  assert.ok(
    log.includes(actionWords('risk.list_add')) && log.includes(actionWords('risk.list_remove')),
  )
})

test('roles, CSRF and tenancy on rules and lists', async (t) => {
  const h = await startTestApp(t)
  const m = await newDashboardMerchant(h)
  const other = await newDashboardMerchant(h, 'Başka Mağaza')
  const ruleId = await createRule(m.client, 'block', { '>': [{ var: 'amount' }, 1] })
  const theirRule = await createRule(other.client, 'block', { '>': [{ var: 'amount' }, 1] })
  const theirItem = await addItem(other.client, 'ip', '203.0.113.9')

  for (const role of ['finance', 'developer', 'viewer']) {
    const member = await memberWeb(h, m, role)
    const rules = await member.get('/dashboard/risk/rules')
    assert.equal(rules.status, 200)
    assert.doesNotMatch(rules.text, /id="rule-form"/, `${role}: no form`)
    const rule = await member.get(`/dashboard/risk/rules/${ruleId}`)
    assert.doesNotMatch(rule.text, /\/disable"/, `${role}: no buttons`)
    const lists = await member.get('/dashboard/risk/lists/ip')
    assert.doesNotMatch(lists.text, /id="add-entry"/)
    assert.equal(
      (await member.submit(`/dashboard/risk/rules/${ruleId}/disable`, {}, rule)).status,
      403,
    )
    assert.equal(
      (await member.submit('/dashboard/risk/lists/ip/items', { value: '198.51.100.1' }, lists))
        .status,
      403,
    )
  }
  const admin = await memberWeb(h, m, 'admin')
  assert.equal((await forged(admin, `/dashboard/risk/rules/${ruleId}/disable`)).status, 403)
  assert.equal(
    (await forged(admin, '/dashboard/risk/rules', { name: 'x', action: 'block', condition: '{}' }))
      .status,
    403,
  )
  assert.equal((await apiRules(m))[0]?.enabled, true)
  assert.equal((await apiRules(m)).length, 1)
  assert.deepEqual(await apiItems(m, 'ip'), [])

  assert.equal((await admin.get(`/dashboard/risk/rules/${theirRule}`)).status, 404)
  const foreign = await admin.submit(
    `/dashboard/risk/rules/${theirRule}/disable`,
    {},
    '/dashboard/risk/rules',
  )
  assert.equal(foreign.status, 404)
  assert.equal((await apiRules(other))[0]?.enabled, true)
  const foreignItem = await admin.submit(
    `/dashboard/risk/lists/ip/items/${theirItem.id}/remove`,
    {},
    '/dashboard/risk/lists/ip',
  )
  assert.equal(foreignItem.status, 404)
  assert.equal((await apiItems(other, 'ip')).length, 1)
  assert.doesNotMatch((await admin.get('/dashboard/risk/rules')).text, new RegExp(theirRule))

  const done = await admin.submit(
    `/dashboard/risk/rules/${ruleId}/disable`,
    {},
    '/dashboard/risk/rules',
  )
  assert.equal(done.status, 303)
  assert.equal((await apiRules(m))[0]?.enabled, false)
})
