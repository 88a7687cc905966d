import { spawnSync } from 'node:child_process'
import { globSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { connectDatabase, type SqlExecutor } from '../src/platform/db/connect.ts'
import { migrateToLatest } from '../src/platform/db/migrate.ts'
import { JobQueue } from '../src/platform/jobs/queue.ts'
import { createLogger } from '../src/platform/logger.ts'
import { urlForDatabase } from '../test/helpers/db.ts'

// `npm test`: the whole suite on embedded PGlite, then again on PostgreSQL when
// TEST_DATABASE_URL is set. In CI (CI=true) PostgreSQL is required: an unreachable server
// fails the run rather than silently testing one backend. Likewise TEST_REDIS_URL: the Redis
// rate-limiter test runs when it is set, and CI refuses to run without it.
// Usage: npm test [-- <test files or globs>]

const argv = process.argv.slice(2)
const files = (argv.length > 0 ? argv : ['test/**/*.test.ts']).flatMap((p) => globSync(p)).sort()
const concurrency = process.env['TEST_CONCURRENCY'] ?? '2'
const work = mkdtempSync(join(tmpdir(), 'kurus-test-'))

/** pg-boss creates its schema on first start; do it once in the template, not per file. */
async function installJobSchema(raw: SqlExecutor) {
  const queue = new JobQueue(raw, createLogger('silent'))
  await queue.start()
  await queue.stop()
}

async function pgliteDump(): Promise<string> {
  const handle = await connectDatabase({})
  await migrateToLatest(handle.db)
  await installJobSchema(handle.raw)
  const path = join(work, 'pglite.tar')
  if (!handle.dump) throw new Error('PGlite handle cannot dump')
  writeFileSync(path, Buffer.from(await (await handle.dump()).arrayBuffer()))
  await handle.close()
  return path
}

// Databases are named after the process that made them (kurus_tpl_<pid>, kurus_t_<pid>_…),
// so several runs can share one server and a run only sweeps up after dead processes.
const TEMPLATE_DB = `kurus_tpl_${process.pid}`

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

async function withAdmin<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const admin = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 })
  await admin.connect()
  try {
    return await fn(admin)
  } finally {
    await admin.end()
  }
}

async function preparePostgres(url: string): Promise<void> {
  await withAdmin(url, async (admin) => {
    const dbs = await admin.query<{ datname: string }>(
      `select datname from pg_database where datname ~ '^kurus_(t|tpl)_[0-9]+'`,
    )
    for (const { datname } of dbs.rows) {
      const pid = Number(/^kurus_(?:t|tpl)_(\d+)/.exec(datname)?.[1])
      if (!alive(pid)) await admin.query(`drop database if exists ${datname} with (force)`)
    }
    await admin.query(`create database ${TEMPLATE_DB}`)
  })
  const handle = await connectDatabase({ databaseUrl: urlForDatabase(url, TEMPLATE_DB) })
  await migrateToLatest(handle.db)
  await installJobSchema(handle.raw)
  await handle.close()
}

async function dropTemplate(url: string): Promise<void> {
  await withAdmin(url, (admin) =>
    admin.query(`drop database if exists ${TEMPLATE_DB} with (force)`),
  )
}

interface Counts {
  pass: number
  fail: number
}

function runSuite(backend: 'pglite' | 'postgres', env: Record<string, string>): Counts {
  process.stdout.write(`\n=== test suite on ${backend} (${files.length} files) ===\n`)
  const tap = join(work, `${backend}.tap`)
  const result = spawnSync(
    process.execPath,
    [
      '--test',
      `--test-concurrency=${concurrency}`,
      '--test-reporter=spec',
      '--test-reporter-destination=stdout',
      '--test-reporter=tap',
      `--test-reporter-destination=${tap}`,
      ...files,
    ],
    { stdio: 'inherit', env: { ...process.env, ...env, KURUS_TEST_DB: backend } },
  )
  const text = readFileSync(tap, 'utf8')
  const count = (name: string) => Number(new RegExp(`^# ${name} (\\d+)`, 'm').exec(text)?.[1] ?? 0)
  const counts = { pass: count('pass'), fail: count('fail') + count('cancelled') }
  if (result.status !== 0 && counts.fail === 0) counts.fail = 1
  return counts
}

async function main(): Promise<number> {
  if (!process.env['TEST_REDIS_URL']) {
    if (process.env['CI'] === 'true') {
      process.stderr.write(
        'CI=true needs TEST_REDIS_URL: the Redis rate-limiter test must run in CI\n',
      )
      return 1
    }
    process.stdout.write('(TEST_REDIS_URL is not set: the Redis rate-limiter test is left out)\n')
  }
  const totals: Counts = { pass: 0, fail: 0 }
  const add = (c: Counts) => {
    totals.pass += c.pass
    totals.fail += c.fail
  }
  add(runSuite('pglite', { KURUS_TEST_PGLITE_DUMP: await pgliteDump() }))

  const url = process.env['TEST_DATABASE_URL']
  if (url) {
    try {
      await preparePostgres(url)
    } catch (error) {
      process.stderr.write(`PostgreSQL at TEST_DATABASE_URL is unreachable: ${String(error)}\n`)
      return 1
    }
    add(runSuite('postgres', { KURUS_TEST_TEMPLATE_DB: TEMPLATE_DB }))
    await dropTemplate(url)
  } else if (process.env['CI'] === 'true') {
    process.stderr.write('CI=true needs TEST_DATABASE_URL: the PostgreSQL suite must run in CI\n')
    return 1
  } else {
    process.stdout.write('\n(TEST_DATABASE_URL is not set: PostgreSQL suite skipped)\n')
  }
  process.stdout.write(`\n${totals.pass} passed, ${totals.fail} failed\n`)
  return totals.fail > 0 || totals.pass === 0 ? 1 : 0
}

process.exitCode = await main()
