// Goal: the served OpenAPI document (/openapi.json) is one a generated client can trust
// (issue 28): every operation named, summarised, described (issue 38), tagged and with its
// error responses; shared objects as components; pagination and filters optional; and a body
// the document calls optional really may be left out. Method: read the document from the
// running app, check each operation, then send every optional-body operation without a body
// over HTTP (with the caller's real credentials, placeholder ids) and require that validation
// lets it through.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { Ajv2020 } from 'ajv/dist/2020.js'
import addFormats from 'ajv-formats'
import { OPERATOR_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts'
import { classify, exampleOf, fillPath, type JsonSchema } from '../security/_routes.ts'

interface Operation {
  operationId?: string
  summary?: string
  description?: string
  tags?: string[]
  parameters?: (
    { $ref: string } | { in: string; name: string; required?: boolean; schema?: JsonSchema }
  )[]
  requestBody?: {
    required?: boolean
    content: Record<string, { schema: JsonSchema & { $ref?: string } }>
  }
  responses: Record<
    string,
    { $ref?: string; content?: Record<string, { schema: { $ref?: string } }> }
  >
}
interface Document {
  tags: { name: string; description?: string }[]
  paths: Record<string, Record<string, Operation>>
  components: { schemas: Record<string, JsonSchema>; parameters: Record<string, unknown> }
}

async function served(h: TestApp): Promise<Document> {
  const res = await fetch(`${h.url}/openapi.json`)
  assert.equal(res.status, 200)
  return (await res.json()) as Document
}

function operations(doc: Document): { method: string; path: string; op: Operation }[] {
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, op]) => ({ method: method.toUpperCase(), path, op })),
  )
}

const ENVELOPE = '#/components/schemas/ErrorEnvelope'
const SHARED_ERRORS = new Set([
  '#/components/responses/InternalError',
  '#/components/responses/ServiceUnavailable',
])

test('every operation has a unique operationId, a summary, a description, a declared tag and its error responses', async (t) => {
  const h = await startTestApp(t)
  const doc = await served(h)
  const ops = operations(doc)
  assert.ok(ops.length > 100, `only ${ops.length} operations`)
  const declared = new Set(doc.tags.map((tag) => tag.name))
  const ids = new Map<string, string>()
  for (const { method, path, op } of ops) {
    const where = `${method} ${path}`
    assert.match(
      op.operationId ?? '',
      /^[a-z][A-Za-z0-9]*(\.[a-z][A-Za-z0-9]*)+$/,
      `${where}: operationId`,
    )
    const id = op.operationId ?? ''
    assert.equal(ids.get(id), undefined, `${where}: operationId ${id} also on ${ids.get(id)}`)
    ids.set(id, where)
    assert.ok((op.summary ?? '').length > 0, `${where}: summary`)
    // What an integrator needs beyond the summary: state, caller, errors (issue 38).
    assert.ok((op.description ?? '').trim().length > 0, `${where}: description`)
    assert.ok((op.tags ?? []).length > 0, `${where}: tag`)
    for (const tag of op.tags ?? []) assert.ok(declared.has(tag), `${where}: tag ${tag} undeclared`)
    const errors = Object.keys(op.responses).filter((s) => s >= '400')
    assert.ok(
      errors.some((s) => s.startsWith('4')),
      `${where}: no 4xx response`,
    )
    assert.ok(errors.includes('500'), `${where}: no 500 response`)
    for (const status of errors) {
      const r = op.responses[status]
      const ref = r?.$ref ?? r?.content?.['application/json']?.schema.$ref
      assert.ok(
        ref === ENVELOPE || SHARED_ERRORS.has(ref ?? ''),
        `${where} ${status}: not the envelope`,
      )
    }
    // Idempotency-Key: on exactly the signed API's state-changing routes (the gateway's rule).
    const idempotent = (op.parameters ?? []).some(
      (p) => '$ref' in p && p.$ref === '#/components/parameters/IdempotencyKey',
    )
    const signedMutation = classify(path) === 'signed' && method !== 'GET'
    assert.equal(idempotent, signedMutation, `${where}: Idempotency-Key`)
  }
})

test('shared objects are components, statuses are enums, list parameters are optional', async (t) => {
  const h = await startTestApp(t)
  const doc = await served(h)
  for (const name of [
    'ErrorEnvelope',
    'Payment',
    'Refund',
    'Transaction',
    'Customer',
    'Subscription',
    'Invoice',
    'Payout',
    'Chargeback',
    'WebhookEvent',
  ]) {
    assert.ok(doc.components.schemas[name], `component ${name}`)
  }
  for (const name of [
    'PaymentStatus',
    'RefundStatus',
    'PayoutStatus',
    'ChargebackStatus',
    'SubscriptionStatus',
    'InvoiceStatus',
  ]) {
    const values = doc.components.schemas[name]?.enum ?? []
    assert.ok(values.length > 1, `${name} is an enum`)
  }
  // Each component's examples are instances of it (what a reader copies must be valid).
  const ajv = new Ajv2020({ strict: false, allErrors: true })
  addFormats.default(ajv)
  ajv.addSchema(doc, 'openapi.json')
  let examples = 0
  for (const [name, schema] of Object.entries(doc.components.schemas)) {
    for (const example of (schema as { examples?: unknown[] }).examples ?? []) {
      const validate = ajv.getSchema(`openapi.json#/components/schemas/${name}`)
      assert.ok(validate?.(example), `${name} example: ${ajv.errorsText(validate?.errors)}`)
      examples++
    }
  }
  assert.ok(examples >= 8, `${examples} component examples`)
  const payment =
    doc.paths['/v1/payments/{id}']?.['get']?.responses['200']?.content?.['application/json']
  assert.equal(payment?.schema.$ref, '#/components/schemas/Payment')
  assert.ok((payment as { example?: unknown }).example, 'the Payment response has an example')
  for (const { method, path, op } of operations(doc)) {
    for (const p of op.parameters ?? []) {
      if ('$ref' in p || p.in !== 'query') continue
      if (['limit', 'cursor', 'startingAfter', 'from', 'to', 'status'].includes(p.name)) {
        assert.notEqual(p.required, true, `${method} ${path}: ?${p.name} is optional`)
      }
    }
  }
})

/** Credentials for each kind of caller, and the request that sends no body. */
async function callers(h: TestApp) {
  const merchant = await h.newMerchant()
  const login = await fetch(`${h.url}/v1/dashboard/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify((merchant as unknown as { dashboard: unknown }).dashboard),
  })
  assert.equal(login.status, 200)
  const { token } = (await login.json()) as { token: string }
  return async (
    method: string,
    path: string,
  ): Promise<{ status: number; body: { code?: string } }> => {
    const cls = classify(path)
    if (cls === 'signed') {
      const res = await merchant.client.request<{ code?: string }>(method, path)
      return { status: res.status, body: res.body }
    }
    const bearer = cls === 'operator' ? OPERATOR_TOKEN : cls === 'dashboard' ? token : undefined
    const res = await fetch(h.url + path, {
      method,
      headers: bearer ? { authorization: `Bearer ${bearer}` } : {},
    })
    const text = await res.text()
    return { status: res.status, body: text ? (JSON.parse(text) as { code?: string }) : {} }
  }
}

test('a body the document calls optional may be left out (no SVC-VAL on a bodiless request)', async (t) => {
  const h = await startTestApp(t)
  const doc = await served(h)
  const send = await callers(h)
  const optional = operations(doc).filter(
    ({ op }) => op.requestBody && op.requestBody.required === false,
  )
  assert.ok(optional.length >= 28, `only ${optional.length} optional bodies`)
  for (const { method, path, op } of optional) {
    const params: Record<string, string> = {}
    for (const p of op.parameters ?? []) {
      if (!('$ref' in p) && p.in === 'path') params[p.name] = String(exampleOf(p.schema))
    }
    const res = await send(method, fillPath(path, params))
    assert.ok(
      res.status !== 400 || !(res.body.code ?? '').startsWith('SVC-VAL'),
      `${method} ${path} without a body: ${res.status} ${JSON.stringify(res.body)}`,
    )
    assert.ok(res.status < 500, `${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`)
  }
})

// Issue 36, finding 9: the document says what the routes require. An upload needs its file
// part; a rule update needs at least one field (minProperties), so its body is required.
test('POST /v1/files requires its file part; PATCH /v1/risk/rules/{id} requires a body', async (t) => {
  const h = await startTestApp(t)
  const doc = await served(h)
  const upload = doc.paths['/v1/files']?.['post']?.requestBody
  assert.equal(upload?.required, true)
  const form = upload?.content['multipart/form-data']?.schema
  assert.ok(form?.required?.includes('file'), JSON.stringify(form))
  assert.equal(form?.properties?.['file']?.format, 'binary')
  const patch = doc.paths['/v1/risk/rules/{id}']?.['patch']?.requestBody
  assert.equal(patch?.required, true)
  const rule = patch?.content['application/json']?.schema
  assert.equal((rule as { minProperties?: number } | undefined)?.minProperties, 1)
})
