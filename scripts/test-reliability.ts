import { spawnSync } from 'node:child_process'
import { globSync } from 'node:fs'
import pg from 'pg'
import { connectDatabase } from '../src/platform/db/connect.ts'
import { migrateToLatest } from '../src/platform/db/migrate.ts'
import { JobQueue } from '../src/platform/jobs/queue.ts'
import { createLogger } from '../src/platform/logger.ts'
import { urlForDatabase } from '../test/helpers/db.ts'

// `npm run test:reliability`: the reliability suite (test/reliability/*.rel.ts, see
// docs/reliability.md) on PostgreSQL only — crashes, restarts, races and the history-checked
// random workload need real processes over a real server. Files run one at a time: each one
// starts service processes of its own and wants the machine's two cores.
// Knobs (defaults keep the run short for CI): KURUS_REL_SEEDS, KURUS_REL_SEED,
// KURUS_REL_SECONDS, KURUS_REL_KILLS, KURUS_REL_CLIENTS (see docs/reliability.md).
// Usage: npm run test:reliability [-- <files>]

const url = process.env['TEST_DATABASE_URL']
if (!url) {
  process.stderr.write('test:reliability runs on PostgreSQL only: set TEST_DATABASE_URL\n')
  process.exit(1)
}

const argv = process.argv.slice(2)
const files = (argv.length > 0 ? argv : ['test/reliability/*.rel.ts'])
  .flatMap((p) => globSync(p))
  .sort()
// Same naming as scripts/test.ts (kurus_tpl_<pid>), so either runner sweeps the other's leftovers.
const TEMPLATE_DB = `kurus_tpl_${process.pid}`

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

async function admin<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 })
  await client.connect()
  try {
    return await fn(client)
  } finally {
    await client.end()
  }
}

async function prepareTemplate(base: string): Promise<void> {
  await admin(async (c) => {
    const dbs = await c.query<{ datname: string }>(
      `select datname from pg_database where datname ~ '^kurus_(t|tpl)_[0-9]+'`,
    )
    for (const { datname } of dbs.rows) {
      const pid = Number(/^kurus_(?:t|tpl)_(\d+)/.exec(datname)?.[1])
      if (!alive(pid)) await c.query(`drop database if exists ${datname} with (force)`)
    }
    await c.query(`create database ${TEMPLATE_DB}`)
  })
  const handle = await connectDatabase({ databaseUrl: urlForDatabase(base, TEMPLATE_DB) })
  await migrateToLatest(handle.db)
  const queue = new JobQueue(handle.raw, createLogger('silent'))
  await queue.start()
  await queue.stop()
  await handle.close()
}

async function main(base: string): Promise<number> {
  if (files.length === 0) {
    process.stderr.write('no reliability test files matched\n')
    return 1
  }
  const started = Date.now()
  await prepareTemplate(base)
  try {
    process.stdout.write(`=== reliability suite on PostgreSQL (${files.length} files) ===\n`)
    const result = spawnSync(
      process.execPath,
      ['--test', '--test-concurrency=1', '--test-reporter=spec', ...files],
      {
        stdio: 'inherit',
        env: { ...process.env, KURUS_TEST_DB: 'postgres', KURUS_TEST_TEMPLATE_DB: TEMPLATE_DB },
      },
    )
    process.stdout.write(`reliability suite took ${Math.round((Date.now() - started) / 1000)} s\n`)
    return result.status ?? 1
  } finally {
    await admin((c) => c.query(`drop database if exists ${TEMPLATE_DB} with (force)`))
  }
}

process.exitCode = await main(url)
