// Goal: every operation of the served OpenAPI document (issue 38) has a summary, and every
// JSON request body and JSON 2xx answer shows an example (its own or its component's), and
// each example is valid against its schema — so the reference never shows a body the server
// would refuse, and Try it starts from one it accepts. Method: the document exactly as
// /openapi.json serves it (scripts/openapi.ts builds it the same way), each example checked
// with ajv (JSON Schema 2020-12, OpenAPI 3.1's dialect) against the schema with its $refs.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { Ajv2020 } from 'ajv/dist/2020.js'
import addFormats from 'ajv-formats'
import { openApiDocument } from '../../scripts/openapi.ts'

type Json = Record<string, unknown>
const METHODS = ['get', 'post', 'put', 'patch', 'delete']

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

test('every operation: a summary, and a valid example of each JSON body and 2xx answer', async () => {
  const doc = (await openApiDocument()) as unknown as Json
  const components = (doc['components'] as Json)['schemas'] as Json
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true })
  addFormats.default(ajv)
  // The components under a root of their own, so `#/components/schemas/X` resolves.
  ajv.addSchema({ $id: 'kurus:openapi', components: { schemas: components } })
  const check = (schema: Json, example: unknown): string | undefined => {
    const text = JSON.stringify(schema).replaceAll('"#/components/', '"kurus:openapi#/components/')
    const validate = ajv.compile(JSON.parse(text) as Json)
    return validate(example) ? undefined : ajv.errorsText(validate.errors)
  }
  const exampleOf = (media: Json): unknown => {
    if (media['example'] !== undefined) return media['example']
    const schema = media['schema'] as Json
    const ref = schema['$ref']
    const target = typeof ref === 'string' ? (components[ref.split('/').pop()!] as Json) : schema
    return Array.isArray(target['examples']) ? target['examples'][0] : undefined
  }

  const problems: string[] = []
  let operations = 0
  let examples = 0
  for (const [path, item] of Object.entries(doc['paths'] as Json)) {
    for (const method of METHODS) {
      const op = (item as Json)[method]
      if (!isObject(op)) continue
      operations++
      const name = `${method.toUpperCase()} ${path}`
      if (typeof op['summary'] !== 'string' || op['summary'].length < 8) {
        problems.push(`${name}: no summary`)
      }
      const bodies: [string, Json][] = []
      const request = isObject(op['requestBody']) ? (op['requestBody']['content'] as Json) : {}
      if (isObject(request['application/json']))
        bodies.push(['request', request['application/json']])
      for (const [status, response] of Object.entries(op['responses'] as Json)) {
        if (!status.startsWith('2') || !isObject(response) || !isObject(response['content']))
          continue
        const media = response['content']['application/json']
        if (isObject(media)) bodies.push([status, media])
      }
      for (const [which, media] of bodies) {
        const example = exampleOf(media)
        if (example === undefined) {
          problems.push(`${name} ${which}: no example`)
          continue
        }
        examples++
        const error = check(media['schema'] as Json, example)
        if (error) problems.push(`${name} ${which}: example invalid: ${error}`)
      }
    }
  }
  assert.ok(operations >= 150, `${operations} operations`)
  assert.ok(examples >= 200, `${examples} examples`)
  assert.deepEqual(problems, [])
})
