import { CompiledQuery, type QueryResult } from 'kysely'
import { PgBoss } from 'pg-boss'
import type { Logger } from '../logger.ts'
import type { SqlExecutor } from '../db/connect.ts'
import { isConnectionError } from '../db/health.ts'

// The durable job queue: pg-boss on our own database. Jobs are enqueued inside the caller's
// transaction (pg-boss's per-call `db` option), so a job exists if and only if the state
// change that asked for it commits. Payloads carry ids only; handlers re-read state and are
// idempotent, because pg-boss runs a job at least once.

/** Anything that can run a compiled query: a Kysely instance or one of its transactions. */
export interface QueryRunner {
  executeQuery<R>(query: CompiledQuery<R>): Promise<QueryResult<R>>
}

export interface JobDefinition<D extends object = Record<string, string>> {
  /** `<module>.<verb>_<noun>` */
  name: string
  handler(data: D): Promise<void>
  /** Retries after the first attempt; a final failure stays visible in pg-boss's table. */
  retryLimit?: number
  retryDelaySeconds?: number
  expireInSeconds?: number
}

export interface Reconciler {
  /** `<module>.reconcile_<noun>` */
  name: string
  /** Runs once per tick across all worker processes (pg-boss schedules are singletons). */
  cron: string
  /**
   * Also tick every this many seconds (cron's finest grain is a minute). Each worker offers a
   * tick on a timer; pg-boss's singleton window lets one per window through, across workers.
   */
  everySeconds?: number
  /** Returns how many items it moved, for logs and tests. */
  run(): Promise<number>
}

export const JOBS_SCHEMA = 'pgboss'
const NO_SUCH_JOB = '00000000-0000-4000-8000-000000000000'

export class JobQueue {
  readonly boss: PgBoss
  private readonly jobs = new Map<string, JobDefinition<object>>()
  private readonly reconcilers = new Map<string, Reconciler>()
  private readonly log: Logger
  private started = false
  private readonly timers: NodeJS.Timeout[] = []

  constructor(raw: SqlExecutor, log: Logger) {
    this.log = log
    this.boss = new PgBoss({ db: raw, schema: JOBS_SCHEMA, supervise: true })
    // A database outage makes every pg-boss timer fail; the database's circuit breaker logs
    // the outage once (db/health.ts), so those failures are not logged again each time.
    this.boss.on('error', (error) => {
      if (!isConnectionError(error)) log.error({ err: error }, 'job queue error')
    })
  }

  define<D extends object>(job: JobDefinition<D>): void {
    this.jobs.set(job.name, job)
  }

  defineReconciler(reconciler: Reconciler): void {
    this.reconcilers.set(reconciler.name, reconciler)
  }

  /** Creates pg-boss's schema and our queues; every process calls it before enqueueing. */
  async start(): Promise<void> {
    if (this.started) return
    await this.boss.start()
    for (const job of this.jobs.values()) {
      await this.boss.createQueue(job.name, {
        retryLimit: job.retryLimit ?? 5,
        retryDelay: job.retryDelaySeconds ?? 10,
        retryBackoff: true,
        expireInSeconds: job.expireInSeconds ?? 300,
      })
    }
    for (const r of this.reconcilers.values()) {
      await this.boss.createQueue(r.name, { retryLimit: 0, expireInSeconds: 300 })
    }
    // pg-boss caches queue metadata and looks a missing queue up over its own connection. An
    // enqueue inside our transaction must never need that lookup: on PGlite the transaction
    // holds the only connection and the lookup would wait forever. A no-op delete of a job
    // id that cannot exist loads each queue into the cache now, outside any transaction.
    for (const name of [...this.jobs.keys(), ...this.reconcilers.keys()]) {
      await this.boss.deleteJob(name, NO_SUCH_JOB)
    }
    this.started = true
  }

  /** Enqueues inside the caller's transaction: pass the Kysely transaction as `runner`. */
  async enqueue(
    runner: QueryRunner,
    name: string,
    data: object,
    options: { singletonKey?: string; startAfter?: Date } = {},
  ): Promise<void> {
    const db = {
      executeSql: async (text: string, values?: unknown[]) => {
        const result = await runner.executeQuery(CompiledQuery.raw(text, values ?? []))
        return { rows: result.rows }
      },
    }
    await this.boss.send(name, data, { ...options, db })
  }

  /** Starts consuming: handlers for every job, and the reconcilers on their schedules. */
  async work(concurrency = 2): Promise<void> {
    for (const job of this.jobs.values()) {
      await this.boss.work<object>(
        job.name,
        { batchSize: 1, localConcurrency: concurrency },
        async ([j]) => {
          if (j) await job.handler(j.data)
        },
      )
    }
    for (const r of this.reconcilers.values()) {
      if (r.everySeconds) {
        const seconds = r.everySeconds
        const timer = setInterval(() => {
          this.boss
            .send(r.name, {}, { singletonKey: r.name, singletonSeconds: seconds })
            .catch((error: unknown) => {
              if (!isConnectionError(error)) {
                this.log.warn({ err: error, reconciler: r.name }, 'tick not sent')
              }
            })
        }, seconds * 1000)
        timer.unref()
        this.timers.push(timer)
      }
      await this.boss.schedule(r.name, r.cron)
      await this.boss.work(r.name, { batchSize: 1 }, async () => {
        const moved = await r.run()
        if (moved > 0) this.log.info({ reconciler: r.name, moved }, 'reconciled')
      })
    }
  }

  /**
   * Runs every reconciler once, then drains every job queue, in this process and now:
   * what `POST /v1/sandbox/reconcile` and tests use instead of waiting for the schedule.
   */
  async runDueOnce(): Promise<Record<string, number>> {
    const report: Record<string, number> = {}
    for (const r of this.reconcilers.values()) report[r.name] = await r.run()
    for (const job of this.jobs.values()) {
      let ran = 0
      for (;;) {
        const batch = await this.boss.fetch<object>(job.name, { batchSize: 20 })
        if (batch.length === 0) break
        for (const j of batch) {
          try {
            await job.handler(j.data)
            await this.boss.complete(job.name, j.id)
          } catch (error) {
            this.log.warn({ err: error, job: job.name }, 'job failed; pg-boss will retry it')
            await this.boss.fail(job.name, j.id)
          }
          ran++
        }
      }
      report[job.name] = ran
    }
    return report
  }

  async stop(): Promise<void> {
    for (const timer of this.timers.splice(0)) clearInterval(timer)
    if (!this.started) return
    this.started = false
    await this.boss.stop({ graceful: true, timeout: 10_000 })
  }
}
