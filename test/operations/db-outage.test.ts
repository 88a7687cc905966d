// Goal (issue 37): while PostgreSQL is down, signed requests are answered 503 SVC-INT-9002 with
// Retry-After within 2 s (not 500 SVC-INT-9001 after 15 s), /readyz is 503, and the processes
// log the outage once (one line per change of state, no stack per request); within 2 s of
// the database being back the same processes serve again, and @kurus/node, which retries a
// 503 after its Retry-After, carries a call across the outage.
// Method: a private PostgreSQL cluster (test/helpers/pg-cluster.ts; never the shared server)
// stopped with -m immediate and started again, under `kurus serve` and `kurus worker` as real
// processes whose JSON log lines the test reads. It does not use the test database, so it
// runs once, in the PGlite pass.
import assert from 'node:assert/strict'
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { setTimeout as delay } from 'node:timers/promises'
import { Kurus as KurusSdk } from '../../packages/node/src/index.ts'
import { Kurus } from '../../sdk/index.ts'
import { PrivateCluster } from '../helpers/pg-cluster.ts'

const OPERATOR = 'db-outage-test-operator-token-0123'
/** The bound the issue sets for both edges of an outage. */
const WITHIN_MS = 2_000

async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  await new Promise<void>((resolve) => server.close(() => resolve()))
  assert.ok(address && typeof address === 'object')
  return address.port
}

interface Proc {
  child: ChildProcess
  lines(): Record<string, unknown>[]
  text(): string
}

function start(args: string[], env: Record<string, string>): Proc {
  const child = spawn(process.execPath, ['src/main.ts', ...args], {
    env: { PATH: process.env['PATH'] ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let out = ''
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()))
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()))
  return {
    child,
    text: () => out,
    lines: () =>
      out
        .split('\n')
        .filter(Boolean)
        .map((l) => {
          try {
            return JSON.parse(l) as Record<string, unknown>
          } catch {
            return { level: 60, msg: `not JSON: ${l}` }
          }
        }),
  }
}

function exited(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve()
    else child.once('exit', () => resolve())
  })
}

async function status(url: string): Promise<number> {
  try {
    return (await fetch(url, { signal: AbortSignal.timeout(10_000) })).status
  } catch {
    return 0
  }
}

test('database down: 503 SVC-INT-9002 with Retry-After within 2 s, one log line, back within 2 s', async (t) => {
  const cluster = new PrivateCluster(await freePort())
  t.after(() => cluster.remove())
  await cluster.init()
  const port = await freePort()
  const dir = mkdtempSync(join(tmpdir(), 'kurus-outage-'))
  const env = {
    DATABASE_URL: cluster.url,
    KURUS_DATA_DIR: dir,
    KURUS_MASTER_KEY: '9'.repeat(64),
    KURUS_OPERATOR_TOKEN: OPERATOR,
    LOG_LEVEL: 'info',
    PORT: String(port),
    KURUS_RATE_LIMIT_RPS: '100000',
    KURUS_RATE_LIMIT_BURST: '100000',
  }
  const api = start(['serve', '--no-worker'], env)
  const worker = start(['worker'], env)
  t.after(async () => {
    for (const p of [api, worker]) p.child.kill('SIGKILL')
    await Promise.all([api, worker].map((p) => exited(p.child)))
    rmSync(dir, { recursive: true, force: true })
  })
  const base = `http://127.0.0.1:${port}`
  for (let i = 0; i < 1_200 && (await status(`${base}/readyz`)) !== 200; i++) {
    assert.equal(api.child.exitCode, null, api.text())
    await delay(100)
  }
  for (let i = 0; i < 1_200 && !worker.text().includes('"msg":"worker started"'); i++) {
    await delay(100)
  }
  const created = await fetch(`${base}/operator/v1/merchants`, {
    method: 'POST',
    headers: { authorization: `Bearer ${OPERATOR}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Outage', kycStatus: 'approved' }),
  })
  assert.equal(created.status, 201)
  const keys = (await created.json()) as { publicKey: string; secretKey: string }
  const client = new Kurus({ ...keys, baseUrl: base })
  assert.equal((await client.request('GET', '/v1/auth/whoami')).status, 200)
  const session = () =>
    client.request<{ code?: string }>('POST', '/v1/payments/sessions', {
      body: {
        transactionId: `outage-${crypto.randomUUID()}`,
        amount: 1_000,
        currency: 'TRY',
        returnUrl: 'https://shop.example/r',
      },
    })
  assert.equal((await session()).status, 201)
  const linesBefore = { api: api.lines().length, worker: worker.lines().length }

  // 1. The database goes away. Every signed request is answered 503 SVC-INT-9002 with
  // Retry-After, each within 2 s, and /readyz says 503.
  cluster.stop('immediate')
  const outageStarted = Date.now()
  for (let i = 0; i < 12; i++) {
    const started = Date.now()
    const res = i % 2 === 0 ? await client.request('GET', '/v1/auth/whoami') : await session()
    const took = Date.now() - started
    assert.equal(res.status, 503, JSON.stringify(res.body))
    assert.equal((res.body as { code?: string }).code, 'SVC-INT-9002')
    assert.ok(Number(res.headers.get('retry-after')) >= 1, 'Retry-After')
    assert.ok(took < WITHIN_MS, `answered in ${took} ms`)
    await delay(150)
  }
  assert.equal(await status(`${base}/readyz`), 503)
  assert.equal(await status(`${base}/healthz`), 200, 'the process itself is alive')
  // Let the worker's timers run into the outage too.
  await delay(Math.max(0, 3_000 - (Date.now() - outageStarted)))

  // @kurus/node retries a 503 after Retry-After: a call made during the outage succeeds once
  // the database is back.
  const sdk = new KurusSdk({ ...keys, baseUrl: base, maxRetries: 20 })
  const carried = sdk.whoami()

  // 2. The database comes back: the same processes serve again within 2 s.
  cluster.start()
  const back = Date.now()
  let servedAfter = -1
  while (Date.now() - back < 30_000) {
    const res = await client.request('GET', '/v1/auth/whoami')
    if (res.status === 200) {
      servedAfter = Date.now() - back
      break
    }
    await delay(50)
  }
  assert.ok(servedAfter >= 0 && servedAfter < WITHIN_MS, `served again after ${servedAfter} ms`)
  assert.equal(await status(`${base}/readyz`), 200)
  assert.equal((await session()).status, 201)
  assert.ok((await carried).merchantId, '@kurus/node carried the call across the outage')
  await delay(1_500)

  // One log line per change of state, no stack per request, and nothing but JSON.
  for (const [name, proc, from] of [
    ['api', api, linesBefore.api],
    ['worker', worker, linesBefore.worker],
  ] as const) {
    const during = proc.lines().slice(from)
    const loud = during.filter((l) => Number(l['level']) >= 50)
    assert.deepEqual(
      loud.map((l) => l['msg']),
      ['database unreachable: requests are answered 503 SVC-INT-9002 until it answers again'],
      `${name}: one error line for the outage:\n${proc.text().slice(-4000)}`,
    )
    assert.equal(
      during.filter((l) => l['msg'] === 'database reachable again: serving requests').length,
      1,
      `${name}: one line when the database is back`,
    )
    const stacks = during.filter((l) => JSON.stringify(l).includes('"stack"'))
    assert.deepEqual(stacks, [], `${name}: no stack traces`)
  }
  assert.equal(api.child.exitCode, null, 'the API process is the same one')
  assert.equal(worker.child.exitCode, null, 'the worker process is the same one')
})
