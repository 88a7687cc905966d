// Goal: every operator route works with the bearer token and refuses without it (401 envelope); roll keeps the old key for the grace period; revoke stops it at once.
// Method: real app over HTTP, the clock moved across the grace period.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { OPERATOR_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts'

const IBAN = 'TR330006100519786457841326'
const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

type Body = Record<string, unknown>

interface Key {
  apiKeyId: string
  publicKey: string
  secretKey: string
}

async function raw(
  h: TestApp,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
) {
  const res = await fetch(h.url + path, {
    method,
    headers,
    ...(body === undefined ? {} : { body }),
  })
  const text = await res.text()
  return {
    status: res.status,
    headers: res.headers,
    body: (text ? JSON.parse(text) : null) as Body,
  }
}

test('every operator route refuses a missing or wrong bearer with a 401 envelope', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const routes: [string, string, unknown?][] = [
    ['POST', '/operator/v1/merchants', { name: 'X' }],
    ['GET', `/operator/v1/merchants/${m.merchantId}`],
    ['POST', `/operator/v1/merchants/${m.merchantId}/stores`, {}],
    [
      'POST',
      `/operator/v1/merchants/${m.merchantId}/submerchants`,
      { name: 'S', iban: IBAN, holderName: 'H' },
    ],
    ['PUT', `/operator/v1/merchants/${m.merchantId}/kyc`, { status: 'rejected' }],
    ['GET', `/operator/v1/merchants/${m.merchantId}/api-keys`],
    ['POST', `/operator/v1/merchants/${m.merchantId}/api-keys/${m.apiKeyId}/roll`],
    ['POST', `/operator/v1/merchants/${m.merchantId}/api-keys/${m.apiKeyId}/revoke`],
  ]
  const wrong = [
    {},
    { authorization: 'Bearer wrong-token' },
    { authorization: `Bearer ${OPERATOR_TOKEN}x` },
    { authorization: `Basic ${Buffer.from(`operator:${OPERATOR_TOKEN}`).toString('base64')}` },
    { authorization: OPERATOR_TOKEN },
    { authorization: 'Bearer ' },
    // The signed API's credentials are not the operator's.
    { 'x-api-key': m.publicKey },
  ]
  for (const [method, path, body] of routes) {
    for (const headers of wrong) {
      const res = await raw(
        h,
        method,
        path,
        { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body === undefined ? undefined : JSON.stringify(body),
      )
      assert.equal(res.status, 401, `${method} ${path} ${JSON.stringify(headers)}`)
      assert.equal(res.body['code'], 'SVC-GW-1003')
      assert.match(String(res.body['requestId']), UUID_V4)
      assert.equal(res.body['requestId'], res.headers.get('x-request-id'))
      assert.equal(res.headers.get('cache-control'), 'no-store')
    }
  }
  // Nothing changed: the key still works and KYC is untouched.
  assert.equal((await m.client.whoami()).apiKeyId, m.apiKeyId)
  assert.equal((await m.client.kycStatus()).status, 'approved')
  // The scheme name is case-insensitive (RFC 9110).
  const lower = await raw(h, 'GET', `/operator/v1/merchants/${m.merchantId}`, {
    authorization: `bearer ${OPERATOR_TOKEN}`,
  })
  assert.equal(lower.status, 200)
})

test('POST /operator/v1/merchants creates a merchant, its store, a key pair and a dashboard login', async (t) => {
  const h = await startTestApp(t)
  const res = await h.operator<Body>('POST', '/operator/v1/merchants', {
    name: 'Kuruş Kafe',
    commission: { rateBps: 199, fixedMinor: 0, perExtraInstallmentBps: 50 },
  })
  assert.equal(res.status, 201)
  const b = res.body
  assert.deepEqual(Object.keys(b).sort(), [
    'apiKeyId',
    'dashboard',
    'merchantId',
    'publicKey',
    'secretKey',
    'storeId',
  ])
  assert.match(String(b['merchantId']), /^mrc_[0-9a-z]{24}$/)
  assert.match(String(b['storeId']), /^sto_[0-9a-z]{24}$/)
  assert.match(String(b['apiKeyId']), /^key_[0-9a-z]{24}$/)
  assert.match(String(b['publicKey']), /^pk_demo_[A-Za-z0-9_-]+$/)
  assert.match(String(b['secretKey']), /^sk_demo_[A-Za-z0-9_-]{40,}$/)
  const dashboard = b['dashboard'] as { email: string; password: string }
  assert.ok(dashboard.email.includes('@'))
  assert.ok(dashboard.password.length >= 12)

  const got = await h.operator<Body>('GET', `/operator/v1/merchants/${String(b['merchantId'])}`)
  assert.equal(got.status, 200)
  assert.equal(got.body['name'], 'Kuruş Kafe')
  assert.equal(got.body['kycStatus'], 'none')
  assert.equal(got.body['kycDecidedAt'], null)
  assert.equal(got.body['settlementDelaySeconds'], 0)
  const pricing = got.body['pricing'] as { rateBpsByInstallment: number[]; fixedMinor: number }
  assert.equal(pricing.fixedMinor, 0)
  assert.deepEqual(pricing.rateBpsByInstallment.slice(0, 3), [199, 249, 299])
  assert.equal(pricing.rateBpsByInstallment.length, 12)
  assert.ok(!JSON.stringify(got.body).includes(String(b['secretKey'])))

  // Defaults: 249 bps + 25 kuruş, +100 bps per extra installment; KYC as asked.
  const plain = await h.operator<Body>('POST', '/operator/v1/merchants', {
    name: 'Plain',
    kycStatus: 'approved',
  })
  const plainView = await h.operator<Body>(
    'GET',
    `/operator/v1/merchants/${String(plain.body['merchantId'])}`,
  )
  assert.equal(plainView.body['kycStatus'], 'approved')
  assert.match(String(plainView.body['kycDecidedAt']), /Z$/)
  assert.deepEqual(plainView.body['pricing'], {
    rateBpsByInstallment: [249, 349, 449, 549, 649, 749, 849, 949, 1049, 1149, 1249, 1349],
    fixedMinor: 25,
  })

  for (const bad of [
    {},
    { name: '' },
    { name: 'X', kycStatus: 'ok' },
    { name: 'X', commission: { rateBps: -1 } },
  ]) {
    const r = await h.operator<Body>('POST', '/operator/v1/merchants', bad)
    assert.equal(r.status, 400, JSON.stringify(bad))
    assert.equal(r.body['code'], 'SVC-VAL-3001')
  }
  const unknown = await h.operator<Body>('GET', '/operator/v1/merchants/mrc_nope')
  assert.equal(unknown.status, 404)
  assert.equal(unknown.body['code'], 'SVC-RES-3301')
})

test('stores: created with or without a body, each with its own key', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const named = await h.operator<Key & { storeId: string }>(
    'POST',
    `/operator/v1/merchants/${m.merchantId}/stores`,
    { name: 'Online' },
  )
  assert.equal(named.status, 201)
  const bare = await raw(h, 'POST', `/operator/v1/merchants/${m.merchantId}/stores`, {
    authorization: `Bearer ${OPERATOR_TOKEN}`,
  })
  assert.equal(bare.status, 201, JSON.stringify(bare.body))
  assert.notEqual(bare.body['storeId'], named.body.storeId)
  assert.equal((await h.clientFor(named.body).whoami()).storeId, named.body.storeId)
  const missing = await h.operator<Body>('POST', '/operator/v1/merchants/mrc_nope/stores', {})
  assert.equal(missing.status, 404)
  const keys = await h.operator<{ items: Body[] }>(
    'GET',
    `/operator/v1/merchants/${m.merchantId}/api-keys`,
  )
  assert.equal(keys.body.items.length, 3)
})

test('submerchants: created with payout limits; the list of keys shows their scope', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const sub = await h.operator<Key & { submerchantId: string }>(
    'POST',
    `/operator/v1/merchants/${m.merchantId}/submerchants`,
    { name: 'Ayşe', iban: IBAN, holderName: 'Ayşe Yılmaz', payoutLimits: { maxMinor: 1_000_000 } },
  )
  assert.equal(sub.status, 201)
  const bad = await h.operator<Body>(
    'POST',
    `/operator/v1/merchants/${m.merchantId}/submerchants`,
    {
      name: 'Ayşe',
      iban: IBAN,
      holderName: 'Ayşe Yılmaz',
      payoutLimits: { maxMinor: 0 },
    },
  )
  assert.equal(bad.status, 400)
  const keys = await h.operator<{ items: Body[] }>(
    'GET',
    `/operator/v1/merchants/${m.merchantId}/api-keys`,
  )
  assert.equal(keys.status, 200)
  const subKey = keys.body.items.find((k) => k['apiKeyId'] === sub.body.apiKeyId)
  assert.ok(subKey)
  assert.equal(subKey['subjectScope'], 'submerchant')
  assert.equal(subKey['submerchantId'], sub.body.submerchantId)
  assert.equal(subKey['storeId'], null)
  assert.equal(subKey['status'], 'active')
  assert.ok(!JSON.stringify(keys.body).includes('sk_'), 'secrets are shown once, never listed')
  const other = await h.operator<Body>('GET', '/operator/v1/merchants/mrc_nope/api-keys')
  assert.equal(other.status, 404)
})

test('PUT kyc sets each status; bad status 400; unknown merchant 404', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant({ kycStatus: 'none' })
  for (const status of ['pending', 'approved', 'rejected', 'suspended', 'expired', 'none']) {
    const res = await h.operator<Body>('PUT', `/operator/v1/merchants/${m.merchantId}/kyc`, {
      status,
    })
    assert.equal(res.status, 200)
    assert.equal(res.body['merchantId'], m.merchantId)
    assert.equal(res.body['status'], status)
    assert.equal(res.body['decidedAt'] === null, status === 'none' || status === 'pending', status)
  }
  const bad = await h.operator<Body>('PUT', `/operator/v1/merchants/${m.merchantId}/kyc`, {
    status: 'ok',
  })
  assert.equal(bad.status, 400)
  const missing = await h.operator<Body>('PUT', '/operator/v1/merchants/mrc_nope/kyc', {
    status: 'approved',
  })
  assert.equal(missing.status, 404)
})

test('key roll: the old key works during the grace period and stops after it', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const rollPath = `/operator/v1/merchants/${m.merchantId}/api-keys/${m.apiKeyId}/roll`
  const rolled = await h.operator<Key & { previousKeyExpiresAt: string }>('POST', rollPath)
  assert.equal(rolled.status, 201)
  assert.notEqual(rolled.body.publicKey, m.publicKey)
  const graceEnds = Date.parse(rolled.body.previousKeyExpiresAt)
  assert.equal(graceEnds - h.clock.now().getTime() > 23.9 * 3600_000, true)
  const fresh = h.clientFor(rolled.body)
  // The new key keeps the old key's store and scope.
  assert.deepEqual(await fresh.whoami(), {
    subjectScope: 'merchant',
    merchantId: m.merchantId,
    apiKeyId: rolled.body.apiKeyId,
    storeId: m.storeId,
  })
  assert.equal((await m.client.whoami()).apiKeyId, m.apiKeyId)
  // Rolling the same key twice is refused.
  const again = await h.operator<Body>('POST', rollPath)
  assert.equal(again.status, 409)
  assert.equal(again.body['code'], 'SVC-STATE-3401')

  h.clock.set(new Date(graceEnds - 1_000))
  assert.equal((await m.client.whoami()).apiKeyId, m.apiKeyId)
  h.clock.set(new Date(graceEnds + 1_000))
  const old = await m.client.request<Body>('GET', '/v1/auth/whoami')
  assert.equal(old.status, 401)
  assert.equal(old.body['code'], 'SVC-GW-1003')
  assert.equal((await fresh.whoami()).apiKeyId, rolled.body.apiKeyId)
  const keys = await h.operator<{ items: Body[] }>(
    'GET',
    `/operator/v1/merchants/${m.merchantId}/api-keys`,
  )
  const byId = new Map(keys.body.items.map((k) => [k['apiKeyId'], k['status']]))
  assert.equal(byId.get(m.apiKeyId), 'expired')
  assert.equal(byId.get(rolled.body.apiKeyId), 'active')
})

test('a grace period of 0 retires the old key at once', async (t) => {
  const h = await startTestApp(t, { env: { KURUS_KEY_ROLL_GRACE_SECONDS: '0' } })
  const m = await h.newMerchant()
  const rolled = await h.operator<Key>(
    'POST',
    `/operator/v1/merchants/${m.merchantId}/api-keys/${m.apiKeyId}/roll`,
  )
  assert.equal(rolled.status, 201)
  const old = await m.client.request<Body>('GET', '/v1/auth/whoami')
  assert.equal(old.body['code'], 'SVC-GW-1003')
  assert.equal((await h.clientFor(rolled.body).whoami()).apiKeyId, rolled.body.apiKeyId)
})

test('revoke: 204, then the key gets 1003 at once; another merchant cannot touch it', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const other = await h.newMerchant()
  const foreign = await h.operator<Body>(
    'POST',
    `/operator/v1/merchants/${other.merchantId}/api-keys/${m.apiKeyId}/revoke`,
  )
  assert.equal(foreign.status, 404)
  assert.equal(foreign.body['code'], 'SVC-RES-3301')
  const foreignRoll = await h.operator<Body>(
    'POST',
    `/operator/v1/merchants/${other.merchantId}/api-keys/${m.apiKeyId}/roll`,
  )
  assert.equal(foreignRoll.status, 404)
  assert.equal((await m.client.whoami()).apiKeyId, m.apiKeyId)

  const revoked = await h.operator(
    'POST',
    `/operator/v1/merchants/${m.merchantId}/api-keys/${m.apiKeyId}/revoke`,
  )
  assert.equal(revoked.status, 204)
  assert.equal(revoked.body, null)
  const res = await m.client.request<Body>('GET', '/v1/auth/whoami')
  assert.equal(res.status, 401)
  assert.equal(res.body['code'], 'SVC-GW-1003')
  // Revoking again is harmless; rolling a revoked key is refused.
  const twice = await h.operator(
    'POST',
    `/operator/v1/merchants/${m.merchantId}/api-keys/${m.apiKeyId}/revoke`,
  )
  assert.equal(twice.status, 204)
  const roll = await h.operator<Body>(
    'POST',
    `/operator/v1/merchants/${m.merchantId}/api-keys/${m.apiKeyId}/roll`,
  )
  assert.equal(roll.status, 409)
  const keys = await h.operator<{ items: Body[] }>(
    'GET',
    `/operator/v1/merchants/${m.merchantId}/api-keys`,
  )
  assert.equal(keys.body.items.find((k) => k['apiKeyId'] === m.apiKeyId)?.['status'], 'revoked')
  // The other merchant's key was never affected.
  assert.equal((await other.client.whoami()).merchantId, other.merchantId)
})

test('revoking a rolled key ends its grace period at once', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const rolled = await h.operator<Key>(
    'POST',
    `/operator/v1/merchants/${m.merchantId}/api-keys/${m.apiKeyId}/roll`,
  )
  assert.equal((await m.client.whoami()).apiKeyId, m.apiKeyId)
  await h.operator('POST', `/operator/v1/merchants/${m.merchantId}/api-keys/${m.apiKeyId}/revoke`)
  const old = await m.client.request<Body>('GET', '/v1/auth/whoami')
  assert.equal(old.body['code'], 'SVC-GW-1003')
  assert.equal((await h.clientFor(rolled.body).whoami()).apiKeyId, rolled.body.apiKeyId)
})

test('sandbox only: the demo merchant’s current keys for `kurus sign`, behind the bearer', async (t) => {
  const h = await startTestApp(t)
  await h.newMerchant()
  const res = await h.operator<Key & { merchantId: string; storeId: string }>(
    'GET',
    '/operator/v1/demo/credentials',
  )
  assert.equal(res.status, 200)
  const me = await h.clientFor(res.body).whoami()
  assert.equal(me.merchantId, res.body.merchantId)
  assert.equal(me.storeId, res.body.storeId)
  const anonymous = await raw(h, 'GET', '/operator/v1/demo/credentials', {})
  assert.equal(anonymous.status, 401)
  const live = await startTestApp(t, { env: { KURUS_ENV: 'live' } })
  const none = await live.operator<Body>('GET', '/operator/v1/demo/credentials')
  assert.equal(none.status, 404)
  assert.equal(none.body['code'], 'SVC-RES-3301')
})
