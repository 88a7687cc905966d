// Writes the Postman collection (Collection Format v2.1) of the signed API from the OpenAPI
// document /openapi.json serves (issue 38): one folder per tag, one request per operation
// with its path variables ({{id}}: a variable of that name), query parameters (off until you tick them), Idempotency-Key
// (`{{$guid}}`, new per send) and example body; a collection-level pre-request script
// (scripts/postman-signing.js) signs each request from the `publicKey` and `secretKey`
// variables. Only the signed API's operations are in it: the dashboard's and the operator's
// take a Bearer token, the hosted pages' API no key at all.
//   npm run postman   → docs/kurus.postman_collection.json (committed)
// test/docs/postman.test.ts fails when the committed file differs from what this writes, and
// runs the collection with newman (Postman's runner) against the app.
// Written here rather than with openapi-to-postmanv2: its output carries random ids (the
// committed file would change on every run) and no way to put our signing script in it.
import { readFileSync, writeFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { format, resolveConfig } from 'prettier'
import { openApiDocument } from './openapi.ts'

export const POSTMAN_FILE = 'docs/kurus.postman_collection.json'
const SIGNING_SCRIPT = new URL('postman-signing.js', import.meta.url)

type Json = Record<string, unknown>
const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const

function text(value: unknown, fallback = ''): string {
  return typeof value === 'string' ? value : fallback
}

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** Signed with the API keys: the document's default security, or one naming `signature`. */
function isSigned(op: Json): boolean {
  const security = op['security']
  if (security === undefined) return true
  return Array.isArray(security) && security.some((s) => isObject(s) && 'signature' in s)
}

function exampleBody(op: Json, schemas: Json): unknown {
  const body = op['requestBody']
  const media =
    isObject(body) && isObject(body['content']) ? body['content']['application/json'] : undefined
  if (!isObject(media)) return undefined
  if (media['example'] !== undefined) return media['example']
  const schema = media['schema']
  const ref = isObject(schema) ? schema['$ref'] : undefined
  const target = typeof ref === 'string' ? schemas[ref.split('/').pop() ?? ''] : schema
  return isObject(target) && Array.isArray(target['examples']) ? target['examples'][0] : undefined
}

function parameterValue(p: Json): string {
  const schema = isObject(p['schema']) ? p['schema'] : {}
  const examples: unknown = schema['examples']
  const value =
    p['example'] ??
    schema['example'] ??
    (Array.isArray(examples) ? (examples as unknown[])[0] : undefined) ??
    schema['default']
  if (value === undefined) return ''
  return typeof value === 'string' ? value : JSON.stringify(value)
}

function requestOf(path: string, method: string, op: Json, schemas: Json): Json {
  const parameters = (Array.isArray(op['parameters']) ? op['parameters'] : []).filter(isObject)
  const segments = path
    .split('/')
    .filter((s) => s.length > 0)
    .map((s) => s.replace(/^\{(.+)\}$/, ':$1'))
  const header: Json[] = [{ key: 'Accept', value: 'application/json' }]
  if (parameters.some((p) => p['$ref'] === '#/components/parameters/IdempotencyKey')) {
    header.push({
      key: 'Idempotency-Key',
      value: '{{$guid}}',
      description: 'A new UUID per send; keep one to retry safely.',
    })
  }
  const body = exampleBody(op, schemas)
  if (body !== undefined) header.push({ key: 'Content-Type', value: 'application/json' })
  const variable = parameters
    .filter((p) => p['in'] === 'path')
    .map((p) => ({
      key: String(p['name']),
      // A variable of the same name (set it in an environment): {{id}}, {{cardId}}, …
      value: `{{${String(p['name'])}}}`,
      description: text(p['description']),
    }))
  const query = parameters
    .filter((p) => p['in'] === 'query')
    .map((p) => ({
      key: String(p['name']),
      value: parameterValue(p),
      disabled: true,
      description: text(p['description']),
    }))
  const url: Json = {
    raw: `{{baseUrl}}/${segments.join('/')}`,
    host: ['{{baseUrl}}'],
    path: segments,
  }
  if (query.length > 0) url['query'] = query
  if (variable.length > 0) url['variable'] = variable
  const request: Json = {
    method: method.toUpperCase(),
    header,
    url,
    description: [op['summary'], op['description']]
      .filter((s) => typeof s === 'string')
      .join('\n\n'),
  }
  if (body !== undefined) {
    request['body'] = {
      mode: 'raw',
      raw: JSON.stringify(body, null, 2),
      options: { raw: { language: 'json' } },
    }
  }
  return request
}

/** The collection for `document`. */
export function postmanCollection(document: Json, signingScript: string): Json {
  const schemas = ((document['components'] as Json | undefined)?.['schemas'] ?? {}) as Json
  const tags = (Array.isArray(document['tags']) ? document['tags'] : []).filter(isObject)
  const folders = new Map<string, Json[]>()
  for (const [path, item] of Object.entries(document['paths'] as Json)) {
    if (!isObject(item)) continue
    for (const method of METHODS) {
      const op = item[method]
      if (!isObject(op) || !isSigned(op)) continue
      const tag = Array.isArray(op['tags']) ? String(op['tags'][0]) : 'other'
      const list = folders.get(tag) ?? []
      list.push({
        name: text(op['summary'], `${method.toUpperCase()} ${path}`),
        request: requestOf(path, method, op, schemas),
        response: [],
      })
      folders.set(tag, list)
    }
  }
  const info = document['info'] as Json
  return {
    info: {
      name: 'Kuruş API',
      description:
        `${text(info['description'])}\n\nGenerated from the OpenAPI document by ` +
        '`npm run postman`. Set `publicKey` and `secretKey` (better in an environment than in ' +
        'the shared collection) and `baseUrl`; the collection’s pre-request script signs every ' +
        'request. The sandbox’s keys are printed by `npm start`.',
      schema: 'https://schema.getpostman.com/json/collection/v2.1.0/collection.json',
    },
    auth: { type: 'noauth' },
    event: [
      {
        listen: 'prerequest',
        script: { type: 'text/javascript', exec: signingScript.trimEnd().split('\n') },
      },
    ],
    variable: [
      { key: 'baseUrl', value: 'http://localhost:3000' },
      { key: 'publicKey', value: '' },
      { key: 'secretKey', value: '' },
    ],
    item: tags
      .filter((t) => folders.has(String(t['name'])))
      .map((t) => ({
        name: String(t['name']),
        description: text(t['description']),
        item: folders.get(String(t['name'])),
      })),
  }
}

/** The file as `npm run postman` writes it. */
export async function postmanFile(): Promise<string> {
  const document = (await openApiDocument()) as unknown as Json
  const collection = postmanCollection(document, readFileSync(SIGNING_SCRIPT, 'utf8'))
  const file = resolve(import.meta.dirname, '..', POSTMAN_FILE)
  const options = await resolveConfig(file)
  return format(JSON.stringify(collection, null, 2), { ...options, filepath: file })
}

if (import.meta.main) {
  writeFileSync(resolve(import.meta.dirname, '..', POSTMAN_FILE), await postmanFile())
  console.log(`wrote ${POSTMAN_FILE}`)
}
