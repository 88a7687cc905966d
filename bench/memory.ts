// `npx node bench/memory.ts`: the API process's resident memory (issue 43: under 250 MB on
// PostgreSQL) at idle and under the bench's kinds of load, in a minute rather than the full
// bench's quarter hour, so that V8 flags and lazy loading can be compared A/B.
// Starts `serve --no-worker` over a scratch PostgreSQL database, samples /proc VmRSS every
// 250 ms, and runs: signed card charges (16 connections), signed GET /v1/payments/{id}
// (32 connections), and a burst of charges from 256 connections (the overload phase's shape).
// Prints RSS idle, the peak of each phase, RSS after the load, and the API's CPU per request.
// Knobs: BENCH_DATABASE_URL (default the local test DB's server), BENCH_NODE_ARGS (node flags
// for the server, e.g. "--max-semi-space-size=64" to try another size), MEMORY_CHARGES
// (default 3000), MEMORY_SECONDS (the GET phase, default 10), BENCH_REDIS_URL as bench/run.ts.
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as delay } from 'node:timers/promises'
import {
  OPERATOR_TOKEN,
  autocannon,
  freePort,
  machine,
  openSessions,
  provision,
  startProcess,
  stop,
  waitReady,
  chargeRequest,
  cpuMs,
  paymentReadRequest,
  imageNodeArgs,
  scratchDatabase,
  paymentsToRead,
} from './lib.ts'

const BASE_URL = process.env['BENCH_DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test'
const NODE_ARGS = (process.env['BENCH_NODE_ARGS'] ?? '').split(' ').filter(Boolean)
const CHARGES = Number(process.env['MEMORY_CHARGES'] ?? 3000)
const SECONDS = Number(process.env['MEMORY_SECONDS'] ?? 10)
const REDIS_URL = process.env['BENCH_REDIS_URL'] ?? 'redis://127.0.0.1:6379'

function rssMiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  return m ? Number(m[1]) / 1024 : 0
}

async function main(): Promise<void> {
  const db = await scratchDatabase(BASE_URL, 'kurus_memory')
  const port = await freePort()
  const base = `http://127.0.0.1:${port}`
  const server = startProcess(
    [...imageNodeArgs(), ...NODE_ARGS, 'src/main.ts', 'serve', '--no-worker'],
    {
      DATABASE_URL: db.url,
      KURUS_ENV: 'demo',
      KURUS_MASTER_KEY: 'c'.repeat(64),
      KURUS_OPERATOR_TOKEN: OPERATOR_TOKEN,
      KURUS_DATA_DIR: mkdtempSync(join(tmpdir(), 'kurus-memory-')),
      LOG_LEVEL: 'warn',
      KURUS_RATE_LIMIT_RPS: '1000000',
      KURUS_RATE_LIMIT_BURST: '1000000',
      KURUS_INFLIGHT_MAX: '64',
      PORT: String(port),
      NODE_ENV: 'production',
      ...(REDIS_URL === 'none' ? {} : { REDIS_URL, REDIS_KEY_PREFIX: `memory:${process.pid}:` }),
    },
  )
  const pid = server.pid as number
  let peak = 0 // of the current phase
  let overall = 0 // of the whole run, provisioning included
  const timer = setInterval(() => {
    try {
      const rss = rssMiB(pid)
      peak = Math.max(peak, rss)
      overall = Math.max(overall, rss)
    } catch {
      // exited
    }
  }, 250)
  const out: string[] = []
  /** Runs one load; `run` answers how many requests it sent. */
  const phase = async (name: string, run: () => Promise<number>) => {
    peak = rssMiB(pid)
    const cpu0 = cpuMs(pid)
    const requests = await run()
    const cpu = cpuMs(pid) - cpu0
    out.push(
      `${name.padEnd(28)} peak ${peak.toFixed(0)} MiB  API CPU ${((cpu * 1000) / Math.max(1, requests)).toFixed(0)} µs/request (${requests})`,
    )
  }
  try {
    await waitReady(`${base}/readyz`)
    await delay(3000)
    const idle = rssMiB(pid)
    out.push(`idle after start             ${idle.toFixed(0)} MiB`)
    const merchants = await provision(base, 20)
    const tickets = await openSessions(base, merchants, CHARGES)
    await phase('charges, 16 connections', async () => {
      const r = await autocannon({
        url: base,
        connections: 16,
        amount: tickets.length,
        timeout: 10,
        requests: [chargeRequest(tickets)],
      })
      if (r.non2xx > 0) out.push(`  (non2xx ${r.non2xx})`)
      return r.requests.total
    })
    const ids = await paymentsToRead(base, merchants)
    await phase('GET payment, 32 connections', async () => {
      const r = await autocannon({
        url: base,
        connections: 32,
        duration: SECONDS,
        requests: [paymentReadRequest(ids)],
      })
      return r.requests.total
    })
    const burst = await openSessions(base, merchants, Math.ceil(CHARGES / 2))
    await phase('charges, 256 connections', async () => {
      const r = await autocannon({
        url: base,
        connections: 256,
        amount: burst.length,
        timeout: 10,
        requests: [chargeRequest(burst)],
      })
      return r.requests.total
    })
    await delay(5000)
    out.push(`after the load (5 s idle)    ${rssMiB(pid).toFixed(0)} MiB`)
    out.push(`peak through the run         ${overall.toFixed(0)} MiB`)
    out.push(`node args: ${NODE_ARGS.join(' ') || '(none)'}; ${JSON.stringify(machine())}`)
    process.stdout.write(out.join('\n') + '\n')
  } finally {
    clearInterval(timer)
    await stop(server)
    await db.close()
  }
}

await main()
