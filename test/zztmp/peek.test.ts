import { test } from 'node:test'
import { startTestApp } from '../helpers/app.ts'
import { rawRequest } from '../security/_support.ts'
test('peek', async (t) => {
  const h = await startTestApp(t)
  await rawRequest(h, { method: 'GET', path: '/v1/payments/4155650100416111?bin=4155650100416111&x=sk_demo_abcdefghijklmnopqrstuvwxyz' })
  await rawRequest(h, { method: 'GET', path: '/s/4155650100416111' })
  for (const l of h.logs) console.log(l.trim())
})
