// `node bench/flood.ts`: issue 22 §2's scenario. 32 clients flood the signed API with unsigned
// ~1 MiB bodies nested 500,000 deep while one client measures a signed `GET /v1/auth/whoami`,
// one request after another; its median under the flood is compared with its median alone
// (target: within 3×). Half the flood sends no credentials at all, half the merchant's real
// public key, a fresh timestamp and a wrong signature (the costly case: the body must be read
// and hashed before the signature can fail). The flood comes from other loopback addresses
// (127.0.0.2–127.0.0.33) than the measured client (127.0.0.1), as an attacker's would.
// Two server runs: the default failed-authentication limit (each flooding address is refused
// with 429 after 20 failures), and that limit lifted, which leaves only the early refusals
// (headers before the body, HMAC before JSON.parse) between the flood and the parser.
// Backend: PGlite in a temporary directory, or BENCH_DATABASE_URL=postgres://… (a scratch
// database is created there and dropped). Knobs: BENCH_SECONDS (per phase, default 10),
// BENCH_FLOOD_CLIENTS (default 32).
import { spawn } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { Agent, request as httpRequest } from 'node:http'
import { mkdtempSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import {
  ROOT,
  freePort,
  imageNodeArgs,
  machine,
  signHeaders,
  startProcess,
  stop,
  waitReady,
} from './lib.ts'

const SECONDS = Number(process.env['BENCH_SECONDS'] ?? 10)
const FLOOD_CLIENTS = Number(process.env['BENCH_FLOOD_CLIENTS'] ?? 32)
const DATABASE_URL = process.env['BENCH_DATABASE_URL']
const OPERATOR_TOKEN = 'bench-operator-token-0123456789'
// Extra node flags for the server, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof".
const NODE_ARGS = (process.env['BENCH_NODE_ARGS'] ?? '').split(' ').filter(Boolean)
const DEPTH = Number(process.env['BENCH_FLOOD_DEPTH'] ?? 500_000)
const FLOOD_BODY = Buffer.from('['.repeat(DEPTH) + ']'.repeat(DEPTH))
// Which flood clients carry the merchant's key (with a wrong signature): all, none or half.
const FLOOD_KEYS = process.env['BENCH_FLOOD_KEYS'] ?? 'half'
// Niceness of the flood process (0..19). A real flood comes from other machines; here the
// generator competes with the server for the same cores, which a positive value lessens.
const FLOOD_NICE = Number(process.env['BENCH_FLOOD_NICE'] ?? 0)

interface Keys {
  publicKey: string
  secretKey: string
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN
}

function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN
}

/** One HTTP request on `agent`; resolves with the status once the answer is read. */
function send(
  agent: Agent,
  port: number,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: Buffer,
): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        agent,
        headers: body ? { ...headers, 'content-length': String(body.length) } : headers,
      },
      (res) => {
        res.resume()
        res.on('end', () => resolve(res.statusCode ?? 0))
        res.on('error', reject)
      },
    )
    // The server may answer before it has read the body and then drop the rest of it.
    req.on('error', (error: NodeJS.ErrnoException) =>
      error.code === 'EPIPE' || error.code === 'ECONNRESET' ? resolve(-1) : reject(error),
    )
    req.end(body)
  })
}

/** Signed whoami, one after another, for `seconds`: the latencies in ms. */
async function measure(port: number, keys: Keys, seconds: number): Promise<number[]> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 })
  const latencies: number[] = []
  const until = performance.now() + seconds * 1000
  while (performance.now() < until) {
    const t0 = performance.now()
    const status = await send(
      agent,
      port,
      'GET',
      '/v1/auth/whoami',
      signHeaders(keys, 'GET', '/v1/auth/whoami', ''),
    )
    if (status !== 200) throw new Error(`whoami answered ${status}`)
    latencies.push(performance.now() - t0)
  }
  agent.destroy()
  return latencies
}

interface FloodStats {
  sent: number
  statuses: Record<string, number>
  bytes: number
}

/**
 * FLOOD_CLIENTS clients, each on its own loopback address, until SIGTERM; then prints its
 * statistics. Runs in a process of its own (`--flood`), so the measuring client's event loop
 * is not the one pushing 32 MiB bodies.
 */
async function floodChild(port: number, keys: Keys): Promise<void> {
  let running = true
  process.once('SIGTERM', () => {
    running = false
  })
  const stats: FloodStats = { sent: 0, statuses: {}, bytes: 0 }
  await Promise.all(
    Array.from({ length: FLOOD_CLIENTS }, async (_, i) => {
      const agent = new Agent({ keepAlive: true, maxSockets: 1, localAddress: `127.0.0.${i + 2}` })
      const withKey = FLOOD_KEYS === 'all' || (FLOOD_KEYS === 'half' && i % 2 === 1)
      while (running) {
        const headers: Record<string, string> = { 'content-type': 'application/json' }
        if (withKey) {
          Object.assign(headers, signHeaders(keys, 'POST', '/v1/customers', ''), {
            'x-signature': 'f'.repeat(64),
          })
        }
        const status = await send(agent, port, 'POST', '/v1/customers', headers, FLOOD_BODY)
        stats.sent++
        stats.bytes += FLOOD_BODY.length
        stats.statuses[String(status)] = (stats.statuses[String(status)] ?? 0) + 1
      }
      agent.destroy()
    }),
  )
  process.stdout.write(JSON.stringify(stats) + '\n')
}

function flood(port: number, keys: Keys): { stop(): Promise<FloodStats> } {
  const args = ['bench/flood.ts', '--flood', String(port), keys.publicKey, keys.secretKey]
  const child =
    FLOOD_NICE > 0
      ? spawn('nice', ['-n', String(FLOOD_NICE), process.execPath, ...args], {
          cwd: ROOT,
          stdio: ['ignore', 'pipe', 'inherit'],
        })
      : spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] })
  let out = ''
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()))
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  return {
    stop: async () => {
      child.kill('SIGTERM')
      await exited
      return JSON.parse(out) as FloodStats
    },
  }
}

async function provision(base: string): Promise<Keys> {
  const res = await fetch(`${base}/operator/v1/merchants`, {
    method: 'POST',
    headers: { authorization: `Bearer ${OPERATOR_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Flood bench', kycStatus: 'approved' }),
  })
  if (res.status !== 201) throw new Error(`merchant: ${res.status} ${await res.text()}`)
  return (await res.json()) as Keys
}

async function run(label: string, env: Record<string, string>, log: (line: string) => void) {
  const port = await freePort()
  const dataDir = mkdtempSync(join(tmpdir(), 'kurus-flood-'))
  const server = startProcess(
    [...imageNodeArgs(), ...NODE_ARGS, 'src/main.ts', 'serve', '--no-worker'],
    {
      KURUS_ENV: 'demo',
      KURUS_DATA_DIR: dataDir,
      KURUS_MASTER_KEY: 'd'.repeat(64),
      KURUS_OPERATOR_TOKEN: OPERATOR_TOKEN,
      LOG_LEVEL: 'warn',
      KURUS_RATE_LIMIT_RPS: '1000000',
      KURUS_RATE_LIMIT_BURST: '1000000',
      PORT: String(port),
      NODE_ENV: 'production',
      ...env,
    },
  )
  try {
    const base = `http://127.0.0.1:${port}`
    await waitReady(`${base}/readyz`)
    const keys = await provision(base)
    await measure(port, keys, 2) // warm-up
    const alone = await measure(port, keys, SECONDS)
    const attack = flood(port, keys)
    await new Promise((resolve) => setTimeout(resolve, 1000))
    const loaded = await measure(port, keys, SECONDS)
    const stats = await attack.stop()
    const ratio = median(loaded) / median(alone)
    log(
      `${label}\n` +
        `  whoami alone        median ${median(alone).toFixed(2)} ms  p99 ${quantile(alone, 0.99).toFixed(2)} ms  (${alone.length} requests)\n` +
        `  whoami under flood  median ${median(loaded).toFixed(2)} ms  p99 ${quantile(loaded, 0.99).toFixed(2)} ms  (${loaded.length} requests)\n` +
        `  ratio ${ratio.toFixed(2)} (target <= 3)  ${ratio <= 3 ? 'PASS' : 'FAIL'}\n` +
        `  flood: ${stats.sent} requests of ${(FLOOD_BODY.length / 2 ** 20).toFixed(2)} MiB from ${FLOOD_CLIENTS} addresses, statuses ${JSON.stringify(stats.statuses)}`,
    )
  } finally {
    await stop(server)
    rmSync(dataDir, { recursive: true, force: true })
  }
}

async function main(): Promise<void> {
  const lines: string[] = []
  const log = (line: string) => {
    lines.push(line)
    process.stdout.write(line + '\n')
  }
  let dbEnv: Record<string, string> = {}
  let dropDb: (() => Promise<void>) | undefined
  if (DATABASE_URL) {
    const name = `kurus_flood_${process.pid}_${randomUUID().slice(0, 8)}`
    const admin = async (q: string) => {
      const c = new pg.Client({ connectionString: DATABASE_URL })
      await c.connect()
      await c.query(q).finally(() => c.end())
    }
    await admin(`create database ${name}`)
    const url = new URL(DATABASE_URL)
    url.pathname = `/${name}`
    dbEnv = { DATABASE_URL: url.toString() }
    dropDb = () => admin(`drop database if exists ${name} with (force)`)
  }
  const m = machine()
  log(
    `Machine: ${m['cpu']}, ${m['memory']}, Node ${m['node']}; backend ${DATABASE_URL ? 'PostgreSQL' : 'PGlite'}; ` +
      `${SECONDS} s per phase; load average at start ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
  )
  try {
    await run('default failed-authentication limit (20, then 20/min per address)', dbEnv, log)
    await run(
      'failed-authentication limit lifted (early refusals only)',
      { ...dbEnv, KURUS_AUTH_FAILURE_BURST: '10000000', KURUS_AUTH_FAILURE_PER_MINUTE: '10000000' },
      log,
    )
  } finally {
    await dropDb?.()
  }
}

const [mode, floodPort, floodPublicKey, floodSecretKey] = process.argv.slice(2)
if (mode === '--flood') {
  await floodChild(Number(floodPort), {
    publicKey: floodPublicKey ?? '',
    secretKey: floodSecretKey ?? '',
  })
} else {
  await main()
}
