import { mkdirSync } from 'node:fs'
import type { PGlite } from '@electric-sql/pglite'
import { Kysely, PostgresDialect, sql } from 'kysely'
import pg from 'pg'
import { assert } from '../assert.ts'
import { Mutex } from '../mutex.ts'
import type { Logger } from '../logger.ts'
import { DatabaseHealth } from './health.ts'
import { StatementNames, isStalePreparedStatement } from './prepared.ts'

export type DbKind = 'postgres' | 'pglite'

const INT8_OID = 20

// bigint columns hold kuruş; we use JS numbers, exact below 2^53, and refuse anything larger
// rather than silently rounding it.
function parseInt8(value: string): number {
  const n = Number(value)
  assert(Number.isSafeInteger(n), `bigint ${value} is beyond 2^53`)
  return n
}

/** Raw SQL access for libraries that bring their own SQL (the job queue). */
export interface SqlExecutor {
  executeSql(text: string, values?: unknown[]): Promise<{ rows: unknown[] }>
}

export interface DatabaseHandle<DB> {
  readonly kind: DbKind
  readonly db: Kysely<DB>
  readonly raw: SqlExecutor
  /** Is the database answering? For /readyz. */
  ping(): Promise<boolean>
  close(): Promise<void>
  /**
   * PostgreSQL: the circuit breaker (db/health.ts), open while the server cannot be reached.
   * PGlite runs in this process and has none.
   */
  health?: DatabaseHealth
  /** Pool use for /metrics (PGlite: its one connection and the transactions queued for it). */
  poolStats?: () => { total: number; idle: number; waiting: number }
  /** PGlite only: a tarball of the data directory (tests start from a migrated dump). */
  dump?: () => Promise<Blob>
}

export interface ConnectOptions {
  /** PostgreSQL URL; undefined opens PGlite. */
  databaseUrl?: string | undefined
  /** PGlite data directory; undefined keeps PGlite in memory (tests). */
  dataDir?: string | undefined
  poolSize?: number
  /**
   * PostgreSQL: how many distinct statements this pool prepares by name (StatementNames);
   * 0 prepares none. Default 500.
   */
  preparedStatements?: number
  /** Bounds every statement so nothing hangs a request forever. */
  statementTimeoutMs?: number
  /** For tests: start PGlite from a dump of an already-migrated database. */
  loadDataDir?: Blob | File | undefined
  /**
   * PostgreSQL: every transaction of this pool is read-only (a read replica's pool). A write
   * sent through it by mistake fails loudly, even when the URL points at the primary.
   */
  readOnly?: boolean
  /** PostgreSQL: the name this pool's sessions show in pg_stat_activity. */
  applicationName?: string
  /** PostgreSQL: where the circuit breaker logs its changes of state. */
  log?: Logger
}

/**
 * pg-pool bounds two waits with this one setting (connectionTimeoutMillis): a connect to the
 * server, and an admitted request's wait for a free connection. A connect that has not
 * succeeded within it is an outage: the breaker opens and requests get 503 SVC-INT-9002
 * within the 2 s the issue asks for. A wait for a free connection past it is load: the request
 * is shed with 503 SVC-GW-1005 and Retry-After (platform/http/errors.ts), well before a
 * client's timeout, instead of queueing into it (issue 37).
 */
const CONNECT_TIMEOUT_MS = 1_500

/** Rows of the last statement that returns rows (a multi-statement script answers an array). */
function lastRows(result: pg.QueryResult | pg.QueryResult[]): unknown[] {
  if (!Array.isArray(result)) return result.rows as unknown[]
  const withRows = result.filter((r) => r.fields.length > 0)
  return (withRows.at(-1)?.rows ?? []) as unknown[]
}

export async function connectDatabase<DB>(options: ConnectOptions): Promise<DatabaseHandle<DB>> {
  return options.databaseUrl ? connectPostgres<DB>(options) : connectPglite<DB>(options)
}

function connectPostgres<DB>(options: ConnectOptions): DatabaseHandle<DB> {
  const timeoutMs = options.statementTimeoutMs ?? 15_000
  const pool = new pg.Pool({
    connectionString: options.databaseUrl,
    max: options.poolSize ?? 10,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    idleTimeoutMillis: 30_000,
    statement_timeout: timeoutMs,
    ...(options.applicationName ? { application_name: options.applicationName } : {}),
    ...(options.readOnly ? { options: '-c default_transaction_read_only=on' } : {}),
    // A transaction left open by a crashed request must not hold its locks for long.
    idle_in_transaction_session_timeout: 60_000,
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        oid === INT8_OID
          ? parseInt8
          : (pg.types.getTypeParser as (o: number, f?: string) => unknown)(oid, format)) as never,
    },
  })
  const health = new DatabaseHealth(async () => {
    await pool.query('select 1')
  }, options.log)
  // An idle client that loses its server (restart, failover) emits here; without a listener
  // Node would crash the process. The pool replaces the client on the next checkout.
  // That is also the first sign of an outage (the server terminated its idle sessions): it
  // opens the circuit breaker before a request has to find out.
  pool.on('error', (error) => health.failed(error))
  // pg-pool drops its own error listener while a client is checked out, so a server that
  // dies mid-transaction would emit an unhandled 'error' and kill the process. The query in
  // flight still fails (and the pool discards the client); the process stays up.
  pool.on('connect', (client) => client.on('error', (error) => health.failed(error)))
  // Every way into the pool goes through the breaker: while it is open nothing waits on a
  // server that is not there, and a connection-class failure anywhere opens it.
  const guarded = <T>(run: () => Promise<T>): Promise<T> => {
    health.check()
    return run().then(
      (result) => {
        health.succeeded()
        return result
      },
      (error: unknown) => {
        health.failed(error)
        throw error
      },
    )
  }
  const names =
    options.preparedStatements === 0
      ? undefined
      : new StatementNames(options.preparedStatements ?? 500)
  // One wrapper per pooled client: Kysely keys its connection objects by the client.
  const wrappers = new WeakMap<pg.PoolClient, object>()
  const wrap = (client: pg.PoolClient) => {
    let wrapper = wrappers.get(client)
    if (wrapper) return wrapper
    const send = (query: unknown, values?: unknown) => {
      const result = (client.query as (...a: unknown[]) => unknown)(query, values)
      // A cursor (Kysely's stream()) is returned as is; a query's promise reports failures.
      if (!(result instanceof Promise)) return result
      return result.catch((error: unknown) => {
        health.failed(error)
        throw error
      })
    }
    // Whether a transaction is open on this connection (Kysely sends begin / commit / rollback
    // as statements), and whether its prepared statements went stale (it is then not reused).
    let inTransaction = false
    let stale = false
    wrapper = {
      query: (query: unknown, values?: unknown) => {
        if (typeof query !== 'string') return send(query, values)
        const head = query.trimStart().slice(0, 9).toLowerCase()
        if (head.startsWith('begin') || head.startsWith('start tra')) inTransaction = true
        else if (head === 'commit' || head === 'rollback') inTransaction = false
        const name = names?.nameFor(query)
        if (name === undefined) return send(query, values)
        return (send({ name, text: query, values }) as Promise<unknown>).catch((error: unknown) => {
          if (!isStalePreparedStatement(error)) throw error
          // A migration changed the columns behind this connection's preparation: the
          // connection goes back to the server when released, and a statement outside a
          // transaction is sent once more, unnamed. Inside one, the transaction has failed.
          stale = true
          if (inTransaction) throw error
          return send(query, values)
        })
      },
      release: (error?: Error | boolean) => client.release(error ?? (stale || undefined)),
    }
    wrappers.set(client, wrapper)
    return wrapper
  }
  const guardedPool = {
    connect: async () => wrap(await guarded(() => pool.connect())),
    end: () => pool.end(),
  }
  const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool: guardedPool as never }) })
  return {
    kind: 'postgres',
    db,
    health,
    raw: {
      // pg answers a multi-statement script (pg-boss sends BEGIN; …; COMMIT) with one result
      // per statement; its callers read `rows` of the one that returns them.
      executeSql: (text, values) =>
        guarded(async () => ({ rows: lastRows(await pool.query(text, values)) })),
    },
    ping: async () => {
      if (health.down) return false
      try {
        await guarded(() => pool.query('select 1'))
        return true
      } catch {
        return false
      }
    },
    close: async () => {
      health.close()
      await db.destroy()
    },
    poolStats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
  }
}

async function connectPglite<DB>(options: ConnectOptions): Promise<DatabaseHandle<DB>> {
  if (options.dataDir) mkdirSync(options.dataDir, { recursive: true })
  // PGlite is loaded only here: a server on PostgreSQL (DATABASE_URL) never holds its module
  // (docs/performance.md, "Round 3, part 3: memory").
  const [{ PGlite }, { PGliteDialect }] = await Promise.all([
    import('@electric-sql/pglite'),
    import('./pglite-dialect.ts'),
  ])
  const pglite: PGlite = await PGlite.create(options.dataDir, {
    parsers: { [INT8_OID]: parseInt8 },
    ...(options.loadDataDir ? { loadDataDir: options.loadDataDir } : {}),
  })
  const mutex = new Mutex()
  const db = new Kysely<DB>({ dialect: new PGliteDialect(pglite, mutex) })
  await sql`select 1`.execute(db)
  return {
    kind: 'pglite',
    db,
    raw: {
      executeSql: (text, values) =>
        mutex.run(async () => {
          // PGlite's query() runs one statement with parameters; the job queue also sends
          // multi-statement scripts without parameters, which only exec() accepts.
          if (values && values.length > 0) return { rows: (await pglite.query(text, values)).rows }
          const results = await pglite.exec(text)
          const withRows = results.filter((r) => r.fields.length > 0)
          return { rows: withRows.at(-1)?.rows ?? [] }
        }),
    },
    ping: async () => !pglite.closed,
    // PGlite is one connection behind the mutex: in use or idle, and the transactions queued
    // for it are the pool's waiting clients (kurus_db_pool_connections, as on PostgreSQL).
    poolStats: () => ({ total: 1, idle: mutex.busy ? 0 : 1, waiting: mutex.waiting }),
    dump: () => mutex.run(() => pglite.dumpDataDir('none')),
    close: async () => {
      await db.destroy()
      await mutex.run(() => pglite.close())
    },
  }
}

/** Where list, search and export queries read (Deps.readDb) and how to let it go. */
export interface ReadDatabase<DB> {
  readonly db: Kysely<DB>
  /** True when `db` is a pool of its own (DATABASE_READ_URL), false when it is the primary. */
  readonly separate: boolean
  close(): Promise<void>
}

/**
 * The read pool: a read replica's when `readUrl` is set, else the primary's own `db` (one
 * pool, nothing to close). The replica's sessions are read-only and named `kurus-read`, so a
 * write sent to it by mistake fails and pg_stat_activity tells the two pools apart. PGlite is
 * one embedded database with no replicas: the configuration refuses DATABASE_READ_URL without
 * DATABASE_URL, and this refuses it for a PGlite primary all the same.
 */
export function connectReadDatabase<DB>(
  primary: { kind: DbKind; db: Kysely<DB> },
  readUrl: string | undefined,
  pool: { poolSize: number; preparedStatements: number },
): ReadDatabase<DB> {
  if (readUrl === undefined) {
    return { db: primary.db, separate: false, close: () => Promise.resolve() }
  }
  if (primary.kind !== 'postgres') {
    throw new Error('DATABASE_READ_URL needs a PostgreSQL primary (DATABASE_URL), not PGlite')
  }
  const replica = connectPostgres<DB>({
    databaseUrl: readUrl,
    ...pool,
    readOnly: true,
    applicationName: 'kurus-read',
  })
  return { db: replica.db, separate: true, close: replica.close }
}
