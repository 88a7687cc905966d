// Goal: the dashboard's API-key and submerchant routes: list, issue, roll with a grace
// period, revoke, and submerchant creation, each scoped to the caller's store and merchant.
// Method: the real app over HTTP; the issued keys are used on the signed API to prove it.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { startTestApp } from '../helpers/app.ts'
import { HOUR, newDashboardMerchant } from '../webhooks/_support.ts'

interface KeyJson {
  apiKeyId: string
  publicKey: string
  storeId: string | null
  status: string
  expiresAt: string | null
}

test('issue, list, roll with grace, and revoke a store key', async (t) => {
  const h = await startTestApp(t)
  const m = await newDashboardMerchant(h)
  const base = `/v1/stores/${m.storeId}/api-keys`

  const list = await m.dash<{ items: KeyJson[] }>('GET', base)
  assert.equal(list.status, 200)
  assert.deepEqual(
    list.body.items.map((k) => [k.apiKeyId, k.status]),
    [[m.apiKeyId, 'active']],
  )
  assert.doesNotMatch(JSON.stringify(list.body), /sk_demo_/)

  const issued = await m.dash<{ apiKeyId: string; publicKey: string; secretKey: string }>(
    'POST',
    base,
  )
  assert.equal(issued.status, 201)
  assert.match(issued.body.secretKey, /^sk_demo_/)
  const fresh = h.clientFor(issued.body)
  const who = await fresh.request<{ storeId: string; merchantId: string }>('GET', '/v1/auth/whoami')
  assert.equal(who.status, 200)
  assert.equal(who.body.storeId, m.storeId)

  const rolled = await m.dash<{
    apiKeyId: string
    publicKey: string
    secretKey: string
    previousKeyExpiresAt: string
  }>('POST', `${base}/${issued.body.apiKeyId}/roll`)
  assert.equal(rolled.status, 200)
  const successor = h.clientFor(rolled.body)
  assert.equal((await successor.request('GET', '/v1/auth/whoami')).status, 200)
  // The old key works through the grace period, then not.
  assert.equal((await fresh.request('GET', '/v1/auth/whoami')).status, 200)
  h.clock.advance(24 * HOUR + 1000)
  assert.equal((await fresh.request('GET', '/v1/auth/whoami')).status, 401)
  assert.equal((await successor.request('GET', '/v1/auth/whoami')).status, 200)
  const rollAgain = await m.dash('POST', `${base}/${issued.body.apiKeyId}/roll`)
  assert.equal(rollAgain.status, 409)

  const revoked = await m.dash('DELETE', `${base}/${rolled.body.apiKeyId}`)
  assert.equal(revoked.status, 204)
  assert.equal((await successor.request('GET', '/v1/auth/whoami')).status, 401)
  const after = await m.dash<{ items: KeyJson[] }>('GET', base)
  const status = Object.fromEntries(after.body.items.map((k) => [k.apiKeyId, k.status]))
  assert.equal(status[m.apiKeyId], 'active')
  assert.equal(status[issued.body.apiKeyId], 'expired')
  assert.equal(status[rolled.body.apiKeyId], 'revoked')
  assert.equal((await m.client.request('GET', '/v1/auth/whoami')).status, 200)

  // A key of another store of the same merchant is not found under this store.
  const store2 = await h.operator<{ storeId: string; apiKeyId: string }>(
    'POST',
    `/operator/v1/merchants/${m.merchantId}/stores`,
    {},
  )
  assert.equal(store2.status, 201)
  const cross = await m.dash('DELETE', `${base}/${store2.body.apiKeyId}`)
  assert.equal(cross.status, 404)
  const own = await m.dash<{ items: KeyJson[] }>(
    'GET',
    `/v1/stores/${store2.body.storeId}/api-keys`,
  )
  assert.deepEqual(
    own.body.items.map((k) => k.apiKeyId),
    [store2.body.apiKeyId],
  )
})

test('create a submerchant from the dashboard', async (t) => {
  const h = await startTestApp(t)
  const m = await newDashboardMerchant(h)
  const res = await m.dash<{
    submerchantId: string
    apiKeyId: string
    publicKey: string
    secretKey: string
  }>('POST', '/v1/dashboard/submerchants', {
    name: 'Kadıköy Şubesi',
    iban: 'TR33 0006 1005 1978 6457 8413 26',
    holderName: 'Kadıköy Ltd',
    payoutLimits: { maxMinor: 1_000_000 },
  })
  assert.equal(res.status, 201, JSON.stringify(res.body))
  assert.match(res.body.submerchantId, /^sub_/)
  const sub = h.clientFor(res.body)
  const who = await sub.request<Record<string, string>>('GET', '/v1/auth/whoami')
  assert.equal(who.status, 200)
  assert.equal(who.body['subjectScope'], 'submerchant')
  assert.equal(who.body['merchantId'], m.merchantId)
  assert.equal(who.body['submerchantId'], res.body.submerchantId)

  const badIban = await m.dash<{ code: string }>('POST', '/v1/dashboard/submerchants', {
    name: 'X',
    iban: 'TR00 0000',
    holderName: 'X',
  })
  assert.equal(badIban.status, 400)
  assert.equal(badIban.body.code, 'SVC-VAL-3001')
  const extra = await m.dash('POST', '/v1/dashboard/submerchants', {
    name: 'X',
    iban: 'TR330006100519786457841326',
    holderName: 'X',
    merchantId: 'mrc_other',
  })
  assert.equal(extra.status, 400)
})
