import type { Kysely } from 'kysely'
import type { Config } from './config.ts'
import { buildApp, type App } from './app.ts'
import type { Database } from './database.ts'
import { systemClock, type Clock } from './platform/clock.ts'
import { connectDatabase, type DatabaseHandle } from './platform/db/connect.ts'
import { migrateToLatest } from './platform/db/migrate.ts'
import { createLogger, type Logger } from './platform/logger.ts'

export interface Runtime {
  app: App
  database: DatabaseHandle<Database>
  close(): Promise<void>
}

/** Opens the database, applies migrations and builds the app: what `serve` and tests share. */
export async function startRuntime(
  config: Config,
  options: { clock?: Clock; log?: Logger; migrate?: boolean; runWorker?: boolean } = {},
): Promise<Runtime> {
  const log = options.log ?? createLogger(config.logLevel)
  const database = await connectDatabase<Database>({
    databaseUrl: config.databaseUrl,
    dataDir: config.databaseUrl ? undefined : config.dataDir + '/pglite',
    poolSize: config.databasePoolSize,
  })
  if (options.migrate !== false) await migrateToLatest(database.db as Kysely<unknown>)
  const app = await buildApp({
    config,
    db: database.db,
    dbKind: database.kind,
    clock: options.clock ?? systemClock,
    log,
    ping: database.ping,
    raw: database.raw,
    runWorker: options.runWorker ?? false,
  })
  return {
    app,
    database,
    close: async () => {
      await app.fastify.close()
      await database.close()
    },
  }
}
