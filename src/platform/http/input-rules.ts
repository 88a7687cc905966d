import type { AppError } from '../errors.ts'
import { toAppError } from './errors.ts'
import { bodyValidatorFor } from './validation.ts'

// One set of input rules for every door (issue 36, decision 0036): an input built from a
// dashboard form (lira typed as text, line items in rows) is checked against the very TypeBox
// schema the API's route declares for its body, by the same validator (strict Ajv, formats,
// patterns, integer maxima, the bidi-control refusal). The answer is the API's 400, field by
// field, for the page to show in its own words.

/** Undefined when `input` satisfies `schema`; else the 400 the API would have answered. */
export function inputError(schema: object, input: unknown): AppError | undefined {
  const validate = bodyValidatorFor(schema)
  if (validate(input)) return undefined
  const failure = Object.assign(new Error('request is invalid'), {
    validation: validate.errors ?? [],
    validationContext: 'body',
  })
  return toAppError(failure)
}
