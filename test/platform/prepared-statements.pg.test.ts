// Goal: on PostgreSQL the statements Kysely sends are prepared by name once per connection
// (platform/db/prepared.ts, issue 43), DATABASE_PREPARED_STATEMENTS=0 prepares none, and a
// preparation made stale by a migration neither fails a statement outside a transaction nor
// stays on the connection.
// Method: a pool of one connection, so pg_prepared_statements (per session) shows what that
// connection holds; the "migration" is an ALTER TABLE from a second client. The test
// databases run prepared statements on their generic plans from the first execution
// (test/helpers/db.ts), so the charge below proves the charge path's statements have one.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { sql, type Kysely } from 'kysely'
import pg from 'pg'
import { ConfigError, loadConfig } from '../../src/config.ts'
import { connectDatabase } from '../../src/platform/db/connect.ts'
import { startTestApp } from '../helpers/app.ts'
import { createTestDatabase, testBackend } from '../helpers/db.ts'
import { CARDS, charge } from '../helpers/payments.ts'

interface Probe {
  probe: { a: number; b?: number; c?: number }
}

const BASE_ENV = { KURUS_ENV: 'demo', KURUS_OPERATOR_TOKEN: 'x'.repeat(24) }

test('DATABASE_PREPARED_STATEMENTS: 500 by default, 0 for none, anything else refused', () => {
  assert.equal(loadConfig(BASE_ENV).databasePreparedStatements, 500)
  assert.equal(
    loadConfig({ ...BASE_ENV, DATABASE_PREPARED_STATEMENTS: '0' }).databasePreparedStatements,
    0,
  )
  for (const bad of ['-1', 'on', '1.5', '10001']) {
    assert.throws(
      () => loadConfig({ ...BASE_ENV, DATABASE_PREPARED_STATEMENTS: bad }),
      ConfigError,
      bad,
    )
  }
})

async function prepared(db: Kysely<Probe>): Promise<string[]> {
  const { rows } = await sql<{
    statement: string
  }>`select statement from pg_prepared_statements where name like 'k%' order by statement`.execute(
    db,
  )
  return rows.map((r) => r.statement)
}

const probeById = (db: Kysely<Probe>) =>
  db.selectFrom('probe').selectAll().where('a', '=', 1).executeTakeFirstOrThrow()

test('statements are prepared once per connection, or not at all with 0', async (t) => {
  if (testBackend() === 'pglite') {
    // PGlite is one session in this process: the setting does not apply and nothing breaks.
    const handle = await connectDatabase<Probe>({ preparedStatements: 0 })
    t.after(() => handle.close())
    await sql`create table probe (a int)`.execute(handle.db)
    assert.equal((await handle.db.selectFrom('probe').selectAll().execute()).length, 0)
    return
  }
  const database = await createTestDatabase()
  await sql`create table probe (a int)`.execute(database.handle.db)
  await sql`insert into probe values (1)`.execute(database.handle.db)
  const named = await connectDatabase<Probe>({ databaseUrl: database.url, poolSize: 1 })
  for (let i = 0; i < 3; i++) assert.deepEqual(await probeById(named.db), { a: 1 })
  assert.deepEqual(await prepared(named.db), [
    'select * from "probe" where "a" = $1',
    // The listing itself, prepared on its first run.
    `select statement from pg_prepared_statements where name like 'k%' order by statement`,
  ])

  const unnamed = await connectDatabase<Probe>({
    databaseUrl: database.url,
    poolSize: 1,
    preparedStatements: 0,
  })
  t.after(async () => {
    await named.close()
    await unnamed.close()
    await database.drop()
  })
  assert.deepEqual(await probeById(unnamed.db), { a: 1 })
  assert.deepEqual(await prepared(unnamed.db), [])
})

test('a migration that changes a prepared statement’s columns: answered outside a transaction, the connection replaced', async (t) => {
  if (testBackend() === 'pglite') {
    // No prepared statements on PGlite: the same change simply shows the new column.
    const handle = await connectDatabase<Probe>({})
    t.after(() => handle.close())
    await sql`create table probe (a int)`.execute(handle.db)
    await sql`insert into probe values (1)`.execute(handle.db)
    assert.deepEqual(await probeById(handle.db), { a: 1 })
    await sql`alter table probe add column b int default 7`.execute(handle.db)
    assert.deepEqual(await probeById(handle.db), { a: 1, b: 7 })
    return
  }
  const database = await createTestDatabase()
  await sql`create table probe (a int)`.execute(database.handle.db)
  await sql`insert into probe values (1)`.execute(database.handle.db)
  const app = await connectDatabase<Probe>({ databaseUrl: database.url, poolSize: 1 })
  const migrator = new pg.Client({ connectionString: database.url })
  await migrator.connect()
  // In this order: the database is dropped last, with nothing of this test still connected.
  t.after(async () => {
    await migrator.end()
    await app.close()
    await database.drop()
  })
  const backend = async () =>
    (await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(app.db)).rows[0]?.pid

  assert.deepEqual(await probeById(app.db), { a: 1 })
  const first = await backend()
  await migrator.query('alter table probe add column b int default 7')
  // Outside a transaction the statement is sent again unnamed and answers with the new column…
  assert.deepEqual(await probeById(app.db), { a: 1, b: 7 })
  // …and the connection that held the stale preparation was not given back to the pool.
  const second = await backend()
  assert.notEqual(second, first)

  assert.deepEqual(await probeById(app.db), { a: 1, b: 7 })
  await migrator.query('alter table probe add column c int default 9')
  // Inside a transaction the statement fails (the transaction cannot go on past an error)…
  await assert.rejects(
    app.db.transaction().execute((tx) => probeById(tx)),
    /cached plan must not change result type/,
  )
  // …and the next statement runs on a fresh connection.
  assert.deepEqual(await probeById(app.db), { a: 1, b: 7, c: 9 })
  assert.notEqual(await backend(), second)
})

test('a charge runs on prepared statements and their generic plans', async (t) => {
  const app = await startTestApp(t, { freshDatabase: true })
  const m = await app.newMerchant()
  // Twice: the second finds every statement of the path already prepared on its connection.
  for (const amount of [10_000, 10_001]) {
    const paid = await charge(m.client, CARDS.frictionless, amount)
    assert.equal(paid.res.status, 201, JSON.stringify(paid.res.body))
  }
})
