// Goal: the subscriptions pages act through the subscriptions service as the API does: the
// list and the detail show what the API holds; Pause, Resume and Cancel (now, or at the end of
// the period) change what the API then reports, each audited; a refused action shows its
// reason in role="alert" and changes nothing; support may act, viewer and finance may not;
// a forged POST without CSRF token changes nothing; another merchant's subscription is the
// 404 page. Method: the real app over HTTP, a cookie-jar client, the signed API to check.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { startTestApp } from '../helpers/app.ts'
import { createSubscription, customerWithCard, getSub } from '../subscriptions/_support.ts'
import { actionWords, auditText, forged, memberWeb } from './_sections.ts'
import { alertOf, newDashboardMerchant, signedIn, tableText } from './_web.ts'

test('list and detail, then pause, resume and cancel at period end and now, as the API reports', async (t) => {
  const h = await startTestApp(t)
  const m = await newDashboardMerchant(h)
  const { customerId } = await customerWithCard(m.client)
  const sub = await createSubscription(m, customerId, { description: 'Aylık kitap kutusu' })
  const web = await signedIn(h, m)

  const list = await web.get('/dashboard/subscriptions')
  assert.equal(list.status, 200)
  assert.match(tableText(list.text, 'subscriptions-table'), /₺149,00/)
  assert.match(list.text, new RegExp(`href="/dashboard/subscriptions/${sub.id}"`))
  const paused = await web.get('/dashboard/subscriptions?status=paused')
  assert.doesNotMatch(paused.text, new RegExp(sub.id))

  const detail = await web.get(`/dashboard/subscriptions/${sub.id}`)
  assert.equal(detail.status, 200)
  assert.match(detail.text, /Aylık kitap kutusu/)
  assert.match(detail.text, /Her ay/)
  const status = (await getSub(m, sub.id)).status
  assert.ok(status === 'active' || status === 'trialing', status)
  assert.match(detail.text, /Duraklat/)

  const pause = await web.submit(`/dashboard/subscriptions/${sub.id}/pause`, {}, detail)
  assert.equal(pause.status, 303)
  assert.equal((await getSub(m, sub.id)).status, 'paused')
  const afterPause = await web.get(pause.location ?? '')
  assert.match(afterPause.text, /role="status"[\s\S]*Abonelik duraklatıldı/)
  assert.match(afterPause.text, /Devam ettir/)

  // Pausing a paused subscription is a no-op in the service; resuming it works.
  const resume = await web.submit(`/dashboard/subscriptions/${sub.id}/resume`, {}, afterPause)
  assert.equal(resume.status, 303)
  assert.equal((await getSub(m, sub.id)).status, 'active')

  // A refused action: resuming an active subscription is 409, shown, and changes nothing.
  const refused = await web.submit(
    `/dashboard/subscriptions/${sub.id}/resume`,
    {},
    `/dashboard/subscriptions/${sub.id}`,
  )
  assert.equal(refused.status, 409)
  assert.ok(alertOf(refused.text), 'the reason is shown')
  assert.equal((await getSub(m, sub.id)).status, 'active')

  const later = await web.submit(
    `/dashboard/subscriptions/${sub.id}/cancel`,
    { when: 'period_end', reason: 'müşteri istedi' },
    `/dashboard/subscriptions/${sub.id}`,
  )
  assert.equal(later.status, 303)
  const scheduled = await getSub(m, sub.id)
  assert.equal(scheduled.cancelAtPeriodEnd, true)
  assert.equal(scheduled.status, 'active')

  const now = await web.submit(
    `/dashboard/subscriptions/${sub.id}/cancel`,
    { when: 'now' },
    `/dashboard/subscriptions/${sub.id}`,
  )
  assert.equal(now.status, 303)
  assert.equal((await getSub(m, sub.id)).status, 'cancelled')
  const ended = await web.get(`/dashboard/subscriptions/${sub.id}`)
  assert.doesNotMatch(ended.text, /id="cancel-form"/, 'no actions on a cancelled subscription')

  const log = await auditText(web)
  for (const action of ['subscription.pause', 'subscription.resume', 'subscription.cancel']) {
    assert.ok(log.includes(actionWords(action)), action)
  }
  assert.ok(log.includes(sub.id))
})

test('roles, CSRF and tenancy: support acts, viewer and finance get 403, another merchant’s is 404', async (t) => {
  const h = await startTestApp(t)
  const m = await newDashboardMerchant(h)
  const other = await newDashboardMerchant(h, 'Başka Mağaza')
  const { customerId } = await customerWithCard(m.client)
  const sub = await createSubscription(m, customerId)
  const theirs = await createSubscription(other, (await customerWithCard(other.client)).customerId)
  const pausePath = `/dashboard/subscriptions/${sub.id}/pause`

  const viewer = await memberWeb(h, m, 'viewer')
  const page = await viewer.get(`/dashboard/subscriptions/${sub.id}`)
  assert.equal(page.status, 200)
  assert.doesNotMatch(page.text, /Duraklat/)
  assert.equal((await viewer.submit(pausePath, {}, page)).status, 403)
  const finance = await memberWeb(h, m, 'finance')
  assert.equal((await finance.submit(pausePath, {}, '/dashboard/subscriptions')).status, 403)
  const support = await memberWeb(h, m, 'support')
  assert.equal((await forged(support, pausePath)).status, 403)
  assert.notEqual((await getSub(m, sub.id)).status, 'paused', 'the refusals changed nothing')

  const foreign = await support.get(`/dashboard/subscriptions/${theirs.id}`)
  assert.equal(foreign.status, 404)
  const foreignCancel = await support.submit(
    `/dashboard/subscriptions/${theirs.id}/cancel`,
    { when: 'now' },
    '/dashboard/subscriptions',
  )
  assert.equal(foreignCancel.status, 404)
  assert.notEqual((await getSub(other, theirs.id)).status, 'cancelled')

  assert.equal((await support.submit(pausePath, {}, '/dashboard/subscriptions')).status, 303)
  assert.equal((await getSub(m, sub.id)).status, 'paused')
})
