import type { PGlite } from '@electric-sql/pglite'
import {
  CompiledQuery,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type DatabaseConnection,
  type DatabaseIntrospector,
  type Dialect,
  type DialectAdapter,
  type Driver,
  type Kysely,
  type QueryCompiler,
  type QueryResult,
  type TransactionSettings,
} from 'kysely'
import { Mutex } from '../mutex.ts'

// Our own ~80-line dialect instead of kysely-pglite: that package ships a code-generation CLI
// (oclif, chokidar, kysely-codegen) as runtime dependencies, and it does not serialise access.
// PGlite is a single connection: two interleaved Kysely transactions would share one session
// and mix their statements. Here a connection is a lease on a mutex, held from acquire to
// release, so a transaction owns PGlite until it commits and other queries queue behind it.

class PGliteConnection implements DatabaseConnection {
  private readonly pg: PGlite
  constructor(pg: PGlite) {
    this.pg = pg
  }

  async executeQuery<R>(compiled: CompiledQuery): Promise<QueryResult<R>> {
    const result = await this.pg.query<R>(compiled.sql, compiled.parameters as unknown[])
    const kind = compiled.query.kind
    const affects =
      kind === 'InsertQueryNode' ||
      kind === 'UpdateQueryNode' ||
      kind === 'DeleteQueryNode' ||
      kind === 'MergeQueryNode'
    return affects && result.affectedRows !== undefined
      ? { rows: result.rows, numAffectedRows: BigInt(result.affectedRows) }
      : { rows: result.rows }
  }

  // eslint-disable-next-line require-yield
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('streaming is not supported on PGlite; page with keyset queries instead')
  }
}

class PGliteDriver implements Driver {
  private readonly connection: PGliteConnection
  private readonly pg: PGlite
  private readonly mutex: Mutex
  constructor(pg: PGlite, mutex: Mutex) {
    this.pg = pg
    this.mutex = mutex
    this.connection = new PGliteConnection(pg)
  }
  async init(): Promise<void> {
    await this.pg.waitReady
  }
  async acquireConnection(): Promise<DatabaseConnection> {
    await this.mutex.lock()
    return this.connection
  }
  async beginTransaction(conn: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    const level = settings.isolationLevel ? ` isolation level ${settings.isolationLevel}` : ''
    await conn.executeQuery(CompiledQuery.raw(`begin${level}`))
  }
  async commitTransaction(conn: DatabaseConnection): Promise<void> {
    await conn.executeQuery(CompiledQuery.raw('commit'))
  }
  async rollbackTransaction(conn: DatabaseConnection): Promise<void> {
    await conn.executeQuery(CompiledQuery.raw('rollback'))
  }
  async releaseConnection(): Promise<void> {
    this.mutex.unlock()
  }
  async destroy(): Promise<void> {
    // The owner of the PGlite instance closes it (see connect.ts), after every user is done.
  }
}

export class PGliteDialect implements Dialect {
  private readonly pg: PGlite
  private readonly mutex: Mutex
  constructor(pg: PGlite, mutex: Mutex) {
    this.pg = pg
    this.mutex = mutex
  }
  createAdapter(): DialectAdapter {
    return new PostgresAdapter()
  }
  createDriver(): Driver {
    return new PGliteDriver(this.pg, this.mutex)
  }
  createQueryCompiler(): QueryCompiler {
    return new PostgresQueryCompiler()
  }
  createIntrospector(db: Kysely<unknown>): DatabaseIntrospector {
    return new PostgresIntrospector(db)
  }
}
