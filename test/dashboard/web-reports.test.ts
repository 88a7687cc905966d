// Goal: the Reports section does what POST /v1/reports and GET /v1/balance-transactions do,
// through the same services: the balance transactions table shows the merchant's movements;
// a report made with the form is queued on the export machinery, listed with its status, and
// downloadable once built (its closing balance is the API's); a bad period shows its reason in
// role="alert"; a viewer sees the page but cannot create a report (403), finance can; the
// creation is in the audit log; another merchant's report is the 404 page.
// Method: the real app over HTTP, a cookie-jar client, the signed API to compare.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { parse } from 'csv-parse/sync'
import { listMailbox } from '../../src/modules/mail/index.ts'
import { buildExport } from '../../src/modules/transactions/index.ts'
import { startTestApp, type TestApp } from '../helpers/app.ts'
import {
  WebClient,
  alertOf,
  newDashboardMerchant,
  paidPayment,
  signedIn,
  tableText,
  type DashboardMerchant,
} from './_web.ts'

const PASSWORD = 'correct horse battery staple'

/** Invites a member with `role` (as the owner), accepts the link, signs the member in. */
async function member(h: TestApp, m: DashboardMerchant, role: string): Promise<WebClient> {
  const owner = await signedIn(h, m)
  const email = `${role}-${crypto.randomUUID()}@example.com`
  const invited = await owner.submit(
    '/dashboard/settings/team/invite',
    { email, role },
    '/dashboard/settings',
  )
  assert.equal(invited.status, 303, invited.text.slice(0, 300))
  const [mail] = await listMailbox(h.deps, { to: email, limit: 1 })
  const path = /\/dashboard\/invite\/[\w-]+/.exec(mail?.text ?? '')?.[0]
  assert.ok(path)
  const guest = new WebClient(h.url)
  const accepted = await guest.submit(path, { password: PASSWORD, passwordConfirm: PASSWORD }, path)
  assert.equal(accepted.status, 303, accepted.text.slice(0, 500))
  return signedIn(h, { email, password: PASSWORD })
}

function istanbulDay(date: Date): string {
  return new Date(date.getTime() + 3 * 3_600_000).toISOString().slice(0, 10)
}

test('a report made on the Reports page is built by the export machinery and adds up', async (t) => {
  const h = await startTestApp(t)
  const m = await newDashboardMerchant(h, 'Rapor Kitabevi')
  const { paymentId } = await paidPayment(m, 12_345)
  const web = await signedIn(h, m)

  const page = await web.get('/dashboard/reports')
  assert.equal(page.status, 200)
  const rows = tableText(page.text, 'balance-transactions')
  assert.ok(rows.includes(paymentId), rows)
  assert.ok(rows.includes('₺123,45'), rows)

  // A period that ends before it starts: the reason, and nothing queued.
  const today = istanbulDay(h.clock.now())
  const bad = await web.submit(
    '/dashboard/reports',
    { type: 'balance_summary', format: 'csv', from: today, to: '2020-01-01' },
    page,
  )
  assert.equal(bad.status, 200)
  assert.match(alertOf(bad.text) ?? '', /Geçerli bir dönem/)

  const created = await web.submit(
    '/dashboard/reports',
    { type: 'balance_summary', format: 'csv', from: '2020-01-01', to: today },
    page,
  )
  assert.equal(created.status, 303, created.text.slice(0, 400))
  const listed = await web.get('/dashboard/reports')
  const reportId = /rpt_[0-9a-z]{24}/.exec(tableText(listed.text, 'report-list'))?.[0]
  assert.ok(reportId, tableText(listed.text, 'report-list'))
  assert.match(tableText(listed.text, 'report-list'), /Sırada/)
  const api = await m.client.request<{ type: string; status: string }>(
    'GET',
    `/v1/reports/${reportId}`,
  )
  assert.deepEqual([api.status, api.body.type, api.body.status], [200, 'balance_summary', 'queued'])

  await buildExport(h.deps, reportId) // the job's body (no worker in tests)
  const ready = await web.get('/dashboard/reports')
  const link = new RegExp(`href="([^"]+/${reportId}/download)"`).exec(ready.text)?.[1]
  assert.ok(link, 'a download link once ready')
  const file = await web.get(link)
  assert.equal(file.status, 200)
  const lines = parse<Record<string, string>>(file.text, {
    bom: true,
    delimiter: ';',
    columns: true,
  })
  const closing = lines.find((l) => l['line'] === 'closing_balance')
  const balances = await m.client.request<{
    items: { ownerId: string; reserveMinor: number; availableMinor: number }[]
  }>('GET', '/v1/balances')
  const mine = balances.body.items.find((b) => b.ownerId === m.merchantId)
  assert.ok(mine)
  assert.equal(Number(closing?.['netMinor']), mine.reserveMinor + mine.availableMinor)

  const audit = await web.get('/dashboard/settings/audit-log')
  // In words, not the code (reports.create).
  const auditRows = tableText(audit.text, 'audit-table')
  assert.ok(auditRows.includes('Rapor oluşturuldu'), 'the creation is audited, in words')
  assert.ok(!auditRows.includes('reports.create'))

  // Another merchant's report is the 404 page.
  const other = await newDashboardMerchant(h, 'Başka Mağaza')
  const stranger = await signedIn(h, other)
  const foreign = await stranger.get(`/dashboard/reports/${reportId}/download`)
  assert.equal(foreign.status, 404)
})

test('a viewer reads the Reports page but may not create a report; finance may', async (t) => {
  const h = await startTestApp(t)
  const m = await newDashboardMerchant(h)
  const viewer = await member(h, m, 'viewer')
  const page = await viewer.get('/dashboard/reports')
  assert.equal(page.status, 200)
  assert.ok(!page.text.includes('action="/dashboard/reports"'), 'no form for a viewer')
  const today = istanbulDay(h.clock.now())
  const forged = await viewer.submit(
    '/dashboard/reports',
    { type: 'balance_summary', format: 'pdf', from: today, to: today },
    page,
  )
  assert.equal(forged.status, 403)

  const finance = await member(h, m, 'finance')
  const financePage = await finance.get('/dashboard/reports')
  assert.ok(financePage.text.includes('action="/dashboard/reports"'))
  const made = await finance.submit(
    '/dashboard/reports',
    { type: 'payout_reconciliation', format: 'pdf', from: today, to: today },
    financePage,
  )
  assert.equal(made.status, 303, made.text.slice(0, 400))
})
