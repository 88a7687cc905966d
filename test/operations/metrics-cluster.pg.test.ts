// Goal (issue 37): with `serve --processes 2`, a /metrics scrape returns the sum of both API
// processes' series, whichever process the scrape lands on; before, each scrape returned one
// process's counters (5, 7, 5 … for the same traffic).
// Method: a real two-process cluster on PostgreSQL; requests on fresh connections (the
// cluster's primary hands connections to its processes in turn), then several scrapes, each on
// a fresh connection: every one must count exactly the requests sent. On PGlite `--processes`
// refuses to start (test/operations/cluster.pg.test.ts); there one process's scrape must count
// what it served, the same check without the cluster.
import assert from 'node:assert/strict'
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { request } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { setTimeout as delay } from 'node:timers/promises'
import { createTestDatabase, testBackend } from '../helpers/db.ts'
import { freePort } from '../helpers/ports.ts'

const REQUESTS = 24

/** One GET on a connection of its own, so that the cluster spreads them over its processes. */
function get(port: number, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, agent: false, timeout: 10_000 }, (res) => {
      let body = ''
      res.on('data', (d: Buffer) => (body += d.toString()))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }))
    })
    req.on('timeout', () => req.destroy(new Error('timed out')))
    req.on('error', reject)
    req.end()
  })
}

function exited(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve()
    else child.once('exit', () => resolve())
  })
}

/** kurus_http_request_duration_seconds_count for GET /healthz 200 in a scrape. */
function healthzCount(scrape: string): number {
  const line = scrape
    .split('\n')
    .find(
      (l) =>
        l.startsWith('kurus_http_request_duration_seconds_count{') &&
        l.includes('route="/healthz"') &&
        l.includes('status="200"'),
    )
  return Number(line?.split(' ').pop() ?? 0)
}

test('a scrape of `serve --processes 2` returns the sum of both processes', async (t) => {
  const db = testBackend() === 'postgres' ? await createTestDatabase() : undefined
  const dir = mkdtempSync(join(tmpdir(), 'kurus-metrics-'))
  const port = await freePort()
  const args =
    db === undefined ? ['serve', '--no-worker'] : ['serve', '--processes', '2', '--no-worker']
  const child = spawn(process.execPath, ['src/main.ts', ...args], {
    env: {
      PATH: process.env['PATH'] ?? '',
      DATABASE_URL: db?.url ?? '',
      KURUS_DATA_DIR: dir,
      KURUS_MASTER_KEY: 'f'.repeat(64),
      KURUS_OPERATOR_TOKEN: 'metrics-cluster-operator-token',
      LOG_LEVEL: 'warn',
      PORT: String(port),
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  let stderr = ''
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()))
  t.after(async () => {
    child.kill('SIGTERM')
    await exited(child)
    await db?.drop()
    rmSync(dir, { recursive: true, force: true })
  })
  let ready = false
  for (let i = 0; i < 1_200 && !ready; i++) {
    assert.equal(child.exitCode, null, stderr)
    ready = await get(port, '/readyz').then(
      (r) => r.status === 200,
      () => false,
    )
    if (!ready) await delay(100)
  }
  assert.ok(ready, `the service did not become ready: ${stderr}`)
  // Both processes must be up before the count starts: each answers /readyz on its own.
  for (let i = 0; i < 4; i++) assert.equal((await get(port, '/readyz')).status, 200)

  const before = healthzCount((await get(port, '/metrics')).body)
  for (let i = 0; i < REQUESTS; i++) assert.equal((await get(port, '/healthz')).status, 200)
  const counts: number[] = []
  for (let i = 0; i < 4; i++) {
    const scrape = await get(port, '/metrics')
    assert.equal(scrape.status, 200, scrape.body)
    counts.push(healthzCount(scrape.body) - before)
  }
  assert.deepEqual(
    counts,
    [REQUESTS, REQUESTS, REQUESTS, REQUESTS],
    'every scrape counts every request',
  )
})
