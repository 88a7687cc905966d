// Programmer errors (broken invariants) as opposed to operating errors (AppError).
// They become a 500 SVC-INT-9001 and are logged loudly.
export class AssertionError extends Error {
  override name = 'AssertionError'
}

export function assert(condition: unknown, message: string): asserts condition {
  if (!condition) throw new AssertionError(message)
}
