// Benchmark of statement exports: time and peak memory (process RSS, sampled every 20 ms) of
// building a 100,000-row CSV and PDF export on PostgreSQL, and of streaming each file back.
// It makes a scratch database, migrates it, seeds synthetic payments with SQL (the merchant
// under test plus as many rows of other merchants), runs the export job's code in this
// process, appends the results to bench/RESULTS.md under "Exports", and drops the database.
// Usage: npx node bench/exports.ts
// Knobs: BENCH_DATABASE_URL (an admin URL; default postgres://postgres@127.0.0.1:5432/test),
// BENCH_ROWS (default 100000), BENCH_EXPLAIN=1 (also print the EXPLAIN plans of the list
// queries over the seeded rows, as in docs/transactions.md), BENCH_NO_APPEND=1.
import { sandboxBank } from '../src/modules/acquirer/index.ts'
import { execFileSync } from 'node:child_process'
import { appendFileSync, existsSync } from 'node:fs'
import { cpus, loadavg, totalmem } from 'node:os'
import { fileURLToPath } from 'node:url'
import { Kysely, PostgresDialect, sql } from 'kysely'
import pg from 'pg'
import { loadConfig } from '../src/config.ts'
import type { Database, Deps } from '../src/database.ts'
import { systemClock } from '../src/platform/clock.ts'
import { connectDatabase } from '../src/platform/db/connect.ts'
import { migrateToLatest } from '../src/platform/db/migrate.ts'
import { JobQueue } from '../src/platform/jobs/queue.ts'
import { createLogger } from '../src/platform/logger.ts'
import { createMerchant } from '../src/modules/merchants/index.ts'
import { searchPayments, type PaymentSearchFilter } from '../src/modules/payments/index.ts'
import {
  buildExport,
  createExport,
  getExport,
  openExportDownload,
} from '../src/modules/transactions/exports.service.ts'

const ADMIN_URL = process.env['BENCH_DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test'
const ROWS = Number(process.env['BENCH_ROWS'] ?? 100_000)
const SCRATCH = `kurus_bench_exports_${process.pid}`
const RESULTS = fileURLToPath(new URL('./RESULTS.md', import.meta.url))

function urlFor(database: string): string {
  const url = new URL(ADMIN_URL)
  url.pathname = `/${database}`
  return url.toString()
}

async function admin(statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: ADMIN_URL })
  await client.connect()
  try {
    await client.query(statement)
  } finally {
    await client.end()
  }
}

/**
 * `rows` payments of `merchantId` over the last 365 days (a few share a second), 5 % with a
 * Turkish order id, 2 % QR, a spread of statuses, 20 % with one of 5,000 customers, and a
 * refund record on 5 % of them. Deterministic: row i always gets the same values.
 */
async function seedPayments(
  db: Kysely<Database>,
  merchantId: string,
  storeIds: string[],
  rows: number,
  offset: number,
): Promise<void> {
  const stores = sql.raw(`array[${storeIds.map((s) => `'${s}'`).join(',')}]`)
  await sql`
    insert into payments (id, merchant_id, store_id, transaction_id, method, status, amount,
      currency, commission, installment_count, card_mask, card_brand, card_type, bin,
      three_d_secure, capture_requested, customer_id, shares, metadata, fingerprint,
      refund_reserved_minor, refund_completed_minor, created_at, authorized_at, completed_at,
      updated_at)
    select 'pay_b' || lpad(to_hex(${offset}::int + i), 23, '0'),
      ${merchantId},
      (${stores})[1 + i % ${storeIds.length}],
      case when i % 20 = 0 then 'sipariş-ğüşıöç-' || i else 'ord-' || i end,
      case when i % 50 = 7 then 'qr' else 'card' end,
      case when i % 100 < 85 then 'captured' when i % 100 < 90 then 'failed'
        when i % 100 < 94 then 'refunded' when i % 100 < 97 then 'authorized' else 'voided' end,
      a.amount, 'TRY', a.amount * 249 / 10000 + 25, 1 + i % 3, '415565******6111', 'visa',
      'credit', '415565', false, true,
      case when i % 5 = 0 then 'cus_b' || lpad(to_hex(i % 5000), 23, '0') end,
      '[]', '{}', 'bench',
      case when i % 100 between 90 and 93 then a.amount else 0 end,
      case when i % 100 between 90 and 93 then a.amount else 0 end,
      t.at, t.at, t.at, t.at
    from generate_series(1, ${rows}::int) as i,
      lateral (select 100 + (i::bigint * 7919) % 5000000 as amount) as a,
      lateral (select now() - ((i * 313) % 31536000) * interval '1 second' as at) as t`.execute(db)
  await sql`
    insert into refunds (id, merchant_id, payment_id, amount, commission_refund, status,
      reason, created_at, completed_at, updated_at)
    select 'rfn_b' || substr(p.id, 6), p.merchant_id, p.id, p.amount, 0, 'completed',
      'iade talebi', p.created_at, p.created_at, p.created_at
    from payments p
    where p.merchant_id = ${merchantId} and p.status = 'refunded'`.execute(db)
  await sql`analyze payments`.execute(db)
  await sql`analyze refunds`.execute(db)
}

interface Measured {
  format: string
  rows: number
  buildMs: number
  downloadMs: number
  bytes: number
  chunks: number
  rssBeforeMb: number
  rssPeakMb: number
  heapPeakMb: number
}

async function measure<T>(
  fn: () => Promise<T>,
): Promise<{ value: T; ms: number; peak: number; heapPeak: number }> {
  let peak = 0
  let heapPeak = 0
  const sample = () => {
    const m = process.memoryUsage()
    peak = Math.max(peak, m.rss)
    heapPeak = Math.max(heapPeak, m.heapUsed + m.external)
  }
  sample()
  const timer = setInterval(sample, 20)
  const started = performance.now()
  try {
    const value = await fn()
    sample()
    return { value, ms: performance.now() - started, peak, heapPeak }
  } finally {
    clearInterval(timer)
  }
}

const mb = (bytes: number) => Math.round(bytes / 2 ** 20)

async function runExport(deps: Deps, merchantId: string, format: 'csv' | 'pdf'): Promise<Measured> {
  const rssBefore = process.memoryUsage().rss
  const created = await createExport(deps, merchantId, { format })
  const build = await measure(() => buildExport(deps, created.id))
  const done = await getExport(deps, merchantId, created.id)
  if (done.status !== 'ready') throw new Error(`${format} export ended ${done.status}`)
  const download = await measure(async () => {
    const file = await openExportDownload(deps, merchantId, created.id)
    let bytes = 0
    let chunks = 0
    for await (const chunk of file.chunks) {
      bytes += chunk.length
      chunks++
    }
    return { bytes, chunks }
  })
  return {
    format,
    rows: done.rowCount,
    buildMs: Math.round(build.ms),
    downloadMs: Math.round(download.ms),
    bytes: download.value.bytes,
    chunks: download.value.chunks,
    rssBeforeMb: mb(rssBefore),
    rssPeakMb: mb(Math.max(build.peak, download.peak)),
    heapPeakMb: mb(Math.max(build.heapPeak, download.heapPeak)),
  }
}

/** EXPLAIN (ANALYZE, BUFFERS) of the list query, exactly as the repository builds it. */
async function explainLists(deps: Deps, merchantId: string, storeId: string): Promise<string> {
  const pool = new pg.Pool({ connectionString: urlFor(SCRATCH), max: 1 })
  let captured: { sql: string; parameters: readonly unknown[] } | undefined
  // The same query, run once through a Kysely that records it, then explained with its
  // parameters: the plan is the one the API gets, not a hand-written look-alike.
  const recording = new Kysely<Database>({
    dialect: new PostgresDialect({ pool }),
    log: (event) => {
      if (event.level === 'query') captured = event.query
    },
  })
  // A function, so TypeScript does not narrow the variable the logger callback assigns.
  const lastCaptured = () => captured
  const deep = (await searchPayments(deps, { merchantId }, undefined, 1000)).at(-1)
  const customer = `cus_b${'0'.repeat(22)}5`
  const day = 86_400_000
  const cases: [string, PaymentSearchFilter, boolean][] = [
    ['first page, no filter', { merchantId }, false],
    ['a later page (keyset after row 1000)', { merchantId }, true],
    ['status=failed', { merchantId, status: 'failed' }, false],
    ['storeId', { merchantId, storeId }, false],
    ['customerId', { merchantId, customerId: customer }, false],
    ['method=qr', { merchantId, method: 'qr' }, false],
    [
      'from/to (one month, 30 to 60 days ago)',
      { merchantId, from: new Date(Date.now() - 60 * day), to: new Date(Date.now() - 30 * day) },
      false,
    ],
    ['amountMin/amountMax', { merchantId, amountMin: 1_000_000, amountMax: 1_100_000 }, false],
    [
      'an amount range that matches nothing (once a walk of the whole merchant)',
      { merchantId, amountMin: 9_000_000_000 },
      false,
    ],
    [
      'status=captured + storeId + amountMin',
      { merchantId, status: 'captured', storeId, amountMin: 4_000_000 },
      false,
    ],
  ]
  const out: string[] = []
  let lastSql = ''
  for (const [title, filter, keyset] of cases) {
    captured = undefined
    await searchPayments(
      { ...deps, db: recording },
      filter,
      keyset ? deep?.position : undefined,
      21,
    )
    const query = lastCaptured()
    if (!query) throw new Error('no query captured')
    const { sql: text, parameters } = query
    lastSql = text
    const plan = await pool.query<{ 'QUERY PLAN': string }>(
      `explain (analyze, buffers, costs off) ${text}`,
      parameters as unknown[],
    )
    out.push(
      `#### ${title}\n\n\`\`\`\n${plan.rows.map((r) => r['QUERY PLAN']).join('\n')}\n\`\`\`\n`,
    )
  }
  await recording.destroy()
  return `### SQL (last case)\n\n\`\`\`sql\n${lastSql}\n\`\`\`\n\n${out.join('\n')}`
}

/** A Markdown table laid out as Prettier would (first column left, numbers right). */
function markdownTable(head: string[], rows: string[][]): string {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)))
  const line = (cells: string[]) =>
    `| ${cells.map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join(' | ')} |`
  const rule = `| ${widths.map((w, i) => (i === 0 ? '-'.repeat(w) : `${'-'.repeat(w - 1)}:`)).join(' | ')} |`
  return [line(head), rule, ...rows.map(line)].join('\n')
}

function machine(): string {
  const psql = (() => {
    try {
      return execFileSync('psql', ['--version'], { encoding: 'utf8' }).trim()
    } catch {
      return 'psql unknown'
    }
  })()
  return (
    `${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}, ${Math.round(totalmem() / 2 ** 30)} GiB RAM, ` +
    `Node ${process.version}, ${psql.replace(/^psql \(PostgreSQL\) /, 'PostgreSQL ')} on the same machine`
  )
}

async function openDeps(database: string): Promise<{ deps: Deps; close(): Promise<void> }> {
  const handle = await connectDatabase<Database>({ databaseUrl: urlFor(database), poolSize: 4 })
  // stderr: a child's stdout carries only its JSON result.
  const log = createLogger('warn', process.stderr)
  const jobs = new JobQueue(handle.raw, log)
  const config = loadConfig(
    { KURUS_ENV: 'demo', KURUS_DATA_DIR: '/nonexistent-bench-dir', LOG_LEVEL: 'warn' },
    { masterKey: Buffer.alloc(32, 3), operatorToken: 'bench' },
  )
  // The build job is run directly; the queue only has to accept the enqueue.
  jobs.define({ name: 'transactions.build_export', handler: async () => undefined })
  return {
    deps: {
      db: handle.db,
      readDb: handle.db,
      clock: systemClock,
      config,
      log,
      jobs,
      acquirer: sandboxBank,
    },
    close: async () => {
      await jobs.stop()
      await handle.close()
    },
  }
}

/** One export in a process of its own, so its memory is measured from a clean start. */
async function child(database: string, merchantId: string, format: 'csv' | 'pdf'): Promise<void> {
  const { deps, close } = await openDeps(database)
  try {
    await deps.jobs.start()
    process.stdout.write(JSON.stringify(await runExport(deps, merchantId, format)))
  } finally {
    await close()
  }
}

function runChild(merchantId: string, format: 'csv' | 'pdf'): Measured {
  const out = execFileSync(
    process.execPath,
    [fileURLToPath(import.meta.url), 'child', SCRATCH, merchantId, format],
    { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 1 << 20 },
  )
  return JSON.parse(out) as Measured
}

async function main(): Promise<void> {
  const load = loadavg()[0]?.toFixed(1) ?? '?'
  await admin(`create database ${SCRATCH}`)
  let opened: Awaited<ReturnType<typeof openDeps>> | undefined
  try {
    opened = await openDeps(SCRATCH)
    const { deps } = opened
    await migrateToLatest(deps.db as Kysely<unknown>)
    await deps.jobs.start()
    const merchant = await createMerchant(deps, { name: 'Kuruş Bench Mağazası A.Ş.' })
    const neighbour = await createMerchant(deps, { name: 'Komşu Mağaza' })
    const seedStarted = performance.now()
    const stores = [merchant.storeId, 'sto_bench2', 'sto_bench3']
    await seedPayments(deps.db, merchant.merchantId, stores, ROWS, 0)
    await seedPayments(deps.db, neighbour.merchantId, [neighbour.storeId], ROWS, ROWS)
    process.stderr.write(
      `seeded ${2 * ROWS} payments in ${Math.round(performance.now() - seedStarted)} ms\n`,
    )
    if (process.env['BENCH_EXPLAIN'] === '1') {
      process.stdout.write(await explainLists(deps, merchant.merchantId, 'sto_bench2'))
    }
    const results: Measured[] = []
    for (const format of ['csv', 'pdf'] as const) {
      const r = runChild(merchant.merchantId, format)
      process.stderr.write(`${JSON.stringify(r)}\n`)
      results.push(r)
    }
    const table = markdownTable(
      [
        'format',
        'rows',
        'build s',
        'rows/s',
        'file MiB',
        'chunks',
        'download s',
        'RSS at start MiB',
        'RSS peak MiB',
        'JS heap + external peak MiB',
      ],
      results.map((r) => [
        r.format.toUpperCase(),
        String(r.rows),
        (r.buildMs / 1000).toFixed(1),
        String(Math.round(r.rows / (r.buildMs / 1000))),
        (r.bytes / 2 ** 20).toFixed(1),
        String(r.chunks),
        (r.downloadMs / 1000).toFixed(1),
        String(r.rssBeforeMb),
        String(r.rssPeakMb),
        String(r.heapPeakMb),
      ]),
    )
    const block =
      `\n## Exports: ${ROWS.toLocaleString('en')}-row statement files — ${new Date().toISOString().slice(0, 10)}\n\n` +
      'Numbers from `npx node bench/exports.ts` (PostgreSQL; the script creates and drops a ' +
      "scratch database). Each format runs in a fresh process that executes the export job's " +
      'code: keyset batches of 1000 payments (with their refund counts), rendered by ' +
      'csv-stringify or pdfkit, stored as 512 KiB chunks; then the file is streamed back chunk ' +
      'by chunk as the download route does. RSS is the whole process (Node, pdfkit and its ' +
      'fonts, the pg pool), sampled every 20 ms; "at start" is after loading the code. The last ' +
      "column is V8's heapUsed + external at the same samples: garbage not yet collected " +
      'included, so it is an upper bound of what the export holds.\n\n' +
      `Machine: ${machine()}; ${2 * ROWS} payments in the table (half of them another ` +
      `merchant's); load average before the run ${load} (the machine is shared: expect the ` +
      'times to vary by 2× or more between runs).\n\n' +
      `${table}\n`
    process.stdout.write(block)
    if (process.env['BENCH_NO_APPEND'] !== '1' && existsSync(RESULTS))
      appendFileSync(RESULTS, block)
  } finally {
    await opened?.close()
    await admin(`drop database if exists ${SCRATCH} with (force)`)
  }
}

if (process.argv[2] === 'child') {
  const [, , , database = '', merchantId = '', format = 'csv'] = process.argv
  await child(database, merchantId, format === 'pdf' ? 'pdf' : 'csv')
} else {
  await main()
}
