import { Ajv, type Options } from 'ajv'
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

export function installValidators(app: FastifyInstance): void {
  const strict = makeAjv({ coerceTypes: false })
  const coercing = makeAjv({ coerceTypes: 'array' })
  app.setValidatorCompiler(({ schema, httpPart }) =>
    (httpPart === 'querystring' || httpPart === 'params' ? coercing : strict).compile(schema),
  )
}
