// Goal: a request signed by the SDK passes the gateway and whoami reports the key's subject.
// Method: real app over HTTP on this file's own database.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { startTestApp } from '../helpers/app.ts'

test('whoami answers for a merchant key signed by the SDK', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const me = await m.client.whoami()
  assert.deepEqual(me, {
    subjectScope: 'merchant',
    merchantId: m.merchantId,
    apiKeyId: m.apiKeyId,
    storeId: m.storeId,
  })
})
