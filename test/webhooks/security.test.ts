// Goal: secret rotation signs with both secrets for 24 h, then only the new one; the SSRF
// guard refuses private, loopback, link-local and metadata receivers in live (at creation
// and again at delivery, after DNS), and allows local receivers in demo. Method: the real
// app in demo and live, a real receiver, standardwebhooks to verify; pure checks of the guard.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { checkReceiverUrl } from '../../src/modules/webhooks/index.ts'
import { startTestApp } from '../helpers/app.ts'
import {
  HOUR,
  addEndpoint,
  authorizedPayment,
  deliveries,
  newDashboardMerchant,
  reconcile,
  signedWith,
  startReceiver,
  verifyNow,
} from './_support.ts'

test('a rotated secret: both sign for 24 h, then only the new one', async (t) => {
  const h = await startTestApp(t)
  const m = await newDashboardMerchant(h)
  const receiver = await startReceiver(t)
  const endpoint = await addEndpoint(m, receiver.url)
  const oldSecret = endpoint.secret

  const rotated = await m.dash<{ id: string; secret: string; previousSecretExpiresAt: string }>(
    'POST',
    `/v1/stores/${m.storeId}/webhooks/${endpoint.id}/rotate-secret`,
  )
  assert.equal(rotated.status, 200)
  const newSecret = rotated.body.secret
  assert.match(newSecret, /^whsec_/)
  assert.notEqual(newSecret, oldSecret)
  const grace = Date.parse(rotated.body.previousSecretExpiresAt) - h.clock.now().getTime()
  assert.ok(grace > 23.9 * HOUR && grace <= 24 * HOUR, `grace ${grace}`)
  const listed = await m.dash<{ items: { previousSecretExpiresAt: string | null }[] }>(
    'GET',
    `/v1/stores/${m.storeId}/webhooks`,
  )
  assert.equal(listed.body.items[0]!.previousSecretExpiresAt, rotated.body.previousSecretExpiresAt)

  const during = await authorizedPayment(m.client)
  await reconcile(m.client)
  const r1 = receiver.about(during)[0]!
  const signatures = String(r1.headers['webhook-signature']).split(' ')
  assert.equal(signatures.length, 2)
  assert.ok(signatures.every((s) => s.startsWith('v1,')))
  // A receiver on either secret accepts it.
  assert.deepEqual(verifyNow(oldSecret, r1), r1.json)
  assert.deepEqual(verifyNow(newSecret, r1), r1.json)

  h.clock.advance(25 * HOUR)
  const after = await authorizedPayment(m.client)
  await reconcile(m.client)
  const r2 = receiver.about(after)[0]!
  assert.equal(String(r2.headers['webhook-signature']).split(' ').length, 1)
  assert.equal(signedWith(newSecret, r2), true)
  assert.equal(signedWith(oldSecret, r2), false)
  const relisted = await m.dash<{ items: { previousSecretExpiresAt: string | null }[] }>(
    'GET',
    `/v1/stores/${m.storeId}/webhooks`,
  )
  assert.equal(relisted.body.items[0]!.previousSecretExpiresAt, null)
})

test('live refuses internal receivers when an endpoint is created', async (t) => {
  const h = await startTestApp(t, { env: { KURUS_ENV: 'live' } })
  const m = await newDashboardMerchant(h)
  const refused = [
    'http://127.0.0.1:8080/hook',
    'http://localhost/hook',
    'http://10.1.2.3/hook',
    'http://172.16.5.4/hook',
    'http://192.168.1.10/hook',
    'http://169.254.169.254/latest/meta-data/',
    'http://100.64.0.7/hook',
    'http://0.0.0.0/hook',
    'http://2130706433/hook', // 127.0.0.1 written as a number
    'http://[::1]/hook',
    'http://[fd12:3456::1]/hook',
    'http://[fe80::1]/hook',
    'http://[::ffff:127.0.0.1]/hook',
    'http://[::ffff:169.254.169.254]/hook',
    'ftp://93.184.215.14/hook',
    'file:///etc/passwd',
    'javascript:alert(1)',
    'not a url',
  ]
  for (const url of refused) {
    const res = await m.dash<{ code: string; details?: { field: string }[] }>(
      'POST',
      `/v1/stores/${m.storeId}/webhooks`,
      { url },
    )
    assert.equal(res.status, 400, `${url} → ${res.status}`)
    assert.equal(res.body.code, 'SVC-VAL-3001')
    assert.equal(res.body.details?.[0]?.field, 'url')
  }
  // A public address is accepted (deleted at once: nothing is sent to the internet).
  const ok = await m.dash<{ id: string }>('POST', `/v1/stores/${m.storeId}/webhooks`, {
    url: 'https://93.184.215.14/hook',
  })
  assert.equal(ok.status, 201)
  assert.equal(
    (await m.dash('DELETE', `/v1/stores/${m.storeId}/webhooks/${ok.body.id}`)).status,
    204,
  )
})

test('live checks again at delivery: a loopback callbackUrl is never contacted', async (t) => {
  const h = await startTestApp(t, { env: { KURUS_ENV: 'live' } })
  const m = await newDashboardMerchant(h)
  const receiver = await startReceiver(t)
  const byName = receiver.url.replace('127.0.0.1', 'localhost')
  // Session callback URLs are not screened at creation, which is what this exercises.
  const literal = await authorizedPayment(m.client, 5000, { callbackUrl: receiver.url })
  const named = await authorizedPayment(m.client, 5100, { callbackUrl: byName })
  // No sandbox routes in live: run the queue the way the worker would.
  await h.deps.jobs.runDueOnce()
  assert.equal(receiver.about(literal).length, 0)
  assert.equal(receiver.about(named).length, 0)
  const log = await deliveries(m)
  const mine = log.items.filter((d) => d.url === receiver.url || d.url === byName)
  assert.equal(mine.length, 2)
  for (const d of mine) {
    assert.equal(d.status, 'pending', 'refusals are retried like any failure')
    assert.equal(d.attemptCount, 1)
    assert.equal(d.lastStatusCode, null)
    assert.match(d.lastError ?? '', /loopback or private/)
  }
})

test('demo allows loopback and private receivers but not link-local or metadata', async (t) => {
  const h = await startTestApp(t)
  const m = await newDashboardMerchant(h)
  for (const url of ['http://169.254.169.254/latest/', 'http://[fe80::1]/', 'gopher://x/']) {
    const res = await m.dash('POST', `/v1/stores/${m.storeId}/webhooks`, { url })
    assert.equal(res.status, 400, url)
  }
  for (const url of ['http://127.0.0.1:9/hook', 'http://10.0.0.5/hook', 'http://[::1]:9/']) {
    const res = await m.dash<{ id: string }>('POST', `/v1/stores/${m.storeId}/webhooks`, { url })
    assert.equal(res.status, 201, url)
    await m.dash('DELETE', `/v1/stores/${m.storeId}/webhooks/${res.body.id}`)
  }
})

test('the guard on its own: every address family and disguise', async () => {
  const live = async (url: string) => (await checkReceiverUrl(url, 'live')).ok
  const demo = async (url: string) => (await checkReceiverUrl(url, 'demo')).ok
  for (const url of [
    'http://127.0.0.1/',
    'http://127.255.255.254/',
    'http://0x7f000001/',
    'http://10.255.0.1/',
    'http://172.31.255.255/',
    'http://192.168.0.1/',
    'http://100.127.255.255/',
    'http://169.254.0.1/',
    'http://224.0.0.1/',
    'http://255.255.255.255/',
    'http://[::]/',
    'http://[::1]/',
    'http://[fc00::1]/',
    'http://[fe80::abcd]/',
    'http://[::ffff:10.0.0.1]/',
    'http://[64:ff9b::a00:1]/',
  ]) {
    assert.equal(await live(url), false, url)
  }
  for (const url of [
    'http://172.32.0.1/',
    'http://100.128.0.1/',
    'https://8.8.8.8/',
    'http://[2001:4860:4860::8888]/',
  ]) {
    assert.equal(await live(url), true, url)
  }
  assert.equal(await demo('http://127.0.0.1/'), true)
  assert.equal(await demo('http://192.168.0.1/'), true)
  assert.equal(await demo('http://169.254.169.254/'), false)
  assert.equal(await demo('http://[::ffff:169.254.169.254]/'), false)
})
