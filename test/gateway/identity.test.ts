// Goal: whoami and KYC status answer from the verified key for merchant, store and submerchant keys; subject scope gates routes.
// Method: keys issued through the operator API, requests signed by the SDK over HTTP.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { KurusApiError } from '../../sdk/index.ts'
import { startTestApp } from '../helpers/app.ts'
import { probeRoutes, probeState } from './_support.ts'

const IBAN = 'TR330006100519786457841326'

interface IssuedKey {
  apiKeyId: string
  publicKey: string
  secretKey: string
}

test('a submerchant key: whoami says submerchant, with the parent merchant and its own id', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const created = await h.operator<IssuedKey & { submerchantId: string }>(
    'POST',
    `/operator/v1/merchants/${m.merchantId}/submerchants`,
    { name: 'Ayşe Kırtasiye', iban: IBAN, holderName: 'Ayşe Yılmaz' },
  )
  assert.equal(created.status, 201)
  assert.match(created.body.submerchantId, /^sub_[0-9a-z]{24}$/)
  assert.match(created.body.publicKey, /^pk_demo_/)
  assert.match(created.body.secretKey, /^sk_demo_/)
  const sub = h.clientFor(created.body)
  assert.deepEqual(await sub.whoami(), {
    subjectScope: 'submerchant',
    merchantId: m.merchantId,
    apiKeyId: created.body.apiKeyId,
    submerchantId: created.body.submerchantId,
  })
  // KYC status is the parent merchant's.
  const kyc = await sub.kycStatus()
  assert.equal(kyc.status, 'approved')
})

test('a merchant key and a second store key of the same merchant', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  assert.match(m.merchantId, /^mrc_/)
  assert.match(m.storeId, /^sto_/)
  const store = await h.operator<IssuedKey & { storeId: string }>(
    'POST',
    `/operator/v1/merchants/${m.merchantId}/stores`,
    { name: 'Kadıköy şubesi' },
  )
  assert.equal(store.status, 201)
  assert.notEqual(store.body.storeId, m.storeId)
  assert.deepEqual(await h.clientFor(store.body).whoami(), {
    subjectScope: 'merchant',
    merchantId: m.merchantId,
    apiKeyId: store.body.apiKeyId,
    storeId: store.body.storeId,
  })
})

test('GET /v1/kyc/status follows the operator’s decisions', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant({ kycStatus: 'pending' })
  const pending = await m.client.kycStatus()
  assert.equal(pending.status, 'pending')
  assert.equal(pending.decidedAt, null)
  assert.equal(typeof pending.subjectId, 'string')
  assert.match(pending.sessionId ?? '', /^[0-9a-f-]{36}$/)
  h.clock.advance(3_600_000)
  const decidedAt = h.clock.now()
  const set = await h.operator('PUT', `/operator/v1/merchants/${m.merchantId}/kyc`, {
    status: 'approved',
  })
  assert.equal(set.status, 200)
  const approved = await m.client.kycStatus()
  assert.equal(approved.status, 'approved')
  assert.ok(approved.decidedAt !== null)
  assert.match(approved.decidedAt, /Z$/)
  assert.ok(Math.abs(Date.parse(approved.decidedAt) - decidedAt.getTime()) < 60_000)
  assert.equal(approved.subjectId, pending.subjectId)
  for (const status of ['rejected', 'suspended', 'expired', 'none'] as const) {
    await h.operator('PUT', `/operator/v1/merchants/${m.merchantId}/kyc`, { status })
    assert.equal((await m.client.kycStatus()).status, status)
  }
  // A key keeps authenticating whatever the KYC status: it is money movement that KYC gates.
  assert.equal((await m.client.whoami()).merchantId, m.merchantId)
})

test('routes are merchant-only unless they say otherwise: a submerchant key gets 403 SVC-AUTH-3201', async (t) => {
  const state = probeState()
  const h = await startTestApp(t, { extraSignedRoutes: [probeRoutes(state)] })
  const m = await h.newMerchant()
  const created = await h.operator<IssuedKey>(
    'POST',
    `/operator/v1/merchants/${m.merchantId}/submerchants`,
    { name: 'Sub', iban: IBAN, holderName: 'Sub Holder' },
  )
  const sub = h.clientFor(created.body)
  await assert.rejects(
    sub.call('POST', '/v1/test/effects', { body: {}, idempotencyKey: true }),
    (error: unknown) =>
      error instanceof KurusApiError && error.status === 403 && error.code === 'SVC-AUTH-3201',
  )
  assert.equal(state.effects, 0)
  const ok = await m.client.request('POST', '/v1/test/effects', { body: {} })
  assert.equal(ok.status, 201)
})

test('submerchant creation checks the IBAN and the merchant', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const path = `/operator/v1/merchants/${m.merchantId}/submerchants`
  for (const iban of [
    'TR330006100519786457841327', // bad check digits
    'DE89370400440532013000', // valid, but not Turkish
    'TR3300061005197864578413', // too short
  ]) {
    const res = await h.operator<{ code: string }>('POST', path, {
      name: 'S',
      iban,
      holderName: 'H',
    })
    assert.equal(res.status, 400, iban)
    assert.equal(res.body.code, 'SVC-VAL-3001')
  }
  // The printed form with spaces is accepted and stored electronically.
  const spaced = await h.operator('POST', path, {
    name: 'S',
    iban: 'TR33 0006 1005 1978 6457 8413 26',
    holderName: 'H',
  })
  assert.equal(spaced.status, 201)
  const missing = await h.operator<{ code: string }>(
    'POST',
    '/operator/v1/merchants/mrc_doesnotexist/submerchants',
    { name: 'S', iban: IBAN, holderName: 'H' },
  )
  assert.equal(missing.status, 404)
  assert.equal(missing.body.code, 'SVC-RES-3301')
})
