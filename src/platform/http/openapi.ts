import type { FastifyDynamicSwaggerOptions } from '@fastify/swagger'
import { exampleOf } from './openapi-examples.ts'
// The served OpenAPI document (/openapi.json) is @fastify/swagger's rendering of the routes'
// TypeBox schemas, finished here so that a generated client can trust it (issue 28):
// - every schema with a `title` becomes a component (`#/components/schemas/<title>`) and each
//   use a $ref, so `Payment` has a name in a client. Routes keep their inline TypeBox schemas
//   (their static types and validators stay as they are); a title is the one marker. Two
//   different schemas under one title fail the document (and with it the tests and the lint);
// - a query parameter or body property with a default is optional to send (the validator
//   fills it in), and a body none of whose fields is required is optional (a missing body is
//   `{}`: the preValidation hook in app.ts);
// - the routes that honour Idempotency-Key (the gateway marks them: `config.idempotencyKey`)
//   show the header; every operation lists 500 and 503, which any route can answer;
// - a JSON request body or 2xx answer without an example gets one built from its schema's
//   annotations (openapi-examples.ts), so the reference and "Try it" show a usable one.
// scripts/openapi.ts writes the document to a file; `npm run lint` lints it with redocly
// (redocly.yaml) and test/openapi/ checks it and drives a client generated from it.

type Json = Record<string, unknown>

const SCHEMAS = '#/components/schemas/'

/** Tag descriptions, in the order the reference shows them. */
const TAGS: { name: string; description: string }[] = [
  { name: 'identity', description: 'Who the signed key belongs to.' },
  {
    name: 'payments',
    description: 'Checkout sessions, card charges, 3DS, captures, voids, refunds.',
  },
  { name: 'cards', description: 'The card vault: tokens, and the audit of their use.' },
  { name: 'customers', description: 'Customers and their saved cards.' },
  { name: 'subscriptions', description: 'Recurring charges on a saved card.' },
  { name: 'invoices', description: 'Invoices with a payment link and a PDF.' },
  { name: 'payment-links', description: 'Reusable payment pages.' },
  {
    name: 'transactions',
    description: 'The read model over payments, refunds and payouts; exports.',
  },
  { name: 'reports', description: 'Balance transactions and background reports.' },
  { name: 'disputes', description: 'Chargebacks and their evidence.' },
  { name: 'files', description: 'Uploaded files (dispute evidence).' },
  { name: 'payouts', description: 'Payouts to submerchants, payout drafts and balances.' },
  { name: 'events', description: 'The events webhooks deliver, for polling and replay.' },
  { name: 'logs', description: 'The merchant’s API request log (metadata only), for 7 days.' },
  { name: 'risk', description: 'Block lists, rules and manual reviews.' },
  {
    name: 'acquiring',
    description: 'Bank virtual POS accounts, routing, BIN facts and installment options.',
  },
  {
    name: 'checkout',
    description: 'The hosted checkout page’s API (unsigned: the session id is the bearer).',
  },
  { name: 'dashboard', description: 'The merchant dashboard’s API (Bearer dashboard token).' },
  { name: 'webhooks', description: 'Webhook endpoints and deliveries (dashboard-owned).' },
  { name: 'operator', description: 'Platform staff (Bearer operator token).' },
  {
    name: 'sandbox',
    description: 'Sandbox only (KURUS_ENV=demo): play the bank, the buyer or the clock.',
  },
]

const IDEMPOTENCY_KEY = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description:
    'A UUID v4 of yours. A retry with the same key and payload gets the stored response ' +
    '(with `Idempotent-Replayed: true`); the same key with another payload is 409 SVC-GW-2001, ' +
    'while the first is still running 409 SVC-GW-2002. Keys are per API key and endpoint.',
  schema: { type: 'string', format: 'uuid' },
  example: '6f1c1b7e-4a8e-4c1e-9a55-3f2a5b7c9d10',
}

function errorResponse(description: string): Json {
  return {
    description,
    content: { 'application/json': { schema: { $ref: SCHEMAS + 'ErrorEnvelope' } } },
  }
}

const SHARED_RESPONSES: Record<string, Json> = {
  InternalError: errorResponse(
    'SVC-INT-9001: an unexpected error; the requestId is in the server log',
  ),
  ServiceUnavailable: errorResponse(
    'SVC-GW-1005: the service is busy (load shedding); SVC-INT-9002: it cannot reach its database. Retry after Retry-After',
  ),
}

// What a response without a description of its own says (@fastify/swagger's is "Default Response").
const STATUS_TEXT: Record<string, string> = {
  '200': 'OK',
  '201': 'Created',
  '202': 'Accepted: the work goes on in the background',
  '204': 'Done; no body',
  '400': 'Invalid request (SVC-VAL-…)',
  '401': 'Not authenticated (SVC-GW-10…)',
  '402': 'Declined: the envelope carries paymentId and declineCode',
  '403': 'Forbidden: scope, role or KYC (SVC-KYC-3101)',
  '404': 'Not found (another merchant’s object is a 404 too)',
  '409': 'Conflict: the object’s state or an Idempotency-Key in use (SVC-STATE-…, SVC-GW-200…)',
  '410': 'Gone',
  '413': 'Payload too large',
  '415': 'Unsupported media type',
  '429': 'Rate limited (SVC-GW-1004): see Retry-After',
}

const METHODS = new Set(['get', 'put', 'post', 'delete', 'patch', 'head', 'options'])

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** A schema's identity for the duplicate-title check: its annotations aside. */
function shape(schema: Json): string {
  const { description: _d, example: _e, examples: _x, ...rest } = schema
  return JSON.stringify(rest)
}

/**
 * Replaces every titled schema under `node` by a $ref to a component of that name, innermost
 * first (a Payment's Capture is a component of its own). Examples are data, not schemas.
 */
function hoist(node: unknown, components: Json, key?: string): unknown {
  if (Array.isArray(node)) return node.map((item) => hoist(item, components))
  if (!isObject(node)) return node
  if (key === 'example' || key === 'examples') return node
  const out: Json = {}
  for (const [k, v] of Object.entries(node)) {
    // `properties` maps names to schemas: a property called "example" is still a schema.
    out[k] = key === 'properties' ? hoist(v, components) : hoist(v, components, k)
  }
  const title = out['title']
  if (typeof title !== 'string' || key === 'properties') return out
  const { title: _t, ...schema } = out
  const existing = components[title]
  if (!isObject(existing)) {
    components[title] = schema
  } else if (shape(existing) !== shape(schema)) {
    throw new Error(`OpenAPI: two different schemas are titled ${title}`)
  } else if (existing['description'] !== schema['description']) {
    // One schema, described per use (the error envelope per status): the uses keep theirs.
    delete existing['description']
  }
  return { $ref: SCHEMAS + title }
}

/** Names of the properties with a default, which a client need not send. */
function defaulted(schema: Json): Set<string> {
  const properties = isObject(schema['properties']) ? schema['properties'] : {}
  return new Set(
    Object.entries(properties)
      .filter(([, sub]) => isObject(sub) && sub['default'] !== undefined)
      .map(([name]) => name),
  )
}

function finishRequestBody(body: Json): void {
  const content = isObject(body['content']) ? body['content'] : {}
  let required = false
  for (const media of Object.values(content)) {
    const schema = isObject(media) && isObject(media['schema']) ? media['schema'] : undefined
    if (!schema) continue
    if (Array.isArray(schema['required'])) {
      const optional = defaulted(schema)
      const left = (schema['required'] as string[]).filter((name) => !optional.has(name))
      if (left.length > 0) schema['required'] = left
      else delete schema['required']
    }
    // Not an object at all (a file upload's binary, a union), or one that needs some field
    // (minProperties): the body stays required.
    const isPlainObject = schema['type'] === 'object' && schema['anyOf'] === undefined
    const needsField = typeof schema['minProperties'] === 'number' && schema['minProperties'] > 0
    if (!isPlainObject || needsField || Array.isArray(schema['required'])) required = true
  }
  body['required'] = required
}

/**
 * @fastify/swagger moves a response schema's `examples` to its media type; a component keeps
 * them too, so the example shows wherever the object is. An error's example (one envelope)
 * stays on the component only: a 404 showing a validation error would mislead.
 */
function keepExampleOnComponent(media: Json, isError: boolean): void {
  const schema = media['schema']
  if (!isObject(schema) || typeof schema['title'] !== 'string' || media['example'] === undefined) {
    return
  }
  schema['examples'] ??= [media['example']]
  if (isError) delete media['example']
}

function hasExample(media: Json, components: Json): boolean {
  if (media['example'] !== undefined || media['examples'] !== undefined) return true
  let schema = media['schema']
  const ref = isObject(schema) ? schema['$ref'] : undefined
  if (typeof ref === 'string') schema = components[ref.split('/').pop() ?? '']
  return isObject(schema) && (Array.isArray(schema['examples']) || schema['example'] !== undefined)
}

/** Gives a JSON body without an example one made from its schema (openapi-examples.ts). */
function addExample(content: unknown, components: Json, request: boolean): void {
  const media = isObject(content) ? content['application/json'] : undefined
  if (!isObject(media) || !isObject(media['schema']) || hasExample(media, components)) return
  const example = exampleOf(media['schema'], { components, request })
  if (example !== undefined) media['example'] = example
}

function finishOperation(op: Json, components: Json): void {
  const parameters = Array.isArray(op['parameters']) ? (op['parameters'] as Json[]) : []
  for (const p of parameters) {
    if (p['in'] === 'query' && isObject(p['schema']) && p['schema']['default'] !== undefined) {
      p['required'] = false
    }
  }
  if (op['x-kurus-idempotency-key'] === true) {
    parameters.push({ $ref: '#/components/parameters/IdempotencyKey' })
  }
  delete op['x-kurus-idempotency-key']
  if (parameters.length > 0) op['parameters'] = parameters
  if (isObject(op['requestBody'])) {
    finishRequestBody(op['requestBody'])
    addExample(op['requestBody']['content'], components, true)
  }
  const responses = isObject(op['responses']) ? op['responses'] : {}
  for (const [status, response] of Object.entries(responses)) {
    if (!isObject(response)) continue
    if (response['description'] === 'Default Response') {
      response['description'] = STATUS_TEXT[status] ?? `HTTP ${status}`
    }
    const content = isObject(response['content']) ? response['content'] : {}
    if (status.startsWith('2')) addExample(content, components, false)
    for (const media of Object.values(content)) {
      if (isObject(media)) keepExampleOnComponent(media, status >= '400')
    }
  }
  responses['500'] ??= { $ref: '#/components/responses/InternalError' }
  responses['503'] ??= { $ref: '#/components/responses/ServiceUnavailable' }
  op['responses'] = responses
}

/** The document as served: see the comment at the top of this file. */
export function finishDocument(document: Json): Json {
  // A copy: the document is built from the routes' live schema objects.
  const doc = JSON.parse(JSON.stringify(document)) as Json
  const paths = isObject(doc['paths']) ? doc['paths'] : {}
  const components = isObject(doc['components']) ? doc['components'] : {}
  const schemas: Json = isObject(components['schemas']) ? components['schemas'] : {}
  for (const item of Object.values(paths)) {
    if (!isObject(item)) continue
    for (const [method, op] of Object.entries(item)) {
      if (METHODS.has(method) && isObject(op)) finishOperation(op, schemas)
    }
  }
  doc['paths'] = hoist(paths, schemas)
  // The shared 500 and 503 name it; every route's 4xx carry it already.
  if (!isObject(schemas['ErrorEnvelope'])) throw new Error('OpenAPI: no ErrorEnvelope in use')
  const ordered = Object.fromEntries(
    Object.keys(schemas)
      .sort()
      .map((name) => [name, schemas[name]]),
  )
  doc['components'] = {
    ...components,
    schemas: ordered,
    parameters: { IdempotencyKey: IDEMPOTENCY_KEY },
    responses: SHARED_RESPONSES,
  }
  const used = new Set<string>()
  for (const item of Object.values(paths)) {
    if (!isObject(item)) continue
    for (const op of Object.values(item)) {
      if (isObject(op) && Array.isArray(op['tags'])) for (const t of op['tags']) used.add(String(t))
    }
  }
  doc['tags'] = [
    ...TAGS.filter((t) => used.has(t.name)),
    ...[...used]
      .filter((name) => !TAGS.some((t) => t.name === name))
      .sort()
      .map((name) => ({ name })),
  ]
  return doc
}

/** @fastify/swagger's hooks: the per-route marker and the finishing pass. */
export const openapiTransforms: Pick<
  FastifyDynamicSwaggerOptions,
  'transform' | 'transformObject'
> = {
  transform: ({ schema, url, route }) => {
    if (route.config?.idempotencyKey !== true) return { schema, url }
    return { schema: { ...schema, 'x-kurus-idempotency-key': true }, url }
  },
  transformObject: (documents) => {
    if (!('openapiObject' in documents)) return documents.swaggerObject
    return finishDocument(documents.openapiObject)
  },
}
