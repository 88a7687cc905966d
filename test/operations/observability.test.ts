// Goal: /metrics has the series operators need (request latency by route and status, payments
// by outcome, job queue depth, database pool use) and request log lines carry requestId,
// route and merchantId with no card data. Method: real app, a few payments, then a scrape.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { startTestApp } from '../helpers/app.ts'
import { testBackend } from '../helpers/db.ts'
import { CARDS, charge } from '../helpers/payments.ts'

test('the metrics endpoint exposes the operational series', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  await charge(m.client, CARDS.frictionless, 5_000)
  await charge(m.client, CARDS.declined, 5_000)
  const res = await fetch(`${h.url}/metrics`)
  assert.equal(res.status, 200)
  assert.match(res.headers.get('content-type') ?? '', /text\/plain/)
  const text = await res.text()
  assert.match(
    text,
    /kurus_http_request_duration_seconds_count\{method="POST",route="\/v1\/payments\/card",status="201"\} \d+/,
  )
  assert.match(text, /kurus_http_request_duration_seconds_count\{[^}]*status="402"\} \d+/)
  assert.match(text, /kurus_payments_total\{outcome="captured"\} \d+/)
  assert.match(text, /kurus_payments_total\{outcome="failed"\} \d+/)
  assert.match(text, /# TYPE kurus_job_queue_depth gauge/)
  assert.match(text, /# TYPE kurus_job_queue_oldest_seconds gauge/)
  assert.match(text, /process_cpu_seconds_total/)
  if (testBackend() === 'postgres') {
    assert.match(text, /kurus_db_pool_connections\{state="total"\} \d+/)
  }
})

test('request log lines carry requestId, route and merchantId, and no card data', async (t) => {
  const h = await startTestApp(t)
  const m = await h.newMerchant()
  const requestId = crypto.randomUUID()
  await m.client.request('GET', '/v1/auth/whoami', { requestId })
  await charge(m.client, CARDS.frictionless, 5_000)
  const lines = h.logs.map((l) => JSON.parse(l) as Record<string, unknown>)
  const mine = lines.filter((l) => l['requestId'] === requestId)
  assert.ok(mine.length > 0, 'the request logged')
  // Fastify logs 'incoming request' before routing; every later line knows the route.
  const completed = mine.find((l) => l['msg'] === 'request completed')
  assert.equal(completed?.['route'], '/v1/auth/whoami')
  assert.equal(completed['merchantId'], m.merchantId)
  for (const line of mine.filter((l) => l['msg'] !== 'incoming request')) {
    assert.equal(line['route'], '/v1/auth/whoami')
  }
  const all = h.logs.join('\n')
  assert.equal(all.includes(CARDS.frictionless), false)
  assert.equal(all.includes(m.secretKey), false)
})
