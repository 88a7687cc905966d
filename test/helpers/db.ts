import { readFileSync } from 'node:fs'
import { randomBytes } from 'node:crypto'
import type { Kysely } from 'kysely'
import pg from 'pg'
import type { Database } from '../../src/database.ts'
import { connectDatabase, type DatabaseHandle } from '../../src/platform/db/connect.ts'
import { migrateToLatest } from '../../src/platform/db/migrate.ts'

// A fresh database per test file on the backend scripts/test.ts selected:
// - pglite: an in-memory PGlite loaded from the migrated dump the runner made once;
// - postgres: CREATE DATABASE … TEMPLATE kurus_template, dropped when the file ends.

export type TestBackend = 'pglite' | 'postgres'

export function testBackend(): TestBackend {
  return process.env['KURUS_TEST_DB'] === 'postgres' ? 'postgres' : 'pglite'
}

/**
 * True in the one pass of `npm test` that runs checks independent of the database (page
 * rendering at several widths, accessibility): the PGlite pass, which every run has. They
 * run once per `npm test` instead of once per backend; nothing else about them changes.
 */
export function runsBackendIndependentChecks(): boolean {
  return testBackend() === 'pglite'
}

/** The migrated template this run's files clone; named by scripts/test.ts per run. */
export function templateDb(): string {
  return process.env['KURUS_TEST_TEMPLATE_DB'] ?? 'kurus_tpl_default'
}

export function adminUrl(): string {
  const url = process.env['TEST_DATABASE_URL']
  if (!url) throw new Error('KURUS_TEST_DB=postgres needs TEST_DATABASE_URL')
  return url
}

export function urlForDatabase(base: string, name: string): string {
  const url = new URL(base)
  url.pathname = `/${name}`
  return url.toString()
}

export interface TestDatabase {
  handle: DatabaseHandle<Database>
  /** PostgreSQL URL of this file's database (postgres backend only). */
  url: string | undefined
  drop(): Promise<void>
}

export async function createTestDatabase(): Promise<TestDatabase> {
  if (testBackend() === 'pglite') {
    const dump = process.env['KURUS_TEST_PGLITE_DUMP']
    const handle = await connectDatabase<Database>({
      loadDataDir: dump ? new Blob([readFileSync(dump)]) : undefined,
    })
    if (!dump) await migrateToLatest(handle.db as Kysely<unknown>)
    return { handle, url: undefined, drop: () => handle.close() }
  }
  const admin = adminUrl()
  const name = `kurus_t_${process.pid}_${randomBytes(4).toString('hex')}`
  const client = new pg.Client({ connectionString: admin })
  await client.connect()
  try {
    await client.query(`create database ${name} template ${templateDb()}`)
    // Every statement the app prepares (platform/db/prepared.ts) runs on its generic plan from
    // the first execution, as production's would from the sixth: a statement that cannot (an
    // ON CONFLICT arbiter behind a parameter) fails in the PostgreSQL pass, not in production.
    await client.query(`alter database ${name} set plan_cache_mode = force_generic_plan`)
  } finally {
    await client.end()
  }
  const url = urlForDatabase(admin, name)
  const handle = await connectDatabase<Database>({ databaseUrl: url, poolSize: 10 })
  return {
    handle,
    url,
    drop: async () => {
      await handle.close()
      const c = new pg.Client({ connectionString: admin })
      await c.connect()
      try {
        await c.query(`drop database if exists ${name} with (force)`)
      } finally {
        await c.end()
      }
    },
  }
}
