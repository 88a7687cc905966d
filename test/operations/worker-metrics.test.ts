// Goal: a `kurus worker` process, which runs the webhook deliveries and the other jobs but no
// API, serves their series on KURUS_WORKER_METRICS_PORT (and nothing else there).
// Method: startWorker over a database of its own (PostgreSQL, or PGlite in a temporary data
// directory), then a scrape over HTTP.
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { loadConfig } from '../../src/config.ts'
import { createLogger } from '../../src/platform/logger.ts'
import { startWorker } from '../../src/server.ts'
import { createTestDatabase, testBackend } from '../helpers/db.ts'

test('the worker serves /metrics on KURUS_WORKER_METRICS_PORT', { timeout: 120_000 }, async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'kurus-worker-'))
  t.after(() => rmSync(dataDir, { recursive: true, force: true }))
  const env: Record<string, string> = {
    KURUS_DATA_DIR: dataDir,
    KURUS_WORKER_METRICS_PORT: '0',
  }
  if (testBackend() === 'postgres') {
    const database = await createTestDatabase()
    t.after(() => database.drop())
    env['DATABASE_URL'] = database.url ?? ''
  }
  assert.equal(loadConfig({ ...env, KURUS_WORKER_METRICS_PORT: '' }).workerMetricsPort, undefined)
  const worker = await startWorker(loadConfig(env), {
    concurrency: 1,
    log: createLogger('silent'),
  })
  t.after(() => worker.close())
  assert.match(worker.metricsUrl ?? '', /^http:\/\/127\.0\.0\.1:\d+\/metrics$/)

  const res = await fetch(worker.metricsUrl ?? '')
  assert.equal(res.status, 200)
  assert.match(res.headers.get('content-type') ?? '', /text\/plain/)
  const text = await res.text()
  assert.match(text, /# TYPE kurus_webhook_delivery_lag_seconds histogram/)
  assert.match(text, /^kurus_webhook_oldest_undelivered_event_seconds 0$/m)
  assert.match(text, /# TYPE kurus_job_queue_depth gauge/)
  assert.match(text, /# TYPE kurus_payments_total counter/)
  assert.match(text, /process_cpu_seconds_total/)
  const other = await fetch((worker.metricsUrl ?? '').replace('/metrics', '/healthz'))
  assert.equal(other.status, 404)
})
