// Goal: the dashboard's "Hakedişler" for settlement to the merchant's own bank account: an
// owner sets the bank account (the API's rules, a bad IBAN is shown on the form and nothing
// changes) and the schedule; admin and viewer may not change the bank account (no form;
// a forged POST is 403), finance may; the payouts page shows the upcoming payout and the
// past ones, and a payout's page explains it per type and line by line, summing to its
// amount; a negative balance is shown with the note that it is netted.
// Method: the real app over HTTP, a cookie-jar client, the signed API and the test clock.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { startTestApp } from '../helpers/app.ts'
import { CARDS, charge } from '../helpers/payments.ts'
import { raise } from '../disputes/_support.ts'
import { reconcile, trIban } from '../payouts/_support.ts'
import { actionWords, auditText, forged, memberWeb } from './_sections.ts'
import { newDashboardMerchant, signedIn, tableText, textOf } from './_web.ts'

const ist = (local: string) => new Date(`${local}+03:00`)

test('an owner sets the bank account and schedule; the settlement payout is explained on its page', async (t) => {
  const h = await startTestApp(t)
  const m = await newDashboardMerchant(h)
  h.clock.set(ist('2026-12-01T09:00:00'))
  let web = await signedIn(h, m)

  const empty = await web.get('/dashboard/payouts/settlement')
  assert.equal(empty.status, 200)
  assert.match(textOf(empty.text, 'upcoming-note') ?? '', /Banka hesabı yok/)

  const bad = await web.submit(
    '/dashboard/settings/bank-account',
    { iban: 'TR000000000000000000000000', holderName: 'Anadolu Kitap' },
    '/dashboard/settings/bank-account',
  )
  assert.equal(bad.status, 400)
  assert.match(bad.text, /iban: IBAN check digits/)
  assert.equal((await m.client.request('GET', '/v1/bank-account')).status, 404)

  const iban = trIban('1234567890121326')
  const ok = await web.submit(
    '/dashboard/settings/bank-account',
    { iban, holderName: 'Anadolu Kitap Ltd. Şti.' },
    '/dashboard/settings/bank-account',
  )
  assert.equal(ok.status, 303, ok.text.slice(0, 300))
  const api = await m.client.request<{ last4: string; holderName: string }>(
    'GET',
    '/v1/bank-account',
  )
  assert.equal(api.body.last4, '1326')
  const settings = await web.get('/dashboard/settings/bank-account')
  assert.match(textOf(settings.text, 'bank-account') ?? '', /1326$/)
  assert.ok(!settings.text.includes(iban), 'the IBAN is never shown in full')
  assert.ok((await auditText(web)).includes(actionWords('bank_account.update')))

  const sched = await web.submit(
    '/dashboard/settings/payout-schedule',
    { interval: 'daily', anchor: '', minimum: '10,00' },
    '/dashboard/settings/bank-account',
  )
  assert.equal(sched.status, 303, sched.text.slice(0, 300))
  const schedule = await m.client.request<{ interval: string; minimumMinor: number }>(
    'GET',
    '/v1/payout-schedule',
  )
  assert.deepEqual([schedule.body.interval, schedule.body.minimumMinor], ['daily', 1_000])

  await reconcile(m.client) // today's run: nothing yet
  const { res } = await charge(m.client, CARDS.frictionless, 20_000)
  assert.equal(res.status, 201)
  await reconcile(m.client)
  const upcoming = await web.get('/dashboard/payouts/settlement')
  assert.equal(textOf(upcoming.text, 'upcoming-date'), '2026-12-02')

  h.clock.set(ist('2026-12-02T09:00:00'))
  await reconcile(m.client)
  await reconcile(m.client)
  web = await signedIn(h, m) // a day later the session has ended
  const list = await web.get('/dashboard/payouts/settlement')
  const rows = tableText(list.text, 'settlement-table')
  assert.match(rows, /2026-12-02/)
  assert.match(rows, /Ödendi/)
  const link = /href="\/dashboard\/payouts\/settlement\/([0-9a-f-]{36})"/.exec(list.text)
  assert.ok(link?.[1])
  const page = await web.get(`/dashboard/payouts/settlement/${link[1]}`)
  assert.equal(page.status, 200)
  const amount = textOf(page.text, 'payout-amount')
  assert.equal(textOf(page.text, 'summary-total'), amount, 'the summary sums to the amount')
  assert.match(tableText(page.text, 'summary-table'), /Satış/)
  assert.match(tableText(page.text, 'lines-table'), new RegExp(res.body.paymentId))

  // A chargeback after the payout: the balance is shown negative, with the netting note.
  const cb = await raise(m, res.body.paymentId)
  assert.equal(cb.status, 201)
  const negative = await web.get('/dashboard/payouts/settlement')
  assert.match(textOf(negative.text, 'available-balance') ?? '', /-/)
  assert.match(textOf(negative.text, 'upcoming-note') ?? '', /düşülür/)

  const other = await newDashboardMerchant(h, 'Başka')
  const theirs = await signedIn(h, other)
  assert.equal((await theirs.get(`/dashboard/payouts/settlement/${link[1]}`)).status, 404)
})

test('admin and viewer may not change the bank account; finance may', async (t) => {
  const h = await startTestApp(t)
  const m = await newDashboardMerchant(h)
  const iban = trIban('2222')
  for (const role of ['admin', 'viewer']) {
    const web = await memberWeb(h, m, role)
    const page = await web.get('/dashboard/settings/bank-account')
    assert.equal(page.status, 200)
    assert.ok(!page.text.includes('id="bank-account-form"'), `${role}: no form`)
    const tried = await web.submit(
      '/dashboard/settings/bank-account',
      { iban, holderName: 'Kötü Niyet' },
      page,
    )
    assert.equal(tried.status, 403, role)
  }
  assert.equal((await m.client.request('GET', '/v1/bank-account')).status, 404)
  const finance = await memberWeb(h, m, 'finance')
  const noCsrf = await forged(finance, '/dashboard/settings/bank-account', {
    iban,
    holderName: 'Finans',
  })
  assert.equal(noCsrf.status, 403)
  const done = await finance.submit(
    '/dashboard/settings/bank-account',
    { iban, holderName: 'Anadolu Kitap' },
    '/dashboard/settings/bank-account',
  )
  assert.equal(done.status, 303)
  assert.equal((await m.client.request('GET', '/v1/bank-account')).status, 200)
})
