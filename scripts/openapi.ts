// Writes the OpenAPI document the server serves at /openapi.json to a file, without listening:
// builds the app as `npm start` does in the sandbox (KURUS_ENV=demo, so the sandbox routes are
// in it too) over an in-memory PGlite, then asks @fastify/swagger for the document. Next to it,
// the TypeScript types openapi-typescript generates from it (what a merchant's generated
// client sees; test/openapi/client.test.ts is written against them).
//   npm run openapi        → .artifacts/openapi.json and .artifacts/openapi-types.ts (gitignored)
// `npm run lint` runs it first, lints the document with redocly (redocly.yaml), and tsc checks
// the typed client test against the fresh types.
import { mkdirSync, writeFileSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import type { Kysely } from 'kysely'
import openapiTS, { astToString, COMMENT_HEADER, type OpenAPI3 } from 'openapi-typescript'
import { buildApp } from '../src/app.ts'
import { loadConfig } from '../src/config.ts'
import type { Database } from '../src/database.ts'
import { systemClock } from '../src/platform/clock.ts'
import { connectDatabase } from '../src/platform/db/connect.ts'
import { migrateToLatest } from '../src/platform/db/migrate.ts'
import { createLogger } from '../src/platform/logger.ts'

const DOCUMENT_FILE = '.artifacts/openapi.json'
const TYPES_FILE = '.artifacts/openapi-types.ts'

/**
 * The document /openapi.json serves, from an app that is built but never listens. The one
 * builder of it outside a running server: `npm run openapi` writes it, `npm run sdk:types`
 * (scripts/sdk-types.ts) generates @kurus/node's types from it.
 */
export async function openApiDocument(): Promise<OpenAPI3> {
  // Fixed secrets: nothing in the document depends on them, and a run must not create the
  // demo's key files in a data directory.
  const config = loadConfig(
    { KURUS_ENV: 'demo', KURUS_DATA_DIR: '/nonexistent-openapi-dump', LOG_LEVEL: 'silent' },
    { masterKey: Buffer.alloc(32, 1), operatorToken: 'openapi-dump-operator-token-000' },
  )
  const handle = await connectDatabase<Database>({})
  try {
    await migrateToLatest(handle.db as Kysely<unknown>)
    const app = await buildApp({
      config,
      db: handle.db,
      dbKind: handle.kind,
      clock: systemClock,
      log: createLogger('silent'),
      ping: handle.ping,
      raw: handle.raw,
    })
    try {
      await app.fastify.ready()
      return app.fastify.swagger() as unknown as OpenAPI3
    } finally {
      await app.fastify.close()
    }
  } finally {
    await handle.close()
  }
}

/** The `paths`, `components` and `operations` types of a client generated from `document`. */
async function clientTypes(document: OpenAPI3): Promise<string> {
  const ast = await openapiTS(document)
  return COMMENT_HEADER + astToString(ast)
}

if (import.meta.main) {
  const root = resolve(import.meta.dirname, '..')
  const document = await openApiDocument()
  for (const [file, text] of [
    [DOCUMENT_FILE, JSON.stringify(document, null, 2) + '\n'],
    [TYPES_FILE, await clientTypes(document)],
  ] as const) {
    const out = resolve(root, file)
    mkdirSync(dirname(out), { recursive: true })
    writeFileSync(out, text)
    console.log(`wrote ${file}`)
  }
}
