// Goal: several API processes and workers over one PostgreSQL behave as one service: shared
// idempotency and fences across processes, and a SIGTERM to one API process under load fails
// no request. On PGlite, `--processes` must refuse to start. Method: real child processes.
import assert from 'node:assert/strict'
import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync } from 'node:fs'
import { request } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { setTimeout as delay } from 'node:timers/promises'
import { legsForPayment } from '../../src/modules/ledger/index.ts'
import { Kurus } from '../../sdk/index.ts'
import { createTestDatabase, testBackend } from '../helpers/db.ts'
import { CARDS, charge, openSession, tokenize } from '../helpers/payments.ts'

const OPERATOR = 'cluster-test-operator-token'

function start(args: string[], env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, ['src/main.ts', ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  })
}

function exited(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) resolve(child.exitCode)
    else child.once('exit', (code) => resolve(code))
  })
}

/** One request on its own connection (no keep-alive), as a load balancer's health would see. */
function getStatusOnce(port: number, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, agent: false, timeout: 5_000 }, (res) => {
      res.resume()
      res.on('end', () => resolve(res.statusCode ?? 0))
    })
    req.on('timeout', () => req.destroy(new Error('timed out')))
    req.on('error', reject)
    req.end()
  })
}

/**
 * Like a load balancer, a connection the dying process accepted but never answered (the
 * cluster's primary may hand it one after SIGTERM) is retried once on another connection.
 * An HTTP error status is never retried: it counts as a failed request.
 */
async function getStatus(port: number, path: string): Promise<number> {
  try {
    return await getStatusOnce(port, path)
  } catch {
    return getStatusOnce(port, path)
  }
}

async function waitReady(port: number): Promise<void> {
  for (let i = 0; i < 300; i++) {
    try {
      if ((await getStatus(port, '/readyz')) === 200) return
    } catch {
      // not listening yet
    }
    await delay(100)
  }
  throw new Error('the cluster did not become ready')
}

test('--processes refuses to start on embedded PGlite', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'kurus-cluster-'))
  const child = spawn(process.execPath, ['src/main.ts', 'serve', '--processes', '2'], {
    env: { ...process.env, DATABASE_URL: '', KURUS_DATA_DIR: dir, PORT: '0' },
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  let stderr = ''
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()))
  assert.equal(await exited(child), 1)
  assert.match(stderr, /needs PostgreSQL/)
})

test('two API processes and two workers share one database', { timeout: 180_000 }, async (t) => {
  if (testBackend() !== 'postgres') {
    // Several processes need PostgreSQL by design; the PGlite run checks the refusal above.
    assert.equal(testBackend(), 'pglite')
    return
  }
  const db = await createTestDatabase()
  const port = 20_000 + (process.pid % 20_000)
  const env = {
    DATABASE_URL: db.url ?? '',
    KURUS_DATA_DIR: mkdtempSync(join(tmpdir(), 'kurus-cluster-')),
    KURUS_MASTER_KEY: 'd'.repeat(64),
    KURUS_OPERATOR_TOKEN: OPERATOR,
    KURUS_RATE_LIMIT_RPS: '100000',
    KURUS_RATE_LIMIT_BURST: '100000',
    LOG_LEVEL: 'warn',
    PORT: String(port),
  }
  const primary = start(['serve', '--processes', '2', '--no-worker'], env)
  const workers = [start(['worker'], env), start(['worker'], env)]
  t.after(async () => {
    for (const p of [primary, ...workers]) p.kill('SIGTERM')
    await Promise.all([primary, ...workers].map(exited))
    await db.drop()
  })
  await waitReady(port)
  const base = `http://127.0.0.1:${port}`
  const created = await fetch(`${base}/operator/v1/merchants`, {
    method: 'POST',
    headers: { authorization: `Bearer ${OPERATOR}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Cluster', kycStatus: 'approved' }),
  })
  const m = (await created.json()) as { merchantId: string; publicKey: string; secretKey: string }
  const client = new Kurus({ ...m, baseUrl: base })

  // The transactionId fence and idempotency hold across processes.
  const { transactionId } = await openSession(client, 7_000)
  const cardToken = await tokenize(client, CARDS.frictionless)
  const body = { transactionId, amount: 7_000, currency: 'TRY', cardToken }
  const key = crypto.randomUUID()
  const results = await Promise.all(
    Array.from({ length: 20 }, (_, i) =>
      client.request<{ paymentId: string; code?: string }>('POST', '/v1/payments/card', {
        body,
        ...(i % 2 === 0 ? { idempotencyKey: key } : {}),
      }),
    ),
  )
  const ids = new Set(results.filter((r) => r.status < 300).map((r) => r.body.paymentId))
  assert.equal(ids.size, 1, JSON.stringify(results.map((r) => [r.status, r.body])))
  assert.ok(results.every((r) => [200, 201, 202, 409].includes(r.status)))
  assert.ok(results.filter((r) => r.status === 409).every((r) => r.body.code === 'SVC-GW-2002'))

  // Concurrent captures through both processes post one set of legs.
  const auth = await charge(client, CARDS.frictionless, 9_000, { capture: false })
  const id = auth.res.body.paymentId
  const caps = await Promise.all(
    Array.from({ length: 10 }, () =>
      client.request<{ status: string }>('POST', `/v1/payments/${id}/capture`, { body: {} }),
    ),
  )
  assert.ok(caps.every((r) => r.status === 200 && r.body.status === 'captured'))
  const legs = await legsForPayment(db.handle.db, m.merchantId, id)
  assert.equal(legs.filter((l) => l.accountType === 'buyer_pending').length, 1)

  // SIGTERM one API process under load: in-flight requests finish, new connections go to
  // the other process, and the primary starts a replacement. No request may fail.
  const children = execFileSync('pgrep', ['-P', String(primary.pid)], { encoding: 'utf8' })
    .trim()
    .split('\n')
    .map(Number)
  assert.equal(children.length, 2)
  let sent = 0
  const statuses: number[] = []
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (sent < 400) {
        sent++
        if (sent === 100) process.kill(children[0] ?? 0, 'SIGTERM')
        statuses.push(await getStatus(port, '/healthz'))
      }
    }),
  )
  assert.equal(statuses.length, 400)
  assert.deepEqual(
    statuses.filter((s) => s !== 200),
    [],
  )
})
