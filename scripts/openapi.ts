// Writes the OpenAPI document the server serves at /openapi.json to a file, without listening:
// builds the app as `npm start` does in the sandbox (KURUS_ENV=demo, so the sandbox routes are
// in it too) over an in-memory PGlite, then asks @fastify/swagger for the document.
//   node scripts/openapi.ts [out]      (default .artifacts/openapi.json, gitignored)
// `npm run lint` lints the file with redocly (redocly.yaml) and the typed client test
// generates its types from it (test/openapi/).
import { mkdirSync, writeFileSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { Writable } from 'node:stream'
import type { Kysely } from 'kysely'
import { buildApp } from '../src/app.ts'
import { loadConfig } from '../src/config.ts'
import type { Database } from '../src/database.ts'
import { systemClock } from '../src/platform/clock.ts'
import { connectDatabase } from '../src/platform/db/connect.ts'
import { migrateToLatest } from '../src/platform/db/migrate.ts'
import { createLogger } from '../src/platform/logger.ts'

export const DEFAULT_OPENAPI_FILE = '.artifacts/openapi.json'

/** The served document, as JSON text. */
export async function openapiDocument(): Promise<string> {
  // Fixed secrets: nothing in the document depends on them, and a run must not create the
  // demo's key files in a data directory.
  const config = loadConfig(
    { KURUS_ENV: 'demo', KURUS_DATA_DIR: '/nonexistent-openapi-dump', LOG_LEVEL: 'warn' },
    { masterKey: Buffer.alloc(32, 1), operatorToken: 'openapi-dump-operator-token-000' },
  )
  const handle = await connectDatabase<Database>({})
  try {
    await migrateToLatest(handle.db as Kysely<unknown>)
    const discard = new Writable({ write: (_chunk, _enc, done) => done() })
    const app = await buildApp({
      config,
      db: handle.db,
      dbKind: handle.kind,
      clock: systemClock,
      log: createLogger(config.logLevel, discard),
      ping: handle.ping,
      raw: handle.raw,
    })
    try {
      return JSON.stringify(app.fastify.swagger(), null, 2) + '\n'
    } finally {
      await app.fastify.close()
    }
  } finally {
    await handle.close()
  }
}

if (import.meta.main) {
  const out = resolve(process.argv[2] ?? DEFAULT_OPENAPI_FILE)
  mkdirSync(dirname(out), { recursive: true })
  writeFileSync(out, await openapiDocument())
  console.log(`wrote ${out}`)
}
