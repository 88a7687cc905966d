// Goal: /metrics has the series operators need (request latency by route and status, payments
// by outcome, job queue depth, database pool use, webhook delivery lag and backlog age) and
// request log lines carry requestId, route and merchantId with no card data. Method: real app,
// a few payments (and a webhook receiver that fails once), the test clock moved, then scrapes.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { startTestApp } from '../helpers/app.ts'
import { testBackend } from '../helpers/db.ts'
import { CARDS, charge } from '../helpers/payments.ts'
import {
  MINUTE,
  addEndpoint,
  authorizedPayment,
  newDashboardMerchant,
  reconcile,
  startReceiver,
} from '../webhooks/_support.ts'

async function scrape(url: string): Promise<string> {
  const res = await fetch(`${url}/metrics`)
  assert.equal(res.status, 200)
  return res.text()
}

/** The value of one series in a scrape. */
function sample(text: string, series: string): number {
  const line = text.split('\n').find((l) => l.startsWith(series + ' '))
  const value = Number(line?.slice(series.length + 1))
  assert.ok(Number.isFinite(value), `${series} in the scrape`)
  return value
}

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
  assert.match(text, /# TYPE kurus_webhook_delivery_lag_seconds histogram/)
  assert.match(text, /# TYPE kurus_webhook_oldest_undelivered_event_seconds gauge/)
  // PostgreSQL: the pg pool; PGlite: its one connection and the transactions queued for it.
  assert.match(
    text,
    testBackend() === 'postgres'
      ? /kurus_db_pool_connections\{state="total"\} \d+/
      : /kurus_db_pool_connections\{state="total"\} 1\n/,
  )
  assert.match(text, /kurus_db_pool_connections\{state="waiting"\} \d+/)
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
  // One access line per request (issue 29: not Fastify's two), with the route and merchant.
  assert.deepEqual(
    mine.map((l) => l['msg']),
    ['request completed'],
  )
  const completed = mine[0]
  assert.equal(completed?.['route'], '/v1/auth/whoami')
  assert.equal(completed['merchantId'], m.merchantId)
  assert.equal((completed['res'] as { statusCode?: number }).statusCode, 200)
  assert.equal(typeof completed['responseTime'], 'number')
  assert.equal((completed['req'] as { url?: string }).url, '/v1/auth/whoami')
  // An error's completion line names its code, not only the status.
  const declined = await charge(m.client, CARDS.declined, 5_000)
  assert.equal(declined.res.status, 402)
  const declineLine = h.logs
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .find((l) => l['requestId'] === declined.res.requestId && l['msg'] === 'request completed')
  assert.equal(declineLine?.['errorCode'], 'SVC-PAY-3501')
  const all = h.logs.join('\n')
  assert.equal(all.includes(CARDS.frictionless), false)
  assert.equal(all.includes(m.secretKey), false)
})

test('webhook delivery lag (histogram) and the oldest undelivered event (gauge)', async (t) => {
  // A database of its own: the gauge is about every merchant's events.
  const h = await startTestApp(t, { freshDatabase: true })
  const m = await newDashboardMerchant(h)
  const receiver = await startReceiver(t)
  receiver.respond = (n) => (n === 1 ? 500 : 200)
  await addEndpoint(m, receiver.url)
  const lag = 'kurus_webhook_delivery_lag_seconds'
  const oldest = 'kurus_webhook_oldest_undelivered_event_seconds'
  const before = await scrape(h.url)
  assert.equal(sample(before, oldest), 0)
  const countBefore = sample(before, `${lag}_count`)

  await authorizedPayment(m.client)
  // Not dispatched yet: the event's age counts.
  h.clock.advance(1.5 * MINUTE)
  const waiting = sample(await scrape(h.url), oldest)
  assert.ok(waiting >= 90 && waiting < 120, `oldest ${waiting}`)
  // The first attempt fails: the delivery is pending, the event still undelivered.
  await reconcile(m.client)
  assert.equal(receiver.received.length, 1)
  const retrying = sample(await scrape(h.url), oldest)
  assert.ok(retrying >= 90 && retrying < 120, `oldest ${retrying}`)
  assert.equal(sample(await scrape(h.url), `${lag}_count`), countBefore)

  // The retry, two minutes later, succeeds 3.5 minutes after the event.
  h.clock.advance(2 * MINUTE)
  await reconcile(m.client)
  assert.equal(receiver.received.length, 2)
  const after = await scrape(h.url)
  assert.equal(sample(after, oldest), 0)
  assert.equal(sample(after, `${lag}_count`), countBefore + 1)
  assert.equal(sample(after, `${lag}_bucket{le="60"}`), sample(before, `${lag}_bucket{le="60"}`))
  assert.equal(
    sample(after, `${lag}_bucket{le="300"}`),
    sample(before, `${lag}_bucket{le="300"}`) + 1,
  )
  const seconds = sample(after, `${lag}_sum`) - sample(before, `${lag}_sum`)
  assert.ok(seconds >= 210 && seconds < 240, `lag ${seconds}`)
})
