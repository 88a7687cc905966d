import { Writable } from 'node:stream'
import { after, type TestContext } from 'node:test'
import type { FastifyPluginAsync } from 'fastify'
import { buildApp, type App } from '../../src/app.ts'
import { loadConfig, type Config } from '../../src/config.ts'
import type { Deps } from '../../src/database.ts'
import { TestClock, type Clock } from '../../src/platform/clock.ts'
import { createLogger } from '../../src/platform/logger.ts'
import { Kurus } from '../../sdk/index.ts'
import { createTestDatabase, type TestDatabase } from './db.ts'

// Starts the real app on a loopback port over this file's own database, so tests go through
// HTTP exactly as a merchant's server does. Every log line is kept for the card-data scans.

// One database per test file: tests in a file share it and keep apart by using merchants of
// their own. Dropped when the file ends. `npm test` runs several files one after another in
// one process (scripts/test.ts, docs/testing.md), so "the file ends" is when a test of another
// file first asks for an app: see enterFile.
let shared: Promise<TestDatabase> | undefined
function fileDatabase(): Promise<TestDatabase> {
  shared ??= createTestDatabase()
  return shared
}

// One app per file, too, for the tests that take the defaults (startTestApp(t) with no
// options): building the app compiles every route's schemas (ajv, fast-json-stringify), half a
// second to two seconds of CPU, as much as fifty signed requests. What a test could tell apart from an app of its own is given to it fresh: its own
// TestClock (the shared app reads the time from the clock of the test holding it, so moving it
// affects no later test) and its own `logs`. The app is lent to one test at a time; a second
// call while it is lent (a test wanting two apps, concurrent subtests) builds another. Any
// option at all (env, config, clock, database, routes) gets an app of its own, as before.
// KURUS_TEST_APP_PER_TEST=1 gives every test its own app (to rule sharing out when in doubt).
let sharedApp:
  { built: Promise<Built>; lent: boolean; lend(clock: TestClock, logs: string[]): void } | undefined

async function closeFileResources(): Promise<void> {
  const app = sharedApp
  const database = shared
  sharedApp = undefined
  shared = undefined
  if (app) await (await app.built.catch(() => undefined))?.app.fastify.close()
  if (database) await (await database).drop()
}

after(closeFileResources)

// The file whose tests hold the database and the shared app. Files of one process run one
// after another, so when a test of another file arrives the previous file is done: its app
// and database go, and the new file starts from a fresh database as if in a process of its
// own (what the previous file left — rows, jobs, a moved clock — is never seen).
let currentFile: string | undefined
async function enterFile(t: TestContext): Promise<void> {
  const file = t.filePath
  if (file === currentFile) return
  if (currentFile !== undefined) await closeFileResources()
  currentFile = file
}

export const OPERATOR_TOKEN = 'test-operator-token-0123456789'

export interface TestMerchant {
  merchantId: string
  storeId: string
  apiKeyId: string
  publicKey: string
  secretKey: string
  client: Kurus
}

export interface TestApp {
  url: string
  app: App
  deps: Deps
  config: Config
  clock: TestClock
  database: TestDatabase
  logs: string[]
  operator<T = Record<string, unknown>>(
    method: string,
    path: string,
    body?: unknown,
  ): Promise<{ status: number; body: T }>
  newMerchant(input?: { name?: string; kycStatus?: string; env?: string }): Promise<TestMerchant>
  clientFor(keys: { publicKey: string; secretKey: string }): Kurus
}

export interface TestAppOptions {
  env?: Record<string, string>
  config?: Partial<Config>
  /** Reuse a database (e.g. a second app over the same data). */
  database?: TestDatabase
  /** A database of its own instead of the file's shared one (tests of global state). */
  freshDatabase?: boolean
  /** Tests only: routes added inside the signed context (see AppOptions.extraSignedRoutes). */
  extraSignedRoutes?: FastifyPluginAsync[]
  /** A clock of the test's own (e.g. one that can be frozen); a fresh TestClock otherwise. */
  clock?: TestClock
}

export async function startTestApp(t: TestContext, options: TestAppOptions = {}): Promise<TestApp> {
  await enterFile(t)
  if (takesDefaults(options) && process.env['KURUS_TEST_APP_PER_TEST'] !== '1') {
    sharedApp ??= shareApp()
    if (!sharedApp.lent) {
      const lent = sharedApp
      lent.lent = true
      t.after(() => {
        lent.lent = false
      })
      const clock = new TestClock()
      const logs: string[] = []
      lent.lend(clock, logs)
      return facade(await lent.built, clock, logs)
    }
  }
  const database =
    options.database ?? (options.freshDatabase ? await createTestDatabase() : await fileDatabase())
  const clock = options.clock ?? new TestClock()
  const logs: string[] = []
  const built = await buildTestApp(database, options, clock, () => logs)
  t.after(async () => {
    await built.app.fastify.close()
    if (options.freshDatabase) await database.drop()
  })
  return facade(built, clock, logs)
}

function takesDefaults(options: TestAppOptions): boolean {
  return Object.values(options).every((v) => v === undefined)
}

/** The file's default app; its clock and log sink follow whichever test it is lent to. */
function shareApp(): NonNullable<typeof sharedApp> {
  let clock = new TestClock()
  let logs: string[] = []
  const current: Clock = { now: () => clock.now() }
  const built = fileDatabase().then((database) => buildTestApp(database, {}, current, () => logs))
  // A failed build fails the test that asked; the next test tries again.
  built.catch(() => {
    if (sharedApp?.built === built) sharedApp = undefined
  })
  return {
    built,
    lent: false,
    lend(c, l) {
      clock = c
      logs = l
    },
  }
}

interface Built {
  app: App
  config: Config
  database: TestDatabase
  url: string
}

async function buildTestApp(
  database: TestDatabase,
  options: TestAppOptions,
  clock: Clock,
  /** Where a log line goes: the logs of the test that holds the app. */
  logsNow: () => string[],
): Promise<Built> {
  const config = loadConfig(
    {
      KURUS_ENV: 'demo',
      KURUS_DATA_DIR: '/nonexistent-test-data-dir',
      LOG_LEVEL: 'info',
      KURUS_RATE_LIMIT_RPS: '100000',
      KURUS_RATE_LIMIT_BURST: '100000',
      // Like the per-key limit above: tests of the limit itself set their own budget.
      KURUS_AUTH_FAILURE_BURST: '100000',
      // A dashboard password hash at the lowest cost: every merchant a test makes has one
      // (0.1 s of CPU each at the default; tests of the cost set their own).
      KURUS_PASSWORD_HASH_COST: '10',
      ...options.env,
    },
    {
      masterKey: Buffer.alloc(32, 7),
      operatorToken: OPERATOR_TOKEN,
      ...options.config,
    },
  )
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      logsNow().push(chunk.toString())
      done()
    },
  })
  const app = await buildApp({
    config,
    db: database.handle.db,
    dbKind: database.handle.kind,
    clock,
    log: createLogger(config.logLevel, sink),
    ping: database.handle.ping,
    raw: database.handle.raw,
    ...(database.handle.poolStats ? { poolStats: database.handle.poolStats } : {}),
    ...(options.extraSignedRoutes ? { extraSignedRoutes: options.extraSignedRoutes } : {}),
  })
  const url = await app.fastify.listen({ port: 0, host: '127.0.0.1' })
  return { app, config, database, url }
}

/** What a test sees of an app: the app, and the clock and logs that are the test's own. */
function facade(built: Built, clock: TestClock, logs: string[]): TestApp {
  const { app, config, database, url: address } = built
  const clientFor = (keys: { publicKey: string; secretKey: string }) =>
    new Kurus({ ...keys, baseUrl: address, now: () => clock.now() })

  const operator = async <T>(method: string, path: string, body?: unknown) => {
    const response = await fetch(address + path, {
      method,
      headers: {
        authorization: `Bearer ${OPERATOR_TOKEN}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    })
    const text = await response.text()
    return { status: response.status, body: (text ? JSON.parse(text) : null) as T }
  }

  return {
    url: address,
    app,
    deps: app.deps,
    config,
    clock,
    database,
    logs,
    operator,
    clientFor,
    newMerchant: async (input = {}) => {
      const created = await operator<{
        merchantId: string
        storeId: string
        apiKeyId: string
        publicKey: string
        secretKey: string
      }>('POST', '/operator/v1/merchants', {
        name: input.name ?? 'Test Merchant',
        kycStatus: input.kycStatus ?? 'approved',
      })
      if (created.status !== 201) throw new Error(`merchant create: ${JSON.stringify(created)}`)
      return { ...created.body, client: clientFor(created.body) }
    },
  }
}
