import { Writable } from 'node:stream'
import { after, type TestContext } from 'node:test'
import type { FastifyPluginAsync } from 'fastify'
import { buildApp, type App } from '../../src/app.ts'
import { loadConfig, type Config } from '../../src/config.ts'
import type { Deps } from '../../src/database.ts'
import { TestClock } from '../../src/platform/clock.ts'
import { createLogger } from '../../src/platform/logger.ts'
import { Kurus } from '../../sdk/index.ts'
import { createTestDatabase, type TestDatabase } from './db.ts'

// Starts the real app on a loopback port over this file's own database, so tests go through
// HTTP exactly as a merchant's server does. Every log line is kept for the card-data scans.

// One database per test file (node:test runs each file in its own process): tests in a file
// share it and keep apart by using merchants of their own. Dropped when the file ends.
let shared: Promise<TestDatabase> | undefined
function fileDatabase(): Promise<TestDatabase> {
  shared ??= createTestDatabase()
  return shared
}
after(async () => {
  if (shared) await (await shared).drop()
})

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
  const database =
    options.database ?? (options.freshDatabase ? await createTestDatabase() : await fileDatabase())
  const config = loadConfig(
    {
      KURUS_ENV: 'demo',
      KURUS_DATA_DIR: '/nonexistent-test-data-dir',
      LOG_LEVEL: 'info',
      KURUS_RATE_LIMIT_RPS: '100000',
      KURUS_RATE_LIMIT_BURST: '100000',
      // Like the per-key limit above: tests of the limit itself set their own budget.
      KURUS_AUTH_FAILURE_BURST: '100000',
      ...options.env,
    },
    {
      masterKey: Buffer.alloc(32, 7),
      operatorToken: OPERATOR_TOKEN,
      ...options.config,
    },
  )
  const logs: string[] = []
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      logs.push(chunk.toString())
      done()
    },
  })
  const clock = options.clock ?? new TestClock()
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
  const address = await app.fastify.listen({ port: 0, host: '127.0.0.1' })
  t.after(async () => {
    await app.fastify.close()
    if (options.freshDatabase) await database.drop()
  })

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
