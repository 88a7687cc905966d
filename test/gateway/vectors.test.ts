// Goal: the SDK's signer and the gateway's verifier both match signing vectors computed outside our code (openssl).
// Method: feed test/vectors/signing.json to both functions, then send SDK-signed requests over HTTP.
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'
import { canonicalString as sdkCanonical, sign as sdkSign, signedHeaders } from '../../sdk/index.ts'
import {
  canonicalString as gatewayCanonical,
  signCanonical as gatewaySign,
} from '../../src/modules/gateway/index.ts'
import { startTestApp } from '../helpers/app.ts'
import { FreezableClock, send } from './_support.ts'

interface Vector {
  name: string
  input: { secretKey: string; timestamp: string; method: string; path: string; body: string }
  expected: { bodySha256: string; canonicalString: string; signature: string }
}

const file = JSON.parse(
  readFileSync(new URL('../vectors/signing.json', import.meta.url), 'utf8'),
) as { vectors: Vector[] }
const EMPTY_SHA256 = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'

test('the vector file covers a GET, Turkish UTF-8 in a body and a path with an id', () => {
  assert.ok(file.vectors.length >= 5)
  assert.ok(file.vectors.some((v) => v.input.method === 'GET'))
  assert.ok(
    file.vectors.some(
      (v) =>
        Buffer.byteLength(v.input.body) > v.input.body.length && /[çğışöüİ]/i.test(v.input.body),
    ),
  )
  assert.ok(file.vectors.some((v) => /\/pay_[a-z0-9]+\//.test(v.input.path)))
  for (const v of file.vectors.filter((x) => x.input.body === '')) {
    assert.equal(v.expected.bodySha256, EMPTY_SHA256, v.name)
  }
})

for (const v of file.vectors) {
  test(`SDK and gateway agree with the vector: ${v.name}`, () => {
    const { secretKey, timestamp, method, path, body } = v.input
    assert.equal(sdkCanonical(timestamp, method, path, body), v.expected.canonicalString)
    assert.equal(sdkSign(secretKey, v.expected.canonicalString), v.expected.signature)
    // The gateway hashes the raw bytes it received, and sees no body at all on a GET.
    const raw = body === '' ? undefined : Buffer.from(body, 'utf8')
    assert.equal(gatewayCanonical(timestamp, method, path, raw), v.expected.canonicalString)
    assert.equal(gatewaySign(secretKey, v.expected.canonicalString), v.expected.signature)
    assert.equal(
      v.expected.canonicalString.split('\n')[3],
      v.expected.bodySha256,
      'line 4 is the body hash',
    )
    assert.ok(!v.expected.canonicalString.endsWith('\n'), 'no trailing line feed')
  })
}

test('a request signed by the SDK passes the gateway, with Turkish text in the path query', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const res = await m.client.request('GET', '/v1/auth/whoami', { query: { q: 'Çağrı' } })
  assert.equal(res.status, 200)
  assert.deepEqual(res.body, {
    subjectScope: 'merchant',
    merchantId: m.merchantId,
    apiKeyId: m.apiKeyId,
    storeId: m.storeId,
  })
})

test('the SDK signs only the path: a query or a trailing slash written into it still passes', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  for (const path of [
    '/v1/auth/whoami?expand=store&q=%C3%87',
    '/v1/auth/whoami/',
    '/v1/kyc/status?',
  ]) {
    const res = await m.client.request('GET', path, { query: { extra: 'şey' } })
    assert.equal(res.status, 200, `${path}: ${JSON.stringify(res.body)}`)
  }
})

test('a request signed by hand from a vector-style computation passes at that exact instant', async (t) => {
  const clock = new FreezableClock()
  const h = await startTestApp(t, { clock })
  const m = await h.newMerchant()
  const timestamp = clock.freeze().toISOString()
  const headers = signedHeaders(m, 'GET', '/v1/kyc/status', '', timestamp)
  const res = await send(h.url + '/v1/kyc/status', 'GET', { ...headers })
  assert.equal(res.status, 200, res.text)
  assert.equal(res.body['status'], 'approved')
})
