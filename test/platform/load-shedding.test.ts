// Goal: beyond KURUS_INFLIGHT_MAX concurrent requests the service answers 503 SVC-GW-1005
// with Retry-After at once instead of queueing. Method: a slow test route held open.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { FastifyPluginAsync } from 'fastify'
import { startTestApp } from '../helpers/app.ts'

test('requests beyond the in-flight limit are shed with 503 and Retry-After', async (t) => {
  let release: () => void = () => undefined
  const gate = new Promise<void>((resolve) => (release = resolve))
  let entered = 0
  const slow: FastifyPluginAsync = async (app) => {
    app.get('/v1/test/slow', async () => {
      entered++
      await gate
      return { ok: true }
    })
  }
  const h = await startTestApp(t, {
    env: { KURUS_INFLIGHT_MAX: '3' },
    extraSignedRoutes: [slow],
  })
  const m = await h.newMerchant()
  const held = Array.from({ length: 3 }, () => m.client.request('GET', '/v1/test/slow'))
  // Wait until all three are inside the handler; health probes are never shed.
  while (entered < 3) assert.equal((await fetch(`${h.url}/healthz`)).status, 200)
  const shed = await m.client.request<{ code: string }>('GET', '/v1/auth/whoami')
  assert.equal(shed.status, 503)
  assert.equal(shed.body.code, 'SVC-GW-1005')
  assert.equal(shed.headers.get('retry-after'), '1')
  release()
  for (const r of await Promise.all(held)) assert.equal(r.status, 200)
  const after = await m.client.request('GET', '/v1/auth/whoami')
  assert.equal(after.status, 200)
})
