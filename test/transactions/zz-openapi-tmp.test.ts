import assert from 'node:assert/strict'
import { test } from 'node:test'
import { startTestApp } from '/work/main/test/helpers/app.ts'
test('openapi', async (t) => {
  const h = await startTestApp(t)
  const res = await fetch(h.url + '/openapi.json')
  assert.equal(res.status, 200)
  const doc = (await res.json()) as { paths: Record<string, unknown> }
  const p = Object.keys(doc.paths).filter((k) => k.startsWith('/v1/transactions'))
  console.log(p)
  console.log(JSON.stringify((doc.paths['/v1/transactions/exports/{exportId}/download'] as any).get.responses['200']).slice(0, 400))
})
