// Benchmark of the balance summary (issue 27; docs/reports.md): time and peak memory of
// building a `balance_summary` report over a merchant with 1,000,000 ledger legs, on
// PostgreSQL. It makes a scratch database, migrates it, seeds a year of captures and their
// settlements with SQL (3 legs per capture, 2 per settlement: 200,250 of each by default, just
// over a million legs), plus as many legs of a neighbour merchant, then, in a fresh process,
// builds the report with the export job's own code (keyset batches of 1000 balance
// transactions, csv into 512 KiB chunks) and appends the results to bench/RESULTS.md under "Balance summary". Drops the database.
// Usage: npx node bench/balance-summary.ts
// Knobs: BENCH_DATABASE_URL (an admin URL; default postgres://postgres@127.0.0.1:5432/test),
// BENCH_CAPTURES (default 200250: legs ≈ 5 × captures, less the settlements not due yet),
// BENCH_NO_APPEND=1.
import { sandboxBank } from '../src/modules/acquirer/index.ts'
import { execFileSync } from 'node:child_process'
import { appendFileSync } from 'node:fs'
import { cpus, loadavg, totalmem } from 'node:os'
import { fileURLToPath } from 'node:url'
import { sql, type Kysely } from 'kysely'
import pg from 'pg'
import { loadConfig } from '../src/config.ts'
import type { Database, Deps } from '../src/database.ts'
import { systemClock } from '../src/platform/clock.ts'
import { connectDatabase } from '../src/platform/db/connect.ts'
import { migrateToLatest } from '../src/platform/db/migrate.ts'
import { JobQueue } from '../src/platform/jobs/queue.ts'
import { createLogger } from '../src/platform/logger.ts'
import { createMerchant } from '../src/modules/merchants/index.ts'
import {
  buildExport,
  createReport,
  getReport,
  openReportDownload,
} from '../src/modules/transactions/index.ts'

const ADMIN_URL = process.env['BENCH_DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test'
const CAPTURES = Number(process.env['BENCH_CAPTURES'] ?? 200_250)
const SCRATCH = `kurus_bench_books_${process.pid}`
const RESULTS = fileURLToPath(new URL('./RESULTS.md', import.meta.url))
const YEAR_S = 365 * 86_400

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
 * `captures` captures of `merchantId` over the last 365 days (amount 100..5,000,000 kuruş,
 * commission 249 bps + 25) and their settlements a day later (those still in the future are
 * left out, as the reconciler would), with their reserve-credit rows. Written with the ledger's
 * triggers off (session_replication_role = replica): the rows are balanced by construction,
 * and checking a million legs one by one at COMMIT would measure the seeding, not the report.
 */
async function seedLedger(
  db: Kysely<Database>,
  merchantId: string,
  captures: number,
  tag: string,
): Promise<void> {
  await sql`
    insert into ledger_accounts (id, owner_type, owner_id, merchant_id, account_type, currency,
      created_at)
    select 'merchant:' || ${merchantId} || ':' || t, 'merchant', ${merchantId}, ${merchantId},
      t, 'TRY', now()
    from unnest(array['merchant_reserve', 'merchant_available']) as t
    on conflict do nothing`.execute(db)
  await sql`
    create temporary table bench_captures on commit drop as
    select i,
      'jrn_' || ${tag} || 'c' || lpad(to_hex(i), 18, '0') as capture_id,
      'jrn_' || ${tag} || 's' || lpad(to_hex(i), 18, '0') as settle_id,
      'pay_' || ${tag} || lpad(to_hex(i), 20, '0') as payment_id,
      a.amount, a.amount * 249 / 10000 + 25 as commission,
      now() - ((i::bigint * 7919) % ${YEAR_S}) * interval '1 second' as at
    from generate_series(1, ${captures}::int) as i,
      lateral (select 100 + (i::bigint * 104729) % 5000000 as amount) as a`.execute(db)
  await sql`
    insert into ledger_entries (id, merchant_id, kind, reference, payment_id, created_at)
    select capture_id, ${merchantId}, 'capture', 'capture:' || payment_id, payment_id, at
      from bench_captures
    union all
    select settle_id, ${merchantId}, 'settlement',
      'settlement:capture:' || payment_id || ':merchant:' || ${merchantId}, null,
      at + interval '1 day'
      from bench_captures where at + interval '1 day' < now()`.execute(db)
  await sql`
    insert into ledger_legs (entry_id, merchant_id, payment_id, account_id, owner_type, owner_id,
      account_type, direction, amount, currency, created_at)
    select c.capture_id, ${merchantId}, c.payment_id, l.account_id, l.owner_type, l.owner_id,
      l.account_type, l.direction, l.amount, 'TRY', c.at
    from bench_captures c, lateral (values
      ('platform:platform:buyer_pending', 'platform', 'platform', 'buyer_pending', 'DEBIT',
        c.amount),
      ('merchant:' || ${merchantId} || ':merchant_reserve', 'merchant', ${merchantId},
        'merchant_reserve', 'CREDIT', c.amount - c.commission),
      ('platform:platform:platform_commission', 'platform', 'platform', 'platform_commission',
        'CREDIT', c.commission)
    ) as l(account_id, owner_type, owner_id, account_type, direction, amount)
    union all
    select c.settle_id, ${merchantId}, null, l.account_id, 'merchant', ${merchantId},
      l.account_type, l.direction, c.amount - c.commission, 'TRY', c.at + interval '1 day'
    from bench_captures c, lateral (values
      ('merchant:' || ${merchantId} || ':merchant_reserve', 'merchant_reserve', 'DEBIT'),
      ('merchant:' || ${merchantId} || ':merchant_available', 'merchant_available', 'CREDIT')
    ) as l(account_id, account_type, direction)
    where c.at + interval '1 day' < now()`.execute(db)
  await sql`
    insert into ledger_reserve_credits (entry_id, merchant_id, owner_type, owner_id,
      source_reference, amount, credited_at, settled_at, settled_minor, settlement_entry_id)
    select capture_id, ${merchantId}, 'merchant', ${merchantId}, 'capture:' || payment_id,
      amount - commission, at,
      case when at + interval '1 day' < now() then at + interval '1 day' end,
      case when at + interval '1 day' < now() then amount - commission end,
      case when at + interval '1 day' < now() then settle_id end
    from bench_captures`.execute(db)
}

interface Measured {
  legs: number
  transactions: number
  buildMs: number
  bytes: number
  rssBeforeMb: number
  rssPeakMb: number
  heapPeakMb: number
  closing: string
  /** reserve + available summed straight from the legs: the closing balance must equal it. */
  balance: number
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

async function openDeps(database: string): Promise<{ deps: Deps; close(): Promise<void> }> {
  const handle = await connectDatabase<Database>({ databaseUrl: urlFor(database), poolSize: 4 })
  const log = createLogger('warn', process.stderr)
  const jobs = new JobQueue(handle.raw, log)
  const config = loadConfig(
    { KURUS_ENV: 'demo', KURUS_DATA_DIR: '/nonexistent-bench-dir', LOG_LEVEL: 'warn' },
    { masterKey: Buffer.alloc(32, 3), operatorToken: 'bench' },
  )
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

/** The report in a process of its own, so its memory is measured from a clean start. */
async function child(database: string, merchantId: string): Promise<void> {
  const { deps, close } = await openDeps(database)
  try {
    await deps.jobs.start()
    const rssBefore = process.memoryUsage().rss
    const now = new Date()
    const created = await createReport(deps, merchantId, {
      type: 'balance_summary',
      format: 'csv',
      from: new Date(now.getTime() - (YEAR_S + 86_400) * 1000),
      to: now,
    })
    const build = await measure(() => buildExport(deps, created.id))
    const done = await getReport(deps, merchantId, created.id)
    if (done.status !== 'ready') throw new Error(`the report ended ${done.status}`)
    const file = await openReportDownload(deps, merchantId, created.id)
    const parts: Buffer[] = []
    for await (const chunk of file.chunks) parts.push(chunk)
    const text = Buffer.concat(parts).toString('utf8')
    const closing = /closing_balance;;[^;]*;;;;(-?\d+)/.exec(text)?.[1] ?? '?'
    const counts = await sql<{ legs: number; transactions: number; balance: number }>`
      select (select count(*) from ledger_legs where merchant_id = ${merchantId})::bigint as legs,
        (select sum(case when direction = 'CREDIT' then amount else -amount end)
           from ledger_legs where merchant_id = ${merchantId} and owner_type = 'merchant'
            and account_type in ('merchant_reserve', 'merchant_available'))::bigint as balance,
        (select count(*) from ledger_entries where merchant_id = ${merchantId}
          and kind = 'capture')::bigint as transactions`.execute(deps.db)
    const result: Measured = {
      legs: counts.rows[0]?.legs ?? 0,
      transactions: counts.rows[0]?.transactions ?? 0,
      buildMs: Math.round(build.ms),
      bytes: file.byteSize,
      rssBeforeMb: mb(rssBefore),
      rssPeakMb: mb(build.peak),
      heapPeakMb: mb(build.heapPeak),
      closing,
      balance: counts.rows[0]?.balance ?? 0,
    }
    process.stdout.write(JSON.stringify(result))
  } finally {
    await close()
  }
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
  let opened: Awaited<ReturnType<typeof openDeps>> | undefined
  try {
    opened = await openDeps(SCRATCH)
    const { deps } = opened
    await migrateToLatest(deps.db as Kysely<unknown>)
    const merchant = await createMerchant(deps, { name: 'Kuruş Defter Mağazası A.Ş.' })
    const neighbour = await createMerchant(deps, { name: 'Komşu Mağaza' })
    const seeded = performance.now()
    await deps.db.connection().execute(async (conn) => {
      // The pool's statement timeout is for requests; a million-row insert takes longer.
      await sql`set statement_timeout = 0`.execute(conn)
      await sql`set session_replication_role = replica`.execute(conn)
      await conn.transaction().execute(async (tx) => {
        await seedLedger(tx, merchant.merchantId, CAPTURES, 'a')
      })
      await conn.transaction().execute(async (tx) => {
        await seedLedger(tx, neighbour.merchantId, CAPTURES, 'b')
      })
      await sql`set session_replication_role = origin`.execute(conn)
    })
    await deps.db.connection().execute(async (conn) => {
      await sql`set statement_timeout = 0`.execute(conn)
      await sql`analyze`.execute(conn)
    })
    process.stderr.write(`seeded in ${Math.round(performance.now() - seeded)} ms\n`)
    await opened.close()
    opened = undefined

    const out = execFileSync(
      process.execPath,
      [fileURLToPath(import.meta.url), 'child', SCRATCH, merchant.merchantId],
      { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 1 << 20 },
    )
    const r = JSON.parse(out) as Measured
    if (r.closing !== String(r.balance)) throw new Error(`closing ${r.closing} ≠ ${r.balance}`)
    const block = [
      '',
      `## Balance summary: one year, ${r.legs.toLocaleString('en')} ledger legs — ${new Date().toISOString().slice(0, 10)}`,
      '',
      'Numbers from `npx node bench/balance-summary.ts` (PostgreSQL; the script creates and drops a scratch database). ' +
        `The merchant has ${CAPTURES.toLocaleString('en')} captures spread over the last 365 days and their settlements a day later ` +
        '(3 + 2 legs each), a neighbour merchant as many; the report is a `balance_summary` CSV of the whole year, built in a fresh ' +
        "process by the export job's code (opening balance as one index range sum, then the year's balance transactions in keyset " +
        'batches of 1000, aggregated per type). RSS is the whole process, sampled every 20 ms; "JS heap + external" is an upper bound ' +
        'of what the build holds.',
      '',
      `Machine: ${machine()}; a loaded 2-core machine shared with other sessions' builds and tests (load average before the run ${load}): expect the times to vary by 2× or more between runs.`,
      '',
      '| legs of the merchant | balance transactions | build s | RSS at start MiB | RSS peak MiB | JS heap + external peak MiB | file bytes | closing (kuruş) | reserve + available (kuruş) |',
      '| -------------------: | -------------------: | ------: | ---------------: | -----------: | --------------------------: | ---------: | --------------: | --------------------------: |',
      `| ${r.legs} | ${r.transactions} | ${(r.buildMs / 1000).toFixed(1)} | ${r.rssBeforeMb} | ${r.rssPeakMb} | ${r.heapPeakMb} | ${r.bytes} | ${r.closing} | ${r.balance} |`,
      '',
    ].join('\n')
    process.stdout.write(`${block}\n`)
    if (process.env['BENCH_NO_APPEND'] !== '1') appendFileSync(RESULTS, block)
  } finally {
    if (opened) await opened.close()
    await admin(`drop database if exists ${SCRATCH}`)
  }
}

if (process.argv[2] === 'child') {
  await child(process.argv[3] ?? '', process.argv[4] ?? '')
} else {
  await main()
}
