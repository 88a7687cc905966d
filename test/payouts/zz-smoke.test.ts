// Goal: smoke timing. Method: HTTP.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { startTestApp } from '../helpers/app.ts'
import { balances, captureAndSettle, reconcile, trIban } from './_support.ts'

test('smoke 1000', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  let t0 = Date.now()
  await captureAndSettle(m, 1_000_000)
  console.log('fund', Date.now() - t0, await balances(m.client))
  const rows = Array.from({ length: 1000 }, (_, i) => ({
    rail: 'fast', dest: trIban(String(100000 + i)), holderName: 'X', amountMinor: 100, currency: 'TRY',
  }))
  t0 = Date.now()
  const d = await m.client.request<{ draftId: string; validCount: number }>('POST', '/v1/payout-drafts', { body: { storeId: m.storeId, rows } })
  console.log('draft', Date.now() - t0, d.status, d.body.validCount)
  t0 = Date.now()
  const a = await m.client.request<{ payoutCount: number }>('POST', `/v1/payout-drafts/${d.body.draftId}/approve`, { body: {} })
  console.log('approve', Date.now() - t0, a.status, a.body.payoutCount)
  t0 = Date.now()
  const g = await m.client.request('GET', `/v1/payout-drafts/${d.body.draftId}`)
  console.log('get', Date.now() - t0, g.status)
  t0 = Date.now()
  console.log(await reconcile(m.client))
  console.log('reconcile', Date.now() - t0, await balances(m.client))
  assert.ok(true)
})
