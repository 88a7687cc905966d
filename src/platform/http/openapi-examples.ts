// Examples for the OpenAPI document where a route's schema gives none (issue 38): every JSON
// request body and every JSON 2xx answer shows one in the reference, and "Try it" starts
// from a body the server accepts. Built from the schema's own annotations — a property's
// `examples`, `default`, `const`, the first `enum` value, its format and bounds — so an
// example says nothing the schema does not. A request example carries the required
// properties and those with an example of their own (optional switches such as a sandbox
// `testClockId` stay out: a made-up id would only be refused); an answer carries them all.
// test/docs/openapi-examples.test.ts validates every example against its schema.

type Json = Record<string, unknown>

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** What a string of this format looks like. */
const FORMATS: Record<string, string> = {
  'date-time': '2026-11-28T10:00:00.000Z',
  date: '2026-11-28',
  email: 'ayse@example.com',
  uri: 'https://shop.example.com/orders/1001',
  url: 'https://shop.example.com/orders/1001',
  uuid: '6f1c1b7e-4a8e-4c1e-9a55-3f2a5b7c9d10',
  ipv4: '203.0.113.10',
  binary: '',
}

const ID_TAIL = '0123456789abcdefghjkmnpq'

export interface ExampleContext {
  /** The document's components, for `$ref`s. */
  components: Json
  /** Request bodies leave out optional properties without an example. */
  request: boolean
}

function given(schema: Json): { value: unknown } | undefined {
  if (Array.isArray(schema['examples']) && schema['examples'].length > 0) {
    return { value: schema['examples'][0] }
  }
  for (const key of ['example', 'const', 'default'] as const) {
    if (schema[key] !== undefined) return { value: schema[key] }
  }
  if (Array.isArray(schema['enum']) && schema['enum'].length > 0) {
    return { value: schema['enum'].find((v) => v !== null) ?? schema['enum'][0] }
  }
  return undefined
}

function stringExample(schema: Json, name: string | undefined): string {
  const format = typeof schema['format'] === 'string' ? FORMATS[schema['format']] : undefined
  if (format !== undefined) return format
  const pattern = typeof schema['pattern'] === 'string' ? schema['pattern'] : ''
  // An id pattern such as ^cus_[0-9a-z]+$: the prefix and a plausible tail.
  const prefix = /^\^([a-z]+_)/.exec(pattern)?.[1]
  const min = typeof schema['minLength'] === 'number' ? schema['minLength'] : 0
  const max = typeof schema['maxLength'] === 'number' ? schema['maxLength'] : 64
  let text = prefix
    ? prefix + ID_TAIL
    : name && /currency/i.test(name)
      ? 'TRY'
      : name && /^(externalId|orderId|reference)$/.test(name)
        ? 'order-1001'
        : name === 'otp'
          ? '123456'
          : name && /name/i.test(name)
            ? 'Ayşe Yılmaz'
            : (name ?? 'text')
  while (text.length < min) text += 'x'
  return text.slice(0, max)
}

function numberExample(schema: Json, name: string | undefined): number {
  const min = typeof schema['minimum'] === 'number' ? schema['minimum'] : undefined
  const exclusiveMin =
    typeof schema['exclusiveMinimum'] === 'number' ? schema['exclusiveMinimum'] + 1 : undefined
  const max = typeof schema['maximum'] === 'number' ? schema['maximum'] : undefined
  // Amounts are kuruş: 150,00 TL reads as one.
  let value = name && /amount|total|fee|balance/i.test(name) ? 15000 : 1
  const low = min ?? exclusiveMin
  if (low !== undefined && value < low) value = low
  if (max !== undefined && value > max) value = max
  return value
}

function typeOf(schema: Json): string | undefined {
  const type = schema['type']
  if (typeof type === 'string') return type
  if (Array.isArray(type)) return type.find((t) => t !== 'null') as string | undefined
  if (isObject(schema['properties'])) return 'object'
  return undefined
}

/** An example value for `schema`, or undefined when nothing sensible can be said. */
export function exampleOf(
  schema: unknown,
  context: ExampleContext,
  name?: string,
  depth = 0,
): unknown {
  if (!isObject(schema) || depth > 8) return undefined
  const ref = schema['$ref']
  if (typeof ref === 'string') {
    const target = context.components[ref.split('/').pop() ?? '']
    return exampleOf(target, context, name, depth + 1)
  }
  const known = given(schema)
  if (known) return known.value
  for (const key of ['anyOf', 'oneOf'] as const) {
    const branches: unknown = schema[key]
    if (Array.isArray(branches)) {
      const list = branches as unknown[]
      const branch = list.find((b) => isObject(b) && b['type'] !== 'null') ?? list[0]
      return exampleOf(branch, context, name, depth + 1)
    }
  }
  if (Array.isArray(schema['allOf'])) {
    const parts = schema['allOf'].map((part) => exampleOf(part, context, name, depth + 1))
    return Object.assign({}, ...parts.filter(isObject)) as Json
  }
  switch (typeOf(schema)) {
    case 'object':
      return objectExample(schema, context, depth)
    case 'array': {
      const item = exampleOf(schema['items'], context, name, depth + 1)
      const count = typeof schema['minItems'] === 'number' ? Math.max(1, schema['minItems']) : 1
      return item === undefined ? [] : Array.from({ length: count }, () => item)
    }
    case 'string':
      return stringExample(schema, name)
    case 'integer':
    case 'number':
      return numberExample(schema, name)
    case 'boolean':
      return false
    case 'null':
      return null
    default:
      // Any JSON: the risk rules' and routing's conditions are JSON Logic.
      return name === 'condition' ? { '==': [{ var: 'card.brand' }, 'visa'] } : {}
  }
}

function hasOwnExample(schema: unknown): boolean {
  return isObject(schema) && (Array.isArray(schema['examples']) || schema['example'] !== undefined)
}

function objectExample(schema: Json, context: ExampleContext, depth: number): Json {
  const properties = isObject(schema['properties']) ? schema['properties'] : {}
  const required = new Set(
    Array.isArray(schema['required']) ? (schema['required'] as string[]) : [],
  )
  const out: Json = {}
  for (const [key, sub] of Object.entries(properties)) {
    if (context.request && !required.has(key) && !hasOwnExample(sub)) continue
    const value = exampleOf(sub, context, key, depth + 1)
    if (value !== undefined) out[key] = value
  }
  // A body that must name something (a PATCH's minProperties): its first properties.
  const least = typeof schema['minProperties'] === 'number' ? schema['minProperties'] : 0
  for (const [key, sub] of Object.entries(properties)) {
    if (Object.keys(out).length >= least) break
    if (key in out) continue
    const value = exampleOf(sub, context, key, depth + 1)
    if (value !== undefined) out[key] = value
  }
  return out
}
