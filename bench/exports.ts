// Benchmark of statement exports: time and peak memory (process RSS, sampled every 20 ms) of
// building a 100,000-row CSV and PDF export on PostgreSQL, and of streaming each file back.
// It makes a scratch database, migrates it, seeds synthetic payments with SQL (the merchant
// under test plus as many rows of other merchants), runs the export job's code in this
// process, appends the results to bench/RESULTS.md under "Exports", and drops the database.
// Usage: npx node bench/exports.ts
// Knobs: BENCH_DATABASE_URL (an admin URL; default postgres://postgres@127.0.0.1:5432/test),
// BENCH_ROWS (default 100000), BENCH_EXPLAIN=1 (also print the EXPLAIN plans of the list
// queries over the seeded rows, as in docs/transactions.md), BENCH_NO_APPEND=1.
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
}

async function measure<T>(fn: () => Promise<T>): Promise<{ value: T; ms: number; peak: number }> {
  let peak = process.memoryUsage().rss
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss)
  }, 20)
  const started = performance.now()
  try {
    const value = await fn()
    return {
      value,
      ms: performance.now() - started,
      peak: Math.max(peak, process.memoryUsage().rss),
    }
  } finally {
    clearInterval(timer)
  }
}

const mb = (bytes: number) => Math.round(bytes / 2 ** 20)

async function runExport(deps: Deps, merchantId: string, format: 'csv' | 'pdf'): Promise<Measured> {
  globalThis.gc?.()
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
      'status=captured + storeId + amountMin',
      { merchantId, status: 'captured', storeId, amountMin: 4_000_000 },
      false,
    ],
  ]
  const out: string[] = []
  for (const [title, filter, keyset] of cases) {
    captured = undefined
    await searchPayments(
      { ...deps, db: recording },
      filter,
      keyset ? deep?.position : undefined,
      21,
    )
    if (!captured) throw new Error('no query captured')
    const { sql: text, parameters } = captured
    const plan = await pool.query<{ 'QUERY PLAN': string }>(
      `explain (analyze, buffers, costs off) ${text}`,
      parameters as unknown[],
    )
    out.push(
      `#### ${title}\n\n\`\`\`\n${plan.rows.map((r) => r['QUERY PLAN']).join('\n')}\n\`\`\`\n`,
    )
  }
  const sample = captured as { sql: string } | undefined
  await recording.destroy()
  return `### SQL (last case)\n\n\`\`\`sql\n${sample?.sql ?? ''}\n\`\`\`\n\n${out.join('\n')}`
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

async function main(): Promise<void> {
  const load = loadavg()[0]?.toFixed(1) ?? '?'
  await admin(`create database ${SCRATCH}`)
  const handle = await connectDatabase<Database>({ databaseUrl: urlFor(SCRATCH), poolSize: 4 })
  const log = createLogger('warn')
  const jobs = new JobQueue(handle.raw, log)
  try {
    await migrateToLatest(handle.db as Kysely<unknown>)
    const config = loadConfig(
      { KURUS_ENV: 'demo', KURUS_DATA_DIR: '/nonexistent-bench-dir', LOG_LEVEL: 'warn' },
      { masterKey: Buffer.alloc(32, 3), operatorToken: 'bench' },
    )
    const deps: Deps = { db: handle.db, clock: systemClock, config, log, jobs }
    // The build job is run directly below; the queue only has to accept the enqueue.
    jobs.define({ name: 'transactions.build_export', handler: async () => undefined })
    await jobs.start()
    const merchant = await createMerchant(deps, { name: 'Kuruş Bench Mağazası A.Ş.' })
    const neighbour = await createMerchant(deps, { name: 'Komşu Mağaza' })
    const seedStarted = performance.now()
    await seedPayments(
      handle.db,
      merchant.merchantId,
      [merchant.storeId, 'sto_bench2', 'sto_bench3'],
      ROWS,
      0,
    )
    await seedPayments(handle.db, neighbour.merchantId, [neighbour.storeId], ROWS, ROWS)
    process.stderr.write(
      `seeded ${2 * ROWS} payments in ${Math.round(performance.now() - seedStarted)} ms\n`,
    )

    if (process.env['BENCH_EXPLAIN'] === '1') {
      process.stdout.write(await explainLists(deps, merchant.merchantId, 'sto_bench2'))
    }
    const results: Measured[] = []
    for (const format of ['csv', 'pdf'] as const) {
      const r = await runExport(deps, merchant.merchantId, format)
      process.stderr.write(`${JSON.stringify(r)}\n`)
      results.push(r)
    }
    const table = [
      '| format | rows | build s | rows/s | file MiB | chunks | download s | RSS before MiB | RSS peak MiB |',
      '| ------ | ---: | ------: | -----: | -------: | -----: | ---------: | -------------: | -----------: |',
      ...results.map(
        (r) =>
          `| ${r.format.toUpperCase()} | ${r.rows} | ${(r.buildMs / 1000).toFixed(1)} | ` +
          `${Math.round(r.rows / (r.buildMs / 1000))} | ${(r.bytes / 2 ** 20).toFixed(1)} | ${r.chunks} | ` +
          `${(r.downloadMs / 1000).toFixed(1)} | ${r.rssBeforeMb} | ${r.rssPeakMb} |`,
      ),
    ].join('\n')
    const block =
      `\n## Exports: ${ROWS.toLocaleString('en')}-row statement files — ${new Date().toISOString().slice(0, 10)}\n\n` +
      'Numbers from `npx node bench/exports.ts` (PostgreSQL, scratch database created and dropped ' +
      "by the script). The export job's code runs in the bench process: keyset batches of 1000 " +
      'rows from payments (with the refund count), rendered by csv-stringify or pdfkit, stored as ' +
      '512 KiB chunks; then the file is streamed back chunk by chunk as the download does. RSS ' +
      'is the whole process (Node, pdfkit, fonts, pg pool), sampled every 20 ms.\n\n' +
      `Machine: ${machine()}; ${2 * ROWS} payments in the table (half of them another ` +
      `merchant's); load average before the run ${load}.\n\n${table}\n`
    process.stdout.write(block)
    if (process.env['BENCH_NO_APPEND'] !== '1' && existsSync(RESULTS))
      appendFileSync(RESULTS, block)
  } finally {
    await jobs.stop()
    await handle.close()
    await admin(`drop database if exists ${SCRATCH} with (force)`)
  }
}

await main()
