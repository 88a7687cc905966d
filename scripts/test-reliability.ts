import { execFileSync, spawnSync } from 'node:child_process'
import { appendFileSync, existsSync, globSync, readFileSync, writeFileSync } from 'node:fs'
import { cpus, loadavg, totalmem } from 'node:os'
import pg from 'pg'
import { format, resolveConfig } from 'prettier'
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
// Usage: npm run test:reliability [-- [--ci] [--results FILE] [<files>]]
//
// The whole suite is ~8 minutes on the 2-core machine, half of CI's budget, so CI runs a part
// of it (`--ci`, CI_FILES below: every money phase held across a PostgreSQL restart, the
// concurrency and fail-point files and the checkers) and the whole suite is run apart, its
// last result committed in test/reliability/RESULTS.md (`--results`), as the HA scenario's is
// (docs/reliability.md, "What CI runs").

const url = process.env['TEST_DATABASE_URL']
if (!url) {
  process.stderr.write('test:reliability runs on PostgreSQL only: set TEST_DATABASE_URL\n')
  process.exit(1)
}

/**
 * What CI runs (`--ci`): the files that prove the most per second. The SIGKILL sweeps
 * (exactly-once*, crash, history), the overload and the one-restart-under-load files run in
 * the whole suite only.
 */
const CI_FILES = [
  'test/reliability/checker.rel.ts',
  'test/reliability/concurrency.rel.ts',
  'test/reliability/exactly-once-pg-restart.rel.ts',
  'test/reliability/failpoints.rel.ts',
]

const argv = process.argv.slice(2)
const ci = argv.includes('--ci')
const resultsAt = argv.indexOf('--results')
const resultsFile = resultsAt >= 0 ? argv[resultsAt + 1] : undefined
const named = argv.filter((a, i) => !a.startsWith('--') && (resultsAt < 0 || i !== resultsAt + 1))
const files = (named.length > 0 ? named : ci ? CI_FILES : ['test/reliability/*.rel.ts'])
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
    const load = loadavg()[0]?.toFixed(1) ?? '?'
    process.stdout.write(`=== reliability suite on PostgreSQL (${files.length} files) ===\n`)
    // One process per file, so each file's time and verdict can be recorded.
    const runs = files.map((file) => {
      const began = Date.now()
      const result = spawnSync(process.execPath, ['--test', '--test-reporter=spec', file], {
        stdio: 'inherit',
        env: { ...process.env, KURUS_TEST_DB: 'postgres', KURUS_TEST_TEMPLATE_DB: TEMPLATE_DB },
      })
      return { file, ok: result.status === 0, seconds: Math.round((Date.now() - began) / 1000) }
    })
    const seconds = Math.round((Date.now() - started) / 1000)
    for (const run of runs) {
      process.stdout.write(
        `${run.ok ? 'pass' : 'FAIL'} ${String(run.seconds).padStart(4)} s  ${run.file}\n`,
      )
    }
    process.stdout.write(`reliability suite took ${seconds} s\n`)
    if (resultsFile) await record(resultsFile, runs, seconds, load)
    return runs.every((r) => r.ok) ? 0 : 1
  } finally {
    await admin((c) => c.query(`drop database if exists ${TEMPLATE_DB} with (force)`))
  }
}

function git(...args: string[]): string {
  try {
    return execFileSync('git', args, { encoding: 'utf8' }).trim()
  } catch {
    return '?'
  }
}

/** One row per run in the results file: the suite's last result, committed (docs/reliability.md). */
async function record(
  file: string,
  runs: { file: string; ok: boolean; seconds: number }[],
  seconds: number,
  load: string,
): Promise<void> {
  if (!existsSync(file)) {
    writeFileSync(
      file,
      '# Reliability suite results\n\n' +
        'Written by `npm run test:reliability -- --results test/reliability/RESULTS.md` ' +
        '(scripts/test-reliability.ts); CI runs only the part named by `--ci` ' +
        '(docs/reliability.md, "What CI runs").\n\n' +
        '| finished (UTC) | commit | machine | load at start | knobs | files (seconds) | total | verdict |\n' +
        '| --- | --- | --- | --- | --- | --- | --- | --- |\n',
    )
  }
  const knobs = Object.entries(process.env)
    .filter(([k]) => k.startsWith('KURUS_REL_'))
    .map(([k, v]) => `${k}=${v}`)
    .join(' ')
  const dirty = git('status', '--porcelain', '--untracked-files=no') === '' ? '' : ' (modified)'
  const machine = `${cpus().length} × ${cpus()[0]?.model.split(' ').slice(0, 2).join(' ') ?? '?'}, ${Math.round(totalmem() / 2 ** 30)} GiB`
  const perFile = runs
    .map((r) => `${r.file.replace('test/reliability/', '')} ${r.ok ? '' : 'FAILED '}${r.seconds}`)
    .join('; ')
  const verdict = runs.every((r) => r.ok) ? 'pass' : 'FAIL'
  appendFileSync(
    file,
    `| ${new Date().toISOString().slice(0, 19)} | ${git('rev-parse', '--short', 'HEAD')}${dirty} | ${machine} | ${load} | ${knobs || 'defaults'} | ${perFile} | ${seconds} s | ${verdict} |\n`,
  )
  // Committed with the repository, whose lint checks Markdown with Prettier.
  const options = await resolveConfig(file)
  writeFileSync(file, await format(readFileSync(file, 'utf8'), { ...options, filepath: file }))
}

process.exitCode = await main(url)
