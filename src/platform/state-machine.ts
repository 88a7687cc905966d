import { assert } from './assert.ts'

/**
 * A stateful entity's lifecycle as data: for each status, the statuses that may follow it.
 * Services ask it whether a move is allowed (to answer 409 before doing any work), and the
 * repository's conditional UPDATE takes its `WHERE status IN (…)` from it, so one table is
 * the rule: a move the table does not list cannot be written, whatever a service asks for.
 * A status that may follow itself (a second partial capture) lists itself.
 */
export interface StateMachine<S extends string> {
  readonly transitions: Readonly<Record<S, readonly S[]>>
  /** Every status, in the table's order (an enum in the API document, a filter's choices). */
  readonly statuses: readonly S[]
  /** Whether `value` is one of the table's statuses (stored JSON, a query string). */
  has(value: string): value is S
  /** Whether `to` may follow `from`. */
  can(from: S, to: S): boolean
  /** Whether nothing may follow `status`. */
  isFinal(status: S): boolean
  /** Every status `to` may be entered from. */
  sourcesOf(to: S): readonly S[]
  /**
   * The `WHERE status IN (…)` of a conditional update into `to`: of the statuses the caller
   * expects the row to be in (`expected`, default all), those the table allows into `to`.
   * Asking for a move the table never allows from any of them is a programming error.
   */
  guard(to: S, expected?: readonly S[]): readonly S[]
  /**
   * Asserts a status written under the row's lock (no conditional update to refuse it);
   * writing the status the row already has is bookkeeping, not a move.
   */
  assertMove(from: S, to: S, what: string): void
}

export function stateMachine<S extends string>(
  transitions: Readonly<Record<S, readonly S[]>>,
): StateMachine<S> {
  const statuses = Object.keys(transitions) as S[]
  const sources = new Map<S, S[]>()
  for (const to of statuses) {
    sources.set(
      to,
      statuses.filter((from) => transitions[from].includes(to)),
    )
  }
  const can = (from: S, to: S): boolean => transitions[from].includes(to)
  return {
    transitions,
    statuses,
    has: (value): value is S => statuses.some((status) => status === value),
    can,
    isFinal: (status) => transitions[status].length === 0,
    sourcesOf: (to) => sources.get(to) ?? [],
    guard(to, expected) {
      const allowed = (sources.get(to) ?? []).filter(
        (from) => expected === undefined || expected.includes(from),
      )
      assert(
        allowed.length > 0,
        `no status of [${(expected ?? statuses).join(', ')}] may move to ${to}`,
      )
      return allowed
    },
    assertMove(from, to, what) {
      assert(
        from === to || can(from, to),
        `${what}: ${from} → ${to} is not a transition of its state machine`,
      )
    },
  }
}
