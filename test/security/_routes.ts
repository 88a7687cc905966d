// The app's route table, read from the running Fastify instance (never a hand-kept list), so
// a route another module adds is fuzzed, tenancy-checked and header-checked automatically.
import type { FastifyInstance } from 'fastify'
import fc from 'fast-check'

/** A JSON Schema as @fastify/swagger prints it (only the parts the suite reads). */
export interface JsonSchema {
  type?: string | string[]
  properties?: Record<string, JsonSchema>
  required?: string[]
  additionalProperties?: boolean | JsonSchema
  propertyNames?: JsonSchema
  items?: JsonSchema
  anyOf?: JsonSchema[]
  oneOf?: JsonSchema[]
  enum?: unknown[]
  const?: unknown
  format?: string
  pattern?: string
  minimum?: number
  maximum?: number
  minLength?: number
  maxLength?: number
  minItems?: number
  maxItems?: number
  default?: unknown
}

/**
 * - signed: `/v1/...` behind X-Api-Key / X-Timestamp / X-Signature
 * - public: unsigned, the id in the path is the bearer (checkout, public status, portal)
 * - dashboard: Bearer dashboard JWT; `dashboard-login` is the one open dashboard route
 * - operator: Bearer operator token (platform staff)
 * - page: hosted HTML pages and their static assets
 * - infra: health, metrics and the API reference
 * - app: the merchant dashboard's web pages under /dashboard (cookie session, CSRF, roles;
 *   their rules are tested in test/dashboard/)
 */
export type RouteClass =
  'signed' | 'public' | 'dashboard' | 'dashboard-login' | 'operator' | 'page' | 'infra' | 'app'

export interface RouteInfo {
  /** `POST /v1/payments/{id}/capture`: the key of the tenancy catalog. */
  key: string
  method: string
  /** OpenAPI style: `/v1/payments/{id}`. */
  path: string
  params: string[]
  /** The path parameters' schemas (documented routes). */
  paramSchemas: Record<string, JsonSchema>
  cls: RouteClass | undefined
  /** In the OpenAPI document (hidden routes are not). */
  documented: boolean
  body: JsonSchema | undefined
  /** The request body's documented media types (`application/json`, `multipart/form-data`). */
  consumes: string[]
  query: JsonSchema | undefined
  /** Declared success statuses with their response schemas. */
  responses: Record<string, JsonSchema | undefined>
}

// /js/: Kuruš.js and its card-field page (framed by the merchant's allowed origins).
const PAGE_PREFIXES = ['/s/', '/invoice/', '/subscription/', '/l/', '/3ds/', '/dev/', '/js/']
const INFRA = new Set(['/healthz', '/readyz', '/metrics', '/openapi.json'])

export function classify(path: string): RouteClass | undefined {
  if (path.startsWith('/operator/')) return 'operator'
  if (path === '/dashboard' || path.startsWith('/dashboard/')) return 'app'
  if (path === '/v1/dashboard/login' || path === '/v1/dashboard/login/two-factor') {
    return 'dashboard-login'
  }
  if (path.startsWith('/v1/dashboard/') || path.startsWith('/v1/stores/')) return 'dashboard'
  if (path.startsWith('/v1/public/') || /^\/v1\/payments\/\{[^}]+\}\/public-status$/.test(path)) {
    return 'public'
  }
  if (path.startsWith('/v1/')) return 'signed'
  if (INFRA.has(path) || path === '/docs' || path.startsWith('/docs/')) return 'infra'
  if (PAGE_PREFIXES.some((p) => path.startsWith(p)) || /^\/[a-z-]*assets\//.test(path)) {
    return 'page'
  }
  return undefined
}

/**
 * Parses `printRoutes({ commonPrefix: false })`: a tree whose lines are `├── segment (GET, HEAD)`;
 * a node's full path is its parent's plus its own segment.
 */
export function parsePrintedRoutes(tree: string): { method: string; path: string }[] {
  const out: { method: string; path: string }[] = []
  const stack: string[] = []
  for (const line of tree.split('\n')) {
    const m = /^((?:│ {3}| {4})*)(?:├── |└── )(.*)$/u.exec(line)
    if (!m) continue
    const depth = (m[1] ?? '').length / 4
    const rest = m[2] ?? ''
    const withMethods = /^(.*?) \(([A-Z, ]+)\)$/.exec(rest)
    const segment = withMethods ? (withMethods[1] ?? '') : rest
    const full = (depth > 0 ? (stack[depth - 1] ?? '') : '') + segment
    stack[depth] = full
    stack.length = depth + 1
    if (!withMethods) continue
    for (const method of (withMethods[2] ?? '').split(', ')) out.push({ method, path: full })
  }
  return out
}

interface OpenApiOperation {
  parameters?: { in: string; name: string; schema?: JsonSchema; required?: boolean }[]
  requestBody?: { content?: Record<string, { schema?: JsonSchema }> }
  responses?: Record<string, { content?: Record<string, { schema?: JsonSchema }> }>
}

function queryFromParameters(op: OpenApiOperation): JsonSchema | undefined {
  const query = (op.parameters ?? []).filter((p) => p.in === 'query')
  if (query.length === 0) return undefined
  return {
    type: 'object',
    properties: Object.fromEntries(query.map((p) => [p.name, p.schema ?? {}])),
    required: query
      .filter((p) => p.required === true && p.schema?.default === undefined)
      .map((p) => p.name),
  }
}

/**
 * The document with every `#/components/…` $ref replaced by what it names: the suite reads
 * each route's schemas whole (the served document shares them as components, issue 28).
 */
function inlineRefs(node: unknown, doc: unknown, depth = 0): unknown {
  if (depth > 64) throw new Error('OpenAPI: $ref nesting deeper than 64 (a cycle?)')
  if (Array.isArray(node)) return node.map((item) => inlineRefs(item, doc, depth))
  if (typeof node !== 'object' || node === null) return node
  const ref = (node as { $ref?: unknown }).$ref
  if (typeof ref === 'string' && ref.startsWith('#/')) {
    let target: unknown = doc
    for (const part of ref.slice(2).split('/')) target = (target as Record<string, unknown>)[part]
    if (target === undefined) throw new Error(`OpenAPI: unresolved ${ref}`)
    return inlineRefs(target, doc, depth + 1)
  }
  return Object.fromEntries(
    Object.entries(node).map(([key, value]) => [key, inlineRefs(value, doc, depth)]),
  )
}

/** Every route of the app (HEAD twins of GET routes left out), classified. */
export function routeTable(fastify: FastifyInstance): RouteInfo[] {
  const served = fastify.swagger()
  const doc = inlineRefs(served, served) as {
    paths?: Record<string, Record<string, OpenApiOperation>>
  }
  const paths = doc.paths ?? {}
  const printed = parsePrintedRoutes(fastify.printRoutes({ commonPrefix: false }))
  const seen = new Set<string>()
  const routes: RouteInfo[] = []
  for (const { method, path: raw } of printed) {
    if (method === 'HEAD' || method === 'OPTIONS') continue
    const path = raw.replace(/:([A-Za-z0-9_]+)/g, '{$1}')
    const key = `${method} ${path}`
    if (seen.has(key)) continue
    seen.add(key)
    const op = paths[path]?.[method.toLowerCase()]
    const responses: Record<string, JsonSchema | undefined> = {}
    for (const [status, r] of Object.entries(op?.responses ?? {})) {
      if (status.startsWith('2')) responses[status] = r.content?.['application/json']?.schema
    }
    routes.push({
      key,
      method,
      path,
      params: [...path.matchAll(/\{([^}]+)\}/g)].map((x) => x[1] ?? ''),
      paramSchemas: Object.fromEntries(
        (op?.parameters ?? []).filter((p) => p.in === 'path').map((p) => [p.name, p.schema ?? {}]),
      ),
      cls: classify(path),
      documented: op !== undefined,
      body: op?.requestBody?.content?.['application/json']?.schema,
      consumes: Object.keys(op?.requestBody?.content ?? {}),
      query: op ? queryFromParameters(op) : undefined,
      responses,
    })
  }
  return routes.sort((a, b) => a.key.localeCompare(b.key))
}

/** encodeURIComponent, except that a lone surrogate goes out as invalid UTF-8 (%ED%A0%80). */
export function encodeParam(value: string): string {
  try {
    return encodeURIComponent(value)
  } catch {
    return Array.from(value)
      .map((ch) => (/^[\ud800-\udfff]$/.test(ch) ? '%ED%A0%80' : encodeURIComponent(ch)))
      .join('')
  }
}

/** Substitutes `{name}` placeholders, percent-encoding each value. */
export function fillPath(path: string, params: Record<string, string>): string {
  return path.replace(/\{([^}]+)\}/g, (_, name: string) => {
    const value = params[name]
    if (value === undefined) throw new Error(`no value for {${name}} in ${path}`)
    return encodeParam(value)
  })
}

export const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])

/** Is this object schema a free-form map on purpose (metadata, extraData)? */
export function isDeliberateMap(schema: JsonSchema): boolean {
  return (
    schema.propertyNames !== undefined ||
    (typeof schema.additionalProperties === 'object' && schema.properties === undefined)
  )
}

/** Paths (`body.filters`) of object schemas that accept fields they do not name. */
export function openObjects(schema: JsonSchema | undefined, at = 'body'): string[] {
  if (!schema) return []
  const found: string[] = []
  const isObject = schema.type === 'object' || schema.properties !== undefined
  if (isObject && !isDeliberateMap(schema) && schema.additionalProperties !== false) found.push(at)
  for (const [name, sub] of Object.entries(schema.properties ?? {})) {
    found.push(...openObjects(sub, `${at}.${name}`))
  }
  if (schema.items) found.push(...openObjects(schema.items, `${at}[]`))
  for (const branch of [...(schema.anyOf ?? []), ...(schema.oneOf ?? [])]) {
    found.push(...openObjects(branch, at))
  }
  return found
}

// ---------------------------------------------------------------- schema examples

const TEXT_CANDIDATES = ['Ödeme', 'x1', 'a']

function exampleString(schema: JsonSchema): string {
  const min = schema.minLength ?? 0
  const max = schema.maxLength ?? Infinity
  const fits = (s: string) =>
    s.length >= min &&
    s.length <= max &&
    (schema.pattern === undefined || new RegExp(schema.pattern, 'u').test(s))
  switch (schema.format) {
    case 'date-time':
      return new Date(Date.now() + 30 * 86_400_000).toISOString()
    case 'date':
      return '2030-01-01'
    case 'email':
      return 'buyer@example.com'
    case 'uri':
      return 'https://shop.example/r'
    case 'uuid':
      return '00000000-0000-4000-8000-000000000000'
    default:
      break
  }
  const padded = TEXT_CANDIDATES.map((s) => s.padEnd(min, 'x'))
  const plain = padded.find(fits)
  if (plain !== undefined) return plain
  if (schema.pattern !== undefined) {
    const samples = fc.sample(fc.stringMatching(new RegExp(schema.pattern)), {
      numRuns: 200,
      seed: 1,
    })
    const sampled = samples.find(fits)
    if (sampled !== undefined) return sampled
  }
  throw new Error(`no example string for ${JSON.stringify(schema)}`)
}

/**
 * A value the schema accepts, with every optional property filled in: a body that passes
 * validation without the setup a real request would need (validation runs before handlers).
 */
export function exampleOf(schema: JsonSchema | undefined): unknown {
  if (!schema) return {}
  if (schema.const !== undefined) return schema.const
  if (schema.enum && schema.enum.length > 0) return schema.enum[0]
  const branch = schema.anyOf?.[0] ?? schema.oneOf?.[0]
  if (branch) return exampleOf(branch)
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') : schema.type
  if (type === 'object' || schema.properties) {
    const out: Record<string, unknown> = {}
    for (const [name, sub] of Object.entries(schema.properties ?? {})) out[name] = exampleOf(sub)
    if (schema.properties === undefined && typeof schema.additionalProperties === 'object') {
      out['note'] = exampleOf(schema.additionalProperties)
    }
    return out
  }
  if (type === 'array') {
    return Array.from({ length: Math.max(1, schema.minItems ?? 0) }, () => exampleOf(schema.items))
  }
  if (type === 'integer' || type === 'number') return schema.minimum ?? 1
  if (type === 'boolean') return true
  if (type === 'string') return exampleString(schema)
  return null
}

export interface StringLeaf {
  /** JSON Pointer: `/lineItems/0/name`. */
  pointer: string
  value: string
  schema: JsonSchema
}

/** Every string in `value` (as exampleOf built it from `schema`) with its own schema. */
export function stringLeaves(
  schema: JsonSchema | undefined,
  value: unknown,
  at = '',
): StringLeaf[] {
  if (!schema) return []
  const branch = schema.anyOf?.[0] ?? schema.oneOf?.[0]
  if (branch && schema.enum === undefined && schema.const === undefined) {
    return stringLeaves(branch, value, at)
  }
  if (typeof value === 'string') return [{ pointer: at, value, schema }]
  if (Array.isArray(value))
    return value.flatMap((v, i) => stringLeaves(schema.items, v, `${at}/${i}`))
  if (typeof value === 'object' && value !== null) {
    return Object.entries(value).flatMap(([name, v]) => {
      const sub =
        schema.properties?.[name] ??
        (typeof schema.additionalProperties === 'object' ? schema.additionalProperties : undefined)
      return stringLeaves(sub, v, `${at}/${name}`)
    })
  }
  return []
}
