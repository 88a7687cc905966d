import { Ajv, type ErrorObject, type Options, type ValidateFunction } from 'ajv'
import addFormats from 'ajv-formats'
import type { FastifyInstance } from 'fastify'

// Bodies are validated strictly: no type coercion ("100" is not an amount) and no silent
// removal of unknown fields (a misspelt field in a money request must be a 400, not ignored).
// Query strings and path params arrive as text, so only they get coercion.
function makeAjv(options: Options): Ajv {
  const ajv = new Ajv({
    allErrors: false,
    strict: false,
    removeAdditional: false,
    useDefaults: true,
    ...options,
  })
  addFormats.default(ajv)
  return ajv
}

// Unicode bidirectional controls (Trojan Source, CVE-2021-42574): text stored from one party
// and shown to another (a buyer's name on the merchant's dashboard, a line item on the
// buyer's invoice, a refund reason on a statement) could display in another order than it
// was written: U+202E then "gpj.exe" shows as "exe.jpg"; an account number's digit groups swap.
// Refused: the embeddings, overrides and PDF (U+202A–U+202E), the isolates (U+2066–U+2069),
// and also the implicit marks LRM, RLM and ALM (U+200E, U+200F, U+061C). The marks cannot
// open a reversed run, but next to digits they reorder them ("RLM 1234 5678" shows the groups
// swapped), which is the spoof that matters in payment text; written Arabic and Hebrew need
// none of them (the letters carry their own direction), so refusing costs almost nothing.
const BIDI_CONTROL = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/
export const BIDI_CONTROL_REASON =
  'must not contain Unicode bidirectional control characters (U+202A–U+202E, U+2066–U+2069, U+200E, U+200F, U+061C)'

/**
 * Where the first string holding a bidi control is, as a JSON Pointer (`/lineItems/0/name`);
 * a bad object key is reported at its object. Iterative: a deeply nested body must not
 * overflow the stack. Undefined when there is none.
 */
export function findBidiControl(value: unknown): string | undefined {
  const stack: [unknown, string][] = [[value, '']]
  for (let next = stack.pop(); next; next = stack.pop()) {
    const [node, path] = next
    if (typeof node === 'string') {
      if (BIDI_CONTROL.test(node)) return path
    } else if (Array.isArray(node)) {
      for (let i = node.length - 1; i >= 0; i--) stack.push([node[i], `${path}/${i}`])
    } else if (typeof node === 'object' && node !== null) {
      const entries = Object.entries(node as Record<string, unknown>)
      for (const [key] of entries) if (BIDI_CONTROL.test(key)) return path
      for (let i = entries.length - 1; i >= 0; i--) {
        const [key, child] = entries[i] ?? ['', undefined]
        stack.push([child, `${path}/${key}`])
      }
    }
  }
  return undefined
}

export type BodyValidator = ((data: unknown) => boolean) & { errors?: ErrorObject[] | null }

/**
 * The schema's validator, then the bidi check over every string of a valid body: one place
 * for every route, present and future, that takes a body (JSON or a form).
 */
function refusingBidiControls(validate: ValidateFunction): BodyValidator {
  const wrapped: BodyValidator = (data) => {
    if (!validate(data)) {
      wrapped.errors = validate.errors ?? null
      return false
    }
    const at = findBidiControl(data)
    if (at === undefined) {
      wrapped.errors = null
      return true
    }
    wrapped.errors = [
      {
        instancePath: at,
        schemaPath: '#',
        keyword: 'bidiControl',
        params: {},
        message: BIDI_CONTROL_REASON,
      },
    ]
    return false
  }
  return wrapped
}

const strictForInputs = makeAjv({ coerceTypes: false })
const compiledInputs = new WeakMap<object, BodyValidator>()

/**
 * The validator a route's body schema gets (the same strict Ajv, the same bidi check), for an
 * input that did not arrive as a JSON body: a dashboard form mapped to the API's input. Cached
 * per schema object. Its `errors` are Ajv issues, as a route's validation failure carries.
 */
export function bodyValidatorFor(schema: object): BodyValidator {
  let validate = compiledInputs.get(schema)
  if (!validate) {
    validate = refusingBidiControls(strictForInputs.compile(schema))
    compiledInputs.set(schema, validate)
  }
  return validate
}

export function installValidators(app: FastifyInstance): void {
  const strict = makeAjv({ coerceTypes: false })
  const coercing = makeAjv({ coerceTypes: 'array' })
  app.setValidatorCompiler(({ schema, httpPart }) => {
    if (httpPart === 'querystring' || httpPart === 'params') return coercing.compile(schema)
    const validate = strict.compile(schema)
    return httpPart === 'body' ? refusingBidiControls(validate) : validate
  })
}
