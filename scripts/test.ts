import { spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import {
  appendFileSync,
  existsSync,
  globSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  statSync,
  writeFileSync,
} from 'node:fs'
import { availableParallelism, tmpdir } from 'node:os'
import { join, relative, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import pg from 'pg'
import { connectDatabase, type SqlExecutor } from '../src/platform/db/connect.ts'
import { migrateToLatest } from '../src/platform/db/migrate.ts'
import { JobQueue } from '../src/platform/jobs/queue.ts'
import { createLogger } from '../src/platform/logger.ts'
import { urlForDatabase } from '../test/helpers/db.ts'

// `npm test`: every test file on embedded PGlite, then — when TEST_DATABASE_URL is set — the
// files whose outcome depends on the database server's behaviour (concurrency, locks, pools,
// migrations, replicas…: `*.pg.test.ts`, see docs/testing.md) again on PostgreSQL. Files named
// on the command line run on both. In CI (CI=true) PostgreSQL is required: an unreachable
// server fails the run rather than silently testing one backend. Likewise TEST_REDIS_URL: the
// Redis rate-limiter test runs when it is set, and CI refuses to run without it.
// Usage: npm test [-- <test files or globs>]
// TEST_POSTGRES=all|marked overrides which files the PostgreSQL pass runs; TEST_CONCURRENCY
// the number of test processes run at once (default: the machine's cores; each runs a group
// of files one after another, see plan()).

const root = resolve(import.meta.dirname, '..')
const argv = process.argv.slice(2)
const named = argv.length > 0
// The workspace packages' own tests (packages/node/test) run with the app's.
const DEFAULT_FILES = ['test/**/*.test.ts', 'packages/*/test/**/*.test.ts']
const files = [...new Set((named ? argv : DEFAULT_FILES).flatMap((p) => globSync(p)))].sort()
const work = mkdtempSync(join(tmpdir(), 'kurus-test-'))

/** Named `*.pg.test.ts`: the file runs on PostgreSQL as well as PGlite (docs/testing.md). */
const POSTGRES_SUFFIX = '.pg.test.ts'

function onPostgres(file: string): boolean {
  const mode = process.env['TEST_POSTGRES'] ?? (named ? 'all' : 'marked')
  if (mode === 'all') return true
  const path = relative(root, resolve(file))
  return path.endsWith(POSTGRES_SUFFIX)
}

// Test files are separate processes: PGlite files are CPU-bound (the database runs in the
// test's own process), PostgreSQL files wait on the server too. Measured in docs/testing.md.
const cores = availableParallelism()
function concurrency(backend: Backend): number {
  const given = Number(process.env['TEST_CONCURRENCY'])
  if (Number.isInteger(given) && given > 0) return given
  return backend === 'pglite' ? cores : cores * 2
}

/** pg-boss creates its schema on first start; do it once in the template, not per file. */
async function installJobSchema(raw: SqlExecutor) {
  const queue = new JobQueue(raw, createLogger('silent'))
  await queue.start()
  await queue.stop()
}

/**
 * The migrated PGlite data directory every PGlite test file starts from. Making it costs
 * several seconds of CPU, so it is kept in the temp directory under a hash of everything that
 * shapes it (the migrations and the database and job-queue code, PGlite's and pg-boss's
 * versions) and made again only when one of those changes.
 */
async function pgliteDump(): Promise<string> {
  const hash = createHash('sha256')
  const inputs = globSync(
    ['src/platform/db/**/*.ts', 'src/platform/jobs/**/*.ts', 'scripts/test.ts'],
    { cwd: root },
  )
  for (const file of inputs.sort()) hash.update(file).update(readFileSync(join(root, file)))
  for (const pkg of ['@electric-sql/pglite', 'pg-boss']) {
    hash.update(readFileSync(join(root, 'node_modules', pkg, 'package.json')))
  }
  const path = join(tmpdir(), `kurus-pglite-${hash.digest('hex').slice(0, 16)}.tar`)
  if (existsSync(path)) return path
  const handle = await connectDatabase({})
  await migrateToLatest(handle.db)
  await installJobSchema(handle.raw)
  if (!handle.dump) throw new Error('PGlite handle cannot dump')
  // A checkpoint first, so every file starts from a clean data directory instead of
  // replaying the migrations' WAL on each start (0.6 s of CPU per file).
  await handle.raw.executeSql('checkpoint')
  // Written aside and renamed: a run in parallel never reads half a file.
  const partial = join(work, 'pglite.tar')
  writeFileSync(partial, Buffer.from(await (await handle.dump()).arrayBuffer()))
  await handle.close()
  renameSync(partial, path)
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

// Each file's wall and CPU time, written by scripts/test-timing.ts as its process exits. The
// slowest are printed after each pass, and the next run starts the longest files first so
// that no long file is left to run alone at the end.
const TIMINGS_CACHE = join(tmpdir(), 'kurus-test-timings.json')
type Timings = Record<string, number>

function readTimings(): Timings {
  try {
    return JSON.parse(readFileSync(TIMINGS_CACHE, 'utf8')) as Timings
  } catch {
    return {}
  }
}

/** A file's weight: its last wall time in ms, else its size in bytes (about as many ms). */
function weigher(backend: Backend): (file: string) => number {
  const last = readTimings()
  return (f) => last[`${backend}:${relative(root, resolve(f))}`] ?? statSync(f).size
}

/**
 * Files that keep a process of their own: those with hooks for the whole file (`before` /
 * `after` at the top level, the browser files), which would run at the ends of a shared
 * process rather than of the file.
 */
function ownProcess(file: string): boolean {
  return /^(before|after)\(/m.test(readFileSync(file, 'utf8'))
}

interface Group {
  id: string
  files: string[]
  weight: number
}

// Test files per process. Each process pays about 4 s of CPU to start (importing the code,
// V8 warming up on the first app: docs/testing.md); files in one process pay it once and run
// one after another, each on a database and app of its own (test/helpers/app.ts). Enough
// groups per slot that the slots end together.
const GROUPS_PER_SLOT = 4

/** The pass's processes, heaviest first: files spread over groups of about equal weight. */
function plan(backend: Backend, list: string[], slots: number): Group[] {
  const weight = weigher(backend)
  const alone = list.filter(ownProcess)
  const shared = list.filter((f) => !ownProcess(f)).sort((a, b) => weight(b) - weight(a))
  const count = Math.max(1, Math.min(shared.length, slots * GROUPS_PER_SLOT))
  const groups: Group[] = Array.from({ length: count }, (_, i) => ({
    id: `g${i + 1}`,
    files: [],
    weight: 0,
  }))
  for (const file of shared) {
    const lightest = groups.reduce((a, b) => (b.weight < a.weight ? b : a))
    lightest.files.push(file)
    lightest.weight += weight(file)
  }
  return [
    ...alone.map((f, i) => ({ id: `p${i + 1}`, files: [f], weight: weight(f) })),
    ...groups.filter((g) => g.files.length > 0),
  ].sort((a, b) => b.weight - a.weight)
}

interface ProcessTiming {
  group: string
  wallMs: number
  cpuMs: number
}

function jsonLines<T>(path: string): T[] {
  if (!existsSync(path)) return []
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as T)
}

function reportTimings(backend: Backend, filesPath: string, processesPath: string): void {
  const files = jsonLines<{ file: string; wallMs: number }>(filesPath)
  const processes = jsonLines<ProcessTiming>(processesPath)
  const cache = readTimings()
  for (const r of files) cache[`${backend}:${relative(root, r.file)}`] = r.wallMs
  // Aside and renamed: runs in other worktrees share the file.
  writeFileSync(join(work, 'timings.json'), JSON.stringify(cache))
  renameSync(join(work, 'timings.json'), TIMINGS_CACHE)
  const cpu = processes.reduce((sum, r) => sum + r.cpuMs, 0)
  const slowest = files.sort((a, b) => b.wallMs - a.wallMs).slice(0, 8)
  process.stdout.write(
    `\nslowest files on ${backend} (wall s of their tests; ${processes.length} processes used ` +
      `${s(cpu)} s of CPU):\n`,
  )
  for (const r of slowest) {
    process.stdout.write(`  ${s(r.wallMs).padStart(6)}  ${relative(root, r.file)}\n`)
  }
}

function s(ms: number): string {
  return (ms / 1000).toFixed(1)
}

/** One chromium for every browser test of the run (test/helpers/browser.ts connects to it). */
async function sharedBrowser(): Promise<{ endpoint: string; close(): Promise<void> } | undefined> {
  const wanted = files.some((f) => readFileSync(f, 'utf8').includes('helpers/browser.ts'))
  if (!wanted) return undefined
  try {
    const { chromium } = await import('playwright-core')
    const { CHROMIUM } = await import('../test/helpers/browser.ts')
    const server = await chromium.launchServer(CHROMIUM)
    return { endpoint: server.wsEndpoint(), close: () => server.close() }
  } catch (error) {
    // Each browser test file then launches its own, and says why that fails if it does.
    process.stderr.write(`(no shared browser: ${String(error).split('\n')[0]})\n`)
    return undefined
  }
}

type Backend = 'pglite' | 'postgres'

// V8 flags of every test-file process. `--liftoff-only`: PGlite's WebAssembly stays on V8's
// baseline compiler instead of being recompiled by the optimizing one in background threads.
// A test file is a process of seconds that runs each query a few times: the optimizing
// compiler never paid back its cost there, and dropping it saves about 4 s of CPU per PGlite
// file (measured in docs/testing.md). The server itself keeps the default (it runs for days).
const V8_FLAGS = ['--liftoff-only']

interface Counts {
  pass: number
  fail: number
}

async function runSuite(
  backend: Backend,
  list: string[],
  env: Record<string, string>,
): Promise<Counts> {
  const n = concurrency(backend)
  const groups = plan(backend, list, n)
  process.stdout.write(
    `\n=== test suite on ${backend} (${list.length} files in ${groups.length} processes, ` +
      `${n} at a time) ===\n`,
  )
  const filesPath = join(work, `${backend}.files.jsonl`)
  const processesPath = join(work, `${backend}.processes.jsonl`)
  const timer = pathToFileURL(join(root, 'scripts/test-timing.ts')).href
  const reporter = pathToFileURL(join(root, 'scripts/test-files-reporter.ts')).href
  const totals: Counts = { pass: 0, fail: 0 }
  const queue = [...groups]
  const runGroup = async (group: Group) => {
    const tap = join(work, `${backend}.${group.id}.tap`)
    const child = spawn(
      process.execPath,
      [
        // The runner hands its own V8 flags to each test process.
        ...V8_FLAGS,
        '--test',
        '--test-isolation=none',
        '--test-reporter=spec',
        '--test-reporter-destination=stdout',
        '--test-reporter=tap',
        `--test-reporter-destination=${tap}`,
        `--test-reporter=${reporter}`,
        `--test-reporter-destination=${join(work, `${backend}.${group.id}.files.jsonl`)}`,
        ...group.files,
      ],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
        env: {
          ...process.env,
          ...env,
          KURUS_TEST_DB: backend,
          KURUS_TEST_GROUP: group.id,
          KURUS_TEST_TIMINGS: processesPath,
          NODE_OPTIONS: `${process.env['NODE_OPTIONS'] ?? ''} --import=${timer}`.trim(),
          // V8's code cache of every module (src, node_modules, the type-stripped TypeScript):
          // each test process would otherwise compile them all again.
          NODE_COMPILE_CACHE:
            process.env['NODE_COMPILE_CACHE'] ?? join(tmpdir(), 'kurus-node-compile-cache'),
        },
      },
    )
    // A process's report is printed whole when it ends, not interleaved with the others'.
    const out: Buffer[] = []
    child.stdout.on('data', (b: Buffer) => out.push(b))
    child.stderr.on('data', (b: Buffer) => out.push(b))
    const status = await new Promise<number | null>((done) => child.on('close', done))
    process.stdout.write(Buffer.concat(out))
    const text = existsSync(tap) ? readFileSync(tap, 'utf8') : ''
    const count = (name: string) =>
      Number(new RegExp(`^# ${name} (\\d+)`, 'm').exec(text)?.[1] ?? 0)
    const fail = count('fail') + count('cancelled')
    totals.pass += count('pass')
    totals.fail += status !== 0 && fail === 0 ? 1 : fail
    const files = join(work, `${backend}.${group.id}.files.jsonl`)
    if (existsSync(files)) appendFileSync(filesPath, readFileSync(files))
  }
  await Promise.all(
    Array.from({ length: n }, async () => {
      for (let group = queue.shift(); group; group = queue.shift()) await runGroup(group)
    }),
  )
  reportTimings(backend, filesPath, processesPath)
  return totals
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
  const url = process.env['TEST_DATABASE_URL']
  if (!url && process.env['CI'] === 'true') {
    process.stderr.write('CI=true needs TEST_DATABASE_URL: the PostgreSQL suite must run in CI\n')
    return 1
  }
  const pgFiles = files.filter(onPostgres)
  // The PostgreSQL template is migrated while the PGlite pass runs.
  const template =
    url && pgFiles.length > 0
      ? preparePostgres(url).then(
          () => undefined,
          (error: unknown) => String(error),
        )
      : undefined
  const browser = await sharedBrowser()
  const browserEnv: Record<string, string> = browser
    ? { KURUS_TEST_BROWSER_WS: browser.endpoint }
    : {}
  const totals: Counts = { pass: 0, fail: 0 }
  const add = (c: Counts) => {
    totals.pass += c.pass
    totals.fail += c.fail
  }
  try {
    add(
      await runSuite('pglite', files, {
        ...browserEnv,
        KURUS_TEST_PGLITE_DUMP: await pgliteDump(),
      }),
    )
    if (url && pgFiles.length > 0) {
      const error = await template
      if (error !== undefined) {
        process.stderr.write(`PostgreSQL at TEST_DATABASE_URL is unreachable: ${error}\n`)
        return 1
      }
      add(
        await runSuite('postgres', pgFiles, { ...browserEnv, KURUS_TEST_TEMPLATE_DB: TEMPLATE_DB }),
      )
      await dropTemplate(url)
    } else if (url) {
      process.stdout.write('\n(none of these files runs on PostgreSQL: see docs/testing.md)\n')
    } else {
      process.stdout.write('\n(TEST_DATABASE_URL is not set: PostgreSQL suite skipped)\n')
    }
  } finally {
    await browser?.close()
  }
  process.stdout.write(`\n${totals.pass} passed, ${totals.fail} failed\n`)
  return totals.fail > 0 || totals.pass === 0 ? 1 : 0
}

process.exitCode = await main()
