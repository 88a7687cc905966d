// `npx node bench/profile.ts`: what one request of each kind costs, counted rather than timed,
// so the figures hold on a noisy shared machine (issue 29's table in docs/performance.md).
// Starts the real API (`serve --no-worker`) over a scratch PostgreSQL database with
// bench/count-queries.ts preloaded, then sends each kind of request one after another and reads,
// per request: the statements the API sent (each a round trip with node-postgres), the
// transactions, the commits (explicit, and single writes outside a transaction, of which
// asynchronous ones are counted apart), the API process's CPU time (/proc, user + system), and
// the WAL the server wrote and the CPU its processes used (both server-wide: run it on an
// otherwise idle server, on this machine). The last row is the bench's charge-like SQL
// baseline transaction (bench/lib.ts) sent by this process itself, its CPU in the API column:
// what a charge costs each side, next to what the yardstick costs.
// Knobs: BENCH_DATABASE_URL (default the local test DB's server), PROFILE_REQUESTS (default 300),
// BENCH_REDIS_URL (default redis://127.0.0.1:6379; `none` for the PostgreSQL rate limiter),
// PROFILE_ONLY (a regex: which request kinds), BENCH_NODE_ARGS (extra node flags for the server, e.g. --cpu-prof --cpu-prof-dir=/tmp/prof),
// LOG_LEVEL (the server's, default info; the bench runs at warn), PROFILE_KEEP_DB=1 (keep the
// scratch database afterwards, e.g. to read pg_stat_user_tables).
import { randomUUID } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as delay } from 'node:timers/promises'
import pg from 'pg'
import {
  OPERATOR_TOKEN,
  freePort,
  machine,
  openSessions,
  provision,
  signHeaders,
  signed,
  startProcess,
  stop,
  waitReady,
  type Keys,
  cpuMs,
  baselineTransaction,
  createBaselineTables,
  postgresCpu,
  postgresCpuSince,
  imageNodeArgs,
  scratchDatabase,
} from './lib.ts'

const BASE_URL = process.env['BENCH_DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test'
const REQUESTS = Number(process.env['PROFILE_REQUESTS'] ?? 300)
const REDIS_URL = process.env['BENCH_REDIS_URL'] ?? 'redis://127.0.0.1:6379'
const NODE_ARGS = (process.env['BENCH_NODE_ARGS'] ?? '').split(' ').filter(Boolean)

interface Counts {
  statements: number
  begins: number
  commits: number
  autocommitWrites: number
  asyncCommits: number
}

async function main(): Promise<void> {
  const db = await scratchDatabase(BASE_URL, 'kurus_profile')
  const { admin } = db
  const port = await freePort()
  const base = `http://127.0.0.1:${port}`
  const work = mkdtempSync(join(tmpdir(), 'kurus-profile-'))
  const countFile = join(work, 'counts.json')
  const redis =
    REDIS_URL === 'none' ? {} : { REDIS_URL, REDIS_KEY_PREFIX: `profile:${process.pid}:` }
  const server = startProcess(
    [
      ...imageNodeArgs(),
      ...NODE_ARGS,
      '--import',
      './bench/count-queries.ts',
      'src/main.ts',
      'serve',
      '--no-worker',
    ],
    {
      DATABASE_URL: db.url,
      KURUS_ENV: 'demo',
      KURUS_MASTER_KEY: 'c'.repeat(64),
      KURUS_OPERATOR_TOKEN: OPERATOR_TOKEN,
      KURUS_DATA_DIR: work,
      KURUS_QUERY_COUNT_FILE: countFile,
      LOG_LEVEL: process.env['LOG_LEVEL'] ?? 'info',
      KURUS_RATE_LIMIT_RPS: '1000000',
      KURUS_RATE_LIMIT_BURST: '1000000',
      PORT: String(port),
      NODE_ENV: 'production',
      ...redis,
    },
  )
  const pid = server.pid as number
  // WAL written by the whole server: meaningful when nothing else writes meanwhile.
  const walLsn = async () =>
    Number(
      (await admin.query<{ b: string }>(`select pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0') as b`))
        .rows[0]?.b,
    )
  const counts = async (): Promise<Counts> => {
    rmSync(countFile, { force: true })
    process.kill(pid, 'SIGUSR2')
    for (let i = 0; i < 100; i++) {
      try {
        return JSON.parse(readFileSync(countFile, 'utf8')) as Counts
      } catch {
        await delay(10)
      }
    }
    throw new Error('no counts from the server')
  }
  const rows: string[] = []
  const sqlClient = new pg.Client({ connectionString: db.url })
  await sqlClient.connect()
  await createBaselineTables(sqlClient)
  // The baseline's statements go from here, not through the server's counter.
  let baselineStatements = 0
  const query = sqlClient.query.bind(sqlClient) as (...args: unknown[]) => unknown
  ;(sqlClient as unknown as { query: typeof query }).query = (...args) => {
    baselineStatements++
    return query(...args)
  }
  try {
    await waitReady(`${base}/readyz`)
    const [keys] = (await provision(base, 1)) as [Keys]
    const send = async (method: string, path: string, body?: unknown, idempotent = false) => {
      const text = body === undefined ? '' : JSON.stringify(body)
      const res = await fetch(base + path, {
        method,
        headers: {
          // The signature covers the path without its query string.
          ...signHeaders(keys, method, path.split('?')[0] ?? path, text),
          ...(text ? { 'content-type': 'application/json' } : {}),
          ...(idempotent ? { 'idempotency-key': randomUUID() } : {}),
        },
        ...(text ? { body: text } : {}),
      })
      await res.arrayBuffer()
      if (!res.ok) throw new Error(`${method} ${path}: ${res.status}`)
    }
    const only = new RegExp(process.env['PROFILE_ONLY'] ?? '.')
    const charging = only.test('POST /v1/payments/card (frictionless)')
    const tickets = await openSessions(base, [keys], charging ? REQUESTS + 21 : 1)
    const charge = (i: number) =>
      send(
        'POST',
        '/v1/payments/card',
        {
          transactionId: tickets[i]?.transactionId,
          amount: 10_000,
          currency: 'TRY',
          cardToken: keys.cardToken,
        },
        true,
      )
    const payment = await signed<{ paymentId: string }>(base, keys, 'POST', '/v1/payments/card', {
      transactionId: tickets[0]?.transactionId,
      amount: 10_000,
      currency: 'TRY',
      cardToken: keys.cardToken,
    })
    let next = 1
    const kinds: [string, (i: number) => Promise<void>][] = [
      ['GET /v1/auth/whoami', () => send('GET', '/v1/auth/whoami')],
      ['GET /v1/payments/{id}', () => send('GET', `/v1/payments/${payment.paymentId}`)],
      ['GET /v1/transactions (20)', () => send('GET', '/v1/transactions?limit=20')],
      [
        'POST /v1/payments/sessions',
        () =>
          send(
            'POST',
            '/v1/payments/sessions',
            {
              transactionId: `profile-${randomUUID()}`,
              amount: 10_000,
              currency: 'TRY',
              returnUrl: 'https://shop.example/return',
            },
            true,
          ),
      ],
      ['POST /v1/payments/card (frictionless)', () => charge(next++)],
      ['SQL baseline transaction (client CPU)', () => baselineTransaction(sqlClient)],
    ]
    const header =
      '| request | statements | transactions | commits (sync) | async commits | API CPU µs | DB CPU µs | WAL bytes |'
    rows.push(header, '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |')
    process.stdout.write(`machine ${JSON.stringify(machine())}\n${header}\n`)
    for (const [name, run] of kinds.filter(([name]) => only.test(name))) {
      for (let i = 0; i < 20; i++) await run(i) // warm: JIT, caches, pool connections
      const baseline = name.startsWith('SQL baseline')
      // The baseline's client is this process (it counts no statements through the server).
      const apiCpu = () => (baseline ? cpuMs(process.pid) : cpuMs(pid))
      const before = await counts()
      const wal0 = await walLsn()
      const cpu0 = apiCpu()
      const db0 = postgresCpu()
      for (let i = 0; i < REQUESTS; i++) await run(i)
      const db1 = postgresCpuSince(db0)
      const cpu1 = apiCpu()
      const wal1 = await walLsn()
      const after = await counts()
      const per = (k: keyof Counts) => ((after[k] - before[k]) / REQUESTS).toFixed(1)
      const syncCommits = (
        (after.commits -
          before.commits +
          (after.autocommitWrites - before.autocommitWrites) -
          (after.asyncCommits - before.asyncCommits)) /
        REQUESTS
      ).toFixed(1)
      const us = (ms: number) => Math.round((ms * 1000) / REQUESTS)
      const cells = baseline
        ? [(baselineStatements / (REQUESTS + 20)).toFixed(1), '1.0', '1.0', '0.0']
        : [per('statements'), per('begins'), syncCommits, per('asyncCommits')]
      const row = `| ${name} | ${cells.join(' | ')} | ${us(cpu1 - cpu0)} | ${us(db1)} | ${Math.round((wal1 - wal0) / REQUESTS)} |`
      rows.push(row)
      process.stdout.write(row + '\n')
    }
  } finally {
    await sqlClient.end()
    await stop(server)
    await db.close({ keep: process.env['PROFILE_KEEP_DB'] === '1' })
    rmSync(work, { recursive: true, force: true })
  }
}

await main()
