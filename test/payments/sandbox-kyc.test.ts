// Goal: POST /v1/sandbox/kyc {status} (CONTRACT.md "Sandbox helpers", demo only, signed by
// the merchant's key) sets the calling merchant's KYC, and the money-in gate follows it at
// once; a submerchant key may not call it and `live` does not have it. Method: signed HTTP.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { OPERATOR_TOKEN, startTestApp } from '../helpers/app.ts'
import { CARDS, charge, openSession } from '../helpers/payments.ts'
import { newSubmerchant } from '../payouts/_support.ts'

interface KycBody {
  merchantId: string
  status: string
  decidedAt: string | null
  code?: string
}

test('a merchant sets its own KYC; only approved takes money in', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant({ kycStatus: 'pending' })
  const other = await h.newMerchant()
  const session = () =>
    m.client.request<{ code: string }>('POST', '/v1/payments/sessions', {
      body: {
        transactionId: `ord-${Math.random()}`,
        amount: 1_000,
        currency: 'TRY',
        returnUrl: 'https://shop.example/r',
      },
    })
  const blocked = await session()
  assert.equal(blocked.status, 403)
  assert.equal(blocked.body.code, 'SVC-KYC-3101')

  const approved = await m.client.request<KycBody>('POST', '/v1/sandbox/kyc', {
    body: { status: 'approved' },
  })
  assert.equal(approved.status, 200, JSON.stringify(approved.body))
  assert.equal(approved.body.merchantId, m.merchantId)
  assert.equal(approved.body.status, 'approved')
  assert.ok(approved.body.decidedAt)
  assert.equal((await session()).status, 201)
  assert.equal((await m.client.kycStatus()).status, 'approved')
  // The SDK's typed method, and the gate closing again at once (keys are cached).
  const suspended = await m.client.sandboxSetKyc('suspended')
  assert.equal(suspended.status, 'suspended')
  assert.equal((await session()).status, 403)
  const { res } = await charge(other.client, CARDS.frictionless, 2_000)
  assert.equal(res.status, 201, 'another merchant is not touched')
  const operatorView = await h.operator<{ kycStatus: string }>(
    'GET',
    `/operator/v1/merchants/${m.merchantId}`,
  )
  assert.equal(operatorView.body.kycStatus, 'suspended')

  const bad = await m.client.request<KycBody>('POST', '/v1/sandbox/kyc', {
    body: { status: 'verified' },
  })
  assert.equal(bad.status, 400)
  assert.equal(bad.body.code, 'SVC-VAL-3001')
  const extra = await m.client.request<KycBody>('POST', '/v1/sandbox/kyc', {
    body: { status: 'approved', merchantId: other.merchantId },
  })
  assert.equal(extra.status, 400)

  const seller = await newSubmerchant(h, other.merchantId)
  const asSub = await seller.client.request<KycBody>('POST', '/v1/sandbox/kyc', {
    body: { status: 'approved' },
  })
  assert.equal(asSub.status, 403)
  assert.equal(asSub.body.code, 'SVC-AUTH-3201')
  // A session still needs an approved merchant (sanity: the helper changed only m).
  await openSession(other.client, 1_000)
})

test('live has no sandbox KYC route', async (t) => {
  const h = await startTestApp(t, {
    env: {
      KURUS_ENV: 'live',
      KURUS_MASTER_KEY: Buffer.alloc(32, 7).toString('hex'),
      KURUS_OPERATOR_TOKEN: OPERATOR_TOKEN,
    },
  })
  const m = await h.newMerchant({ kycStatus: 'pending' })
  const res = await m.client.request<KycBody>('POST', '/v1/sandbox/kyc', {
    body: { status: 'approved' },
  })
  assert.equal(res.status, 404)
  assert.equal((await m.client.kycStatus()).status, 'pending')
})
