// Goal: smoke. Method: HTTP.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { startTestApp } from '../helpers/app.ts'
import { listAll, pay } from './_support.ts'

test('smoke', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const t0 = performance.now()
  for (let i = 0; i < 3; i++) await pay(m.client, 1000 + i)
  console.log('40 payments ms', performance.now() - t0)
  const all = await listAll(m.client, {}, 7)
  assert.equal(all.length, 3)
  console.log(all[0])
  const d = await m.client.request('GET', `/v1/transactions/${all[0]!.id}`)
  console.log(d.status, d.body)
  const l = await m.client.request('GET', `/v1/transactions/${all[0]!.id}/ledger`)
  console.log(l.status, l.body)
  const e = await m.client.request<{exportId:string}>('POST', `/v1/transactions/exports`, { body: { format: 'pdf' } })
  console.log(e.status, e.body)
  const dl0 = await m.client.request('GET', `/v1/transactions/exports/${e.body.exportId}/download`)
  console.log(dl0.status, dl0.body)
  const r = await m.client.request('POST', `/v1/sandbox/reconcile`, { body: {} })
  console.log(r.status, r.body)
  const g = await m.client.request('GET', `/v1/transactions/exports/${e.body.exportId}`)
  console.log(g.status, g.body)
  const dl = await m.client.request<Buffer>('GET', `/v1/transactions/exports/${e.body.exportId}/download`)
  console.log(dl.status, dl.headers, dl.body.length)
  const { writeFileSync } = await import('node:fs')
  writeFileSync('/tmp/smoke.pdf', dl.body)
})
