// fast-check arbitraries for the route fuzzer. Bodies are generated as JSON *text*, so they can
// carry number literals JSON.stringify never writes (1e999, -0, 30-digit integers) and
// duplicate keys. Generation follows the route's schema most of the time (so requests get past
// the first check and reach the handlers) and ignores it the rest of the time.
import fc from 'fast-check'
import type { JsonSchema } from './_routes.ts'

export const WEIRD_NUMBERS = [
  '0',
  '-0',
  '-1',
  '-100',
  '1.5',
  '0.1',
  '1e308',
  '1e999',
  '-1e999',
  '9007199254740993',
  '123456789012345678901234567890',
  '2147483648',
  '-2147483649',
  '10000000001',
  '4155650100416111',
  '1e-7',
]

export const WEIRD_STRINGS = [
  '',
  ' ',
  '\u0000',
  '\ud800',
  '\u202e\u0645\u0631\u062d\u0628\u0627',
  'İıŞşĞğÜüÖöÇç',
  '💳💳💳👩‍👩‍👧‍👦',
  '<script>alert(1)</script>',
  "' OR 1=1 --",
  '"; drop table payments; --',
  '${7*7}{{7*7}}',
  '../../../../etc/passwd',
  '%00%2e%2e%2f',
  'null',
  'undefined',
  'NaN',
  'true',
  '__proto__',
  'TRY',
  '4155650100416111',
  '4155 6501 0041 6111',
  'sk_demo_notarealsecretkey000000000000000000',
  'a'.repeat(5_000),
  '0'.repeat(300),
]

const DATE_TIMES = [
  '2026-02-30T00:00:00Z',
  '9999-12-31T23:59:59Z',
  '0000-01-01T00:00:00Z',
  '2026-11-22T10:00:00+99:00',
  '2026-11-22',
  'yesterday',
  '1970-01-01T00:00:00.000Z',
]

const URIS = [
  'javascript:alert(1)',
  'http://169.254.169.254/latest/meta-data/',
  'https://shop.example/return',
  'http://[::1]:3000/',
  'file:///etc/passwd',
  'https://',
  `https://example.com/${'a'.repeat(3_000)}`,
]

const EMAILS = ['a@b', 'a@b.co', '"x y"@example.com', 'x@[127.0.0.1]', 'ü@ü.com', '@example.com']

/** Nesting deep enough to hurt a recursive walker, small enough to stay under the body limit. */
export const DEEP_ARRAY = '['.repeat(20_000) + ']'.repeat(20_000)
export const DEEP_OBJECT = '{"a":'.repeat(20_000) + '1' + '}'.repeat(20_000)

const anyJson: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)), weight: 6 },
  { arbitrary: fc.constantFrom(...WEIRD_NUMBERS), weight: 2 },
  { arbitrary: fc.constantFrom(...WEIRD_STRINGS).map((s) => JSON.stringify(s)), weight: 2 },
  {
    arbitrary: fc.constantFrom(
      DEEP_ARRAY,
      DEEP_OBJECT,
      '{"__proto__":{"polluted":true}}',
      '{"constructor":{"prototype":{"polluted":true}}}',
    ),
    weight: 1,
  },
)

function stringValues(schema: JsonSchema): fc.Arbitrary<string> {
  const options: fc.Arbitrary<string>[] = [
    fc.string({ maxLength: 24 }),
    fc.string({ unit: 'binary', maxLength: 16 }),
    fc.string({ unit: 'grapheme', maxLength: 8 }),
    fc.constantFrom(...WEIRD_STRINGS),
  ]
  if (schema.maxLength !== undefined) {
    options.push(fc.constantFrom('x'.repeat(schema.maxLength), 'x'.repeat(schema.maxLength + 1)))
  }
  if (schema.format === 'date-time') {
    options.push(
      fc.constantFrom(...DATE_TIMES),
      fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
    )
  }
  if (schema.format === 'uri') options.push(fc.constantFrom(...URIS))
  if (schema.format === 'email') options.push(fc.constantFrom(...EMAILS))
  if (schema.pattern?.startsWith('^tok_'))
    options.push(fc.constantFrom('tok_0', 'tok_' + 'z'.repeat(60)))
  return fc.oneof(...options)
}

function numberText(schema: JsonSchema): fc.Arbitrary<string> {
  const min = schema.minimum ?? -1_000_000
  const max = schema.maximum ?? 1_000_000_000
  const edges = [min - 1, min, max, max + 1].map(String)
  return fc.oneof(
    fc
      .integer({
        min: Math.max(Number.MIN_SAFE_INTEGER, min - 10),
        max: Math.min(Number.MAX_SAFE_INTEGER, max + 10),
      })
      .map(String),
    fc.constantFrom(...edges),
    fc.constantFrom(...WEIRD_NUMBERS),
    fc.double({ noNaN: true, noDefaultInfinity: true }).map((d) => JSON.stringify(d)),
  )
}

function objectText(schema: JsonSchema, depth: number): fc.Arbitrary<string> {
  const required = new Set(schema.required ?? [])
  const props = Object.entries(schema.properties ?? {})
  const parts = props.map(([name, sub]) =>
    fc
      .option(jsonText(sub, depth + 1), { freq: required.has(name) ? 12 : 2 })
      .map((v) => (v === null ? null : `${JSON.stringify(name)}:${v}`)),
  )
  const extra = fc.option(
    fc
      .tuple(
        fc.oneof(
          fc.constantFrom('status', 'merchantId', 'refundAmount', 'id', '__proto__', 'createdAt'),
          fc.string({ maxLength: 12 }),
        ),
        anyJson,
      )
      .map(([k, v]) => `${JSON.stringify(k)}:${v}`),
    { freq: 4 },
  )
  return fc.tuple(fc.tuple(...parts), extra, fc.boolean()).map(([ps, x, duplicate]) => {
    const entries = ps.filter((p): p is string => p !== null)
    if (x !== null) entries.push(x)
    const first = entries[0]
    if (duplicate && first !== undefined) entries.push(first.replace(/:.*$/s, ':null'))
    return `{${entries.join(',')}}`
  })
}

/** A JSON text shaped by `schema` most of the time and by nothing the rest. */
export function jsonText(schema: JsonSchema | undefined, depth = 0): fc.Arbitrary<string> {
  if (!schema || depth > 4) return anyJson
  return fc.oneof(
    { arbitrary: typedText(schema, depth), weight: 5 },
    { arbitrary: anyJson, weight: 1 },
  )
}

function typedText(schema: JsonSchema, depth: number): fc.Arbitrary<string> {
  const branches = [...(schema.anyOf ?? []), ...(schema.oneOf ?? [])]
  if (branches.length > 0) return fc.oneof(...branches.map((b) => jsonText(b, depth + 1)))
  if (schema.enum && schema.enum.length > 0) {
    return fc.oneof(
      fc.constantFrom(...schema.enum).map((v) => JSON.stringify(v)),
      stringValues(schema).map((s) => JSON.stringify(s)),
    )
  }
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type
  if (type === 'object' || schema.properties) return objectText(schema, depth)
  if (type === 'array') {
    return fc.oneof(
      fc
        .array(jsonText(schema.items, depth + 1), { maxLength: 4 })
        .map((xs) => `[${xs.join(',')}]`),
      fc.constant(
        `[${Array.from({ length: (schema.maxItems ?? 100) + 1 }, () => '{}').join(',')}]`,
      ),
    )
  }
  if (type === 'integer' || type === 'number') return numberText(schema)
  if (type === 'string') return stringValues(schema).map((s) => JSON.stringify(s))
  if (type === 'boolean') return fc.constantFrom('true', 'false', '"true"', '1')
  return anyJson
}

/** A query string for `schema` (valid-looking values, garbage, duplicates, extras). */
export function queryText(schema: JsonSchema | undefined): fc.Arbitrary<string> {
  const props = Object.entries(schema?.properties ?? {})
  const value = (s: JsonSchema): fc.Arbitrary<string> =>
    fc.oneof(
      s.enum ? fc.constantFrom(...s.enum.map(String)) : stringValues(s),
      fc.constantFrom(...WEIRD_NUMBERS),
      fc.integer().map(String),
    )
  const parts = props.map(([name, s]) =>
    fc
      .option(fc.array(value(s), { minLength: 1, maxLength: 2 }), { freq: 2 })
      .map((vs) => (vs === null ? [] : vs.map((v) => [name, v] as [string, string]))),
  )
  const extra = fc.option(fc.tuple(fc.string({ maxLength: 8 }), fc.string({ maxLength: 8 })), {
    freq: 4,
  })
  return fc.tuple(fc.tuple(...parts), extra).map(([ps, x]) => {
    const q = new URLSearchParams()
    for (const pairs of ps) for (const [k, v] of pairs) q.append(k, v)
    if (x) q.append(x[0], x[1])
    const text = q.toString()
    return text ? `?${text}` : ''
  })
}

/** A path parameter: a real id, a made-up one, or garbage. */
export function paramValue(real: string | undefined): fc.Arbitrary<string> {
  const options: fc.Arbitrary<string>[] = [
    fc.string({ minLength: 1, maxLength: 24 }),
    fc.string({ unit: 'binary', minLength: 1, maxLength: 12 }),
    fc.constantFrom(...WEIRD_STRINGS.filter((s) => s.length > 0)),
    fc.constantFrom(
      'pay_0123456789abcdefghjkmnpq',
      '00000000-0000-4000-8000-000000000000',
      'x'.repeat(201),
    ),
  ]
  if (real !== undefined)
    options.push(fc.constant(real), fc.constant(real.toUpperCase()), fc.constant(`${real} `))
  return fc.oneof(...options)
}
