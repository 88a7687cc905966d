// Load test of the signed gateway: `GET /v1/auth/whoami` through HMAC verification, the key
// lookup (with secret decryption), the rate limiter and the envelope hooks, on the real server
// (`node src/main.ts serve --no-worker`: an API process, background jobs left to workers), next
// to an unsigned Fastify hello world started in the same run.
// Usage: npm run bench:gateway   (BENCH_DATABASE_URL=postgres://… to run over PostgreSQL)
// Knobs: BENCH_DURATION (s, default 10), BENCH_WARMUP (s, default 2), BENCH_CONNECTIONS (default 32).
import { spawn, execFileSync, type ChildProcess } from 'node:child_process'
import { createHash, createHmac } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { createServer } from 'node:net'
import os, { cpus, tmpdir, totalmem } from 'node:os'
import { join } from 'node:path'
import { setTimeout as delay } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'

interface Histogram {
  average: number
  p50: number
  p99: number
}
interface AutocannonResult {
  requests: Histogram & { total: number }
  latency: Histogram
  non2xx: number
  errors: number
  timeouts: number
  duration: number
}
interface AutocannonRequest {
  method?: string
  path?: string
  headers?: Record<string, string>
  setupRequest?: (req: AutocannonRequest) => AutocannonRequest
}
type Autocannon = (options: {
  url: string
  connections: number
  duration: number
  requests?: AutocannonRequest[]
}) => Promise<AutocannonResult>

// autocannon ships no type declarations; the shape above is what this script uses.
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const DURATION = Number(process.env['BENCH_DURATION'] ?? 10)
const WARMUP = Number(process.env['BENCH_WARMUP'] ?? 2)
const CONNECTIONS = Number(process.env['BENCH_CONNECTIONS'] ?? 32)
const DATABASE_URL = process.env['BENCH_DATABASE_URL']
// Fixed secrets so a reused PostgreSQL database can still decrypt the keys of earlier runs.
const MASTER_KEY = 'b'.repeat(64)
const OPERATOR_TOKEN = 'bench-operator-token'

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() =>
        address && typeof address === 'object' ? resolve(address.port) : reject(new Error('port')),
      )
    })
  })
}

async function waitReady(url: string, child: ChildProcess): Promise<void> {
  for (let i = 0; i < 600; i++) {
    if (child.exitCode !== null) throw new Error(`${url}: process exited (${child.exitCode})`)
    try {
      const res = await fetch(url)
      if (res.ok) return
    } catch {
      // not listening yet
    }
    await delay(200)
  }
  throw new Error(`${url} did not become ready`)
}

function stop(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve()
    child.once('exit', () => resolve())
    child.kill('SIGTERM')
  })
}

async function measure(label: string, url: string, requests: AutocannonRequest[]) {
  await autocannon({ url, connections: CONNECTIONS, duration: WARMUP, requests })
  const r = await autocannon({ url, connections: CONNECTIONS, duration: DURATION, requests })
  const row = {
    label,
    rps: Math.round(r.requests.average),
    total: r.requests.total,
    p50: r.latency.p50,
    p99: r.latency.p99,
    non2xx: r.non2xx,
    errors: r.errors + r.timeouts,
  }
  process.stderr.write(`${JSON.stringify(row)}\n`)
  return row
}

function sh(cmd: string, args: string[]): string {
  try {
    return execFileSync(cmd, args, { encoding: 'utf8' }).trim()
  } catch {
    return '?'
  }
}

async function main(): Promise<void> {
  const loadBefore = os.loadavg()[0]?.toFixed(1) ?? '?'
  const dataDir = mkdtempSync(join(tmpdir(), 'kurus-bench-'))
  const apiPort = await freePort()
  const helloPort = await freePort()
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    KURUS_DATA_DIR: dataDir,
    PORT: String(apiPort),
    HOST: '127.0.0.1',
    KURUS_ENV: 'demo',
    KURUS_MASTER_KEY: MASTER_KEY,
    KURUS_OPERATOR_TOKEN: OPERATOR_TOKEN,
    KURUS_RATE_LIMIT_RPS: '10000000',
    KURUS_RATE_LIMIT_BURST: '10000000',
    // Per-request access logs would measure the terminal; warnings and errors still print.
    LOG_LEVEL: 'warn',
  }
  delete env['DATABASE_URL']
  if (DATABASE_URL) env['DATABASE_URL'] = DATABASE_URL

  const api = spawn(process.execPath, ['src/main.ts', 'serve', '--no-worker'], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'ignore', 'inherit'],
  })
  // The baseline: the same Fastify, no hooks, no database, no logging.
  const hello = spawn(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `import Fastify from 'fastify'
       const app = Fastify({ logger: false })
       app.get('/', async () => ({ hello: 'world' }))
       await app.listen({ port: ${helloPort}, host: '127.0.0.1' })`,
    ],
    { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] },
  )
  try {
    const base = `http://127.0.0.1:${apiPort}`
    await waitReady(`${base}/readyz`, api)
    await waitReady(`http://127.0.0.1:${helloPort}/`, hello)
    const created = await fetch(`${base}/operator/v1/merchants`, {
      method: 'POST',
      headers: { authorization: `Bearer ${OPERATOR_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Bench', kycStatus: 'approved' }),
    })
    if (created.status !== 201) throw new Error(`merchant create: ${await created.text()}`)
    const keys = (await created.json()) as { publicKey: string; secretKey: string }

    const emptySha = createHash('sha256').update('').digest('hex')
    const path = '/v1/auth/whoami'
    // A fresh timestamp and signature for every request, as a real client sends.
    const signed: AutocannonRequest = {
      method: 'GET',
      path,
      setupRequest: (req) => {
        const timestamp = new Date().toISOString()
        const signature = createHmac('sha256', keys.secretKey)
          .update(`${timestamp}\nGET\n${path}\n${emptySha}`)
          .digest('hex')
        return {
          ...req,
          headers: {
            'x-api-key': keys.publicKey,
            'x-timestamp': timestamp,
            'x-signature': signature,
          },
        }
      },
    }
    const backend = DATABASE_URL ? 'PostgreSQL' : 'PGlite'
    const rows = [
      await measure('Fastify hello world (unsigned baseline)', `http://127.0.0.1:${helloPort}`, [
        { method: 'GET', path: '/' },
      ]),
      await measure(`signed GET /v1/auth/whoami (${backend})`, base, [signed]),
    ]

    const lines = [
      `### ${new Date().toISOString().slice(0, 10)} — ${backend}`,
      '',
      `Machine: ${sh('nproc', [])} CPUs (${cpus()[0]?.model ?? '?'}), ${(totalmem() / 2 ** 30).toFixed(1)} GiB RAM` +
        ` (\`free -h\` total ${sh('bash', ['-c', "free -h | awk '/^Mem/ {print $2}'"])}), Node ${process.version}, ` +
        `autocannon ${CONNECTIONS} connections, ${WARMUP} s warm-up then ${DURATION} s measured; ` +
        'load generator, server and database on the same machine; load average before the run ' +
        `${loadBefore}, after ${os.loadavg()[0]?.toFixed(1) ?? '?'}.`,
      '',
      '| target | req/s (mean) | p50 ms | p99 ms | requests | non-2xx | errors |',
      '|---|---:|---:|---:|---:|---:|---:|',
      ...rows.map(
        (r) =>
          `| ${r.label} | ${r.rps} | ${r.p50} | ${r.p99} | ${r.total} | ${r.non2xx} | ${r.errors} |`,
      ),
      '',
    ]
    process.stdout.write(lines.join('\n') + '\n')
  } finally {
    await Promise.all([stop(api), stop(hello)])
    rmSync(dataDir, { recursive: true, force: true })
  }
}

await main()
