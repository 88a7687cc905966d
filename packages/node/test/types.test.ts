// Goal: src/openapi.ts, the types every call of @kurus/node is checked against, are generated
// from the document the app serves at /openapi.json, not from an older one.
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'
import type { OpenAPI3 } from 'openapi-typescript'
import { SDK_TYPES_FILE, sdkTypesSource } from '../../../scripts/sdk-types.ts'
import { startTestApp } from '../../../test/helpers/app.ts'

test('the package types are those of the served /openapi.json (npm run sdk:types)', async (t) => {
  const h = await startTestApp(t)
  const served = (await (await fetch(`${h.url}/openapi.json`)).json()) as OpenAPI3
  const wanted = await sdkTypesSource(served)
  assert.ok(
    readFileSync(SDK_TYPES_FILE, 'utf8') === wanted,
    'packages/node/src/openapi.ts is stale: run `npm run sdk:types`',
  )
})
