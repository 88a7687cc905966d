import { bankAcquirer } from './modules/acquirer/index.ts'
import type { Kysely } from 'kysely'
import { ConfigError, type Config } from './config.ts'
import { buildApp, type App } from './app.ts'
import type { Database, Deps } from './database.ts'
import { registerJobs } from './jobs.ts'
import { JobQueue } from './platform/jobs/queue.ts'
import { systemClock, type Clock } from './platform/clock.ts'
import { connectDatabase, connectReadDatabase, type DatabaseHandle } from './platform/db/connect.ts'
import { claimInstallation, InstallationMismatchError } from './platform/db/installation.ts'
import { migrateToLatest } from './platform/db/migrate.ts'
import { checkMasterKey, MasterKeyMismatchError } from './platform/master-key-check.ts'
import { createLogger, type Logger } from './platform/logger.ts'
import { createMetrics, metricsAccess, serveMetrics } from './platform/metrics.ts'
import { oldestUndeliveredEventAgeSeconds } from './modules/webhooks/index.ts'

/**
 * Applies migrations, marks the database with this process's KURUS_ENV or refuses it when
 * another environment set it up (platform/db/installation.ts), then checks that the master
 * key opens what the database holds (platform/master-key-check.ts): `live` refuses to start
 * with another key; the demo, whose generated key lives in its data directory, says so.
 */
export async function prepareDatabase(
  db: Kysely<unknown>,
  config: Config,
  log?: Logger,
): Promise<string[]> {
  const applied = await migrateToLatest(db)
  try {
    await claimInstallation(db, config.env)
    const check = await checkMasterKey(db, config)
    if (check === 'previous') {
      log?.warn(
        'the master key check is under a key of KURUS_MASTER_KEY_PREVIOUS: finish the rotation with `kurus rotate-master-key`',
      )
    }
  } catch (error) {
    if (error instanceof MasterKeyMismatchError && config.env === 'demo') {
      log?.error(error.message)
      return applied
    }
    throw error instanceof InstallationMismatchError || error instanceof MasterKeyMismatchError
      ? new ConfigError(error.message)
      : error
  }
  return applied
}

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
    preparedStatements: config.databasePreparedStatements,
    log,
  })
  if (options.migrate !== false) {
    await prepareDatabase(database.db as Kysely<unknown>, config, log)
  }
  const app = await buildApp({
    config,
    db: database.db,
    dbKind: database.kind,
    clock: options.clock ?? systemClock,
    log,
    ping: database.ping,
    ...(database.health ? { health: database.health } : {}),
    raw: database.raw,
    ...(database.poolStats ? { poolStats: database.poolStats } : {}),
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

export interface WorkerRuntime {
  /** Where this worker serves /metrics (KURUS_WORKER_METRICS_PORT), if it does. */
  metricsUrl: string | undefined
  close(): Promise<void>
}

/**
 * A worker process: the job queue and the reconcilers, no HTTP. Several may run against one
 * PostgreSQL: pg-boss hands each job to one of them, and every handler is idempotent.
 */
export async function startWorker(
  config: Config,
  options: { concurrency?: number; log?: Logger } = {},
): Promise<WorkerRuntime> {
  const log = options.log ?? createLogger(config.logLevel)
  const database = await connectDatabase<Database>({
    databaseUrl: config.databaseUrl,
    dataDir: config.databaseUrl ? undefined : config.dataDir + '/pglite',
    poolSize: config.databasePoolSize,
    preparedStatements: config.databasePreparedStatements,
    log,
  })
  await prepareDatabase(database.db as Kysely<unknown>, config, log)
  const jobs = new JobQueue(database.raw, log)
  // Exports are built here: their payment search reads from the replica when there is one.
  const read = connectReadDatabase(database, config.databaseReadUrl, {
    poolSize: config.databasePoolSize,
    preparedStatements: config.databasePreparedStatements,
  })
  const deps: Deps = {
    db: database.db,
    readDb: read.db,
    clock: systemClock,
    config,
    log,
    jobs,
    acquirer: bankAcquirer,
  }
  registerJobs(jobs, deps)
  await jobs.start()
  await jobs.work(options.concurrency ?? 2)
  const access = metricsAccess(config)
  if (config.workerMetricsPort !== undefined && access.mode === 'off') {
    log.warn('live without KURUS_METRICS_TOKEN: the worker serves no /metrics')
  }
  const metrics =
    config.workerMetricsPort === undefined || access.mode === 'off'
      ? undefined
      : await serveMetrics(
          createMetrics({
            raw: database.raw,
            ...(database.poolStats ? { poolStats: database.poolStats } : {}),
            oldestUndeliveredEventSeconds: () => oldestUndeliveredEventAgeSeconds(deps),
          }),
          config.host,
          config.workerMetricsPort,
          access,
        )
  log.info({ concurrency: options.concurrency ?? 2, metrics: metrics?.url }, 'worker started')
  return {
    metricsUrl: metrics?.url,
    close: async () => {
      await metrics?.close()
      await jobs.stop()
      await read.close()
      await database.close()
    },
  }
}
