import jsonLogic, { type RulesLogic } from 'json-logic-js'
import type { FieldIssue } from '../../platform/errors.ts'
import type { RiskFacts } from '../payments/index.ts'

// Rule conditions are JSON Logic (jsonlogic.com) evaluated by json-logic-js, over the facts
// of CONTRACT.md "Risk". A condition is checked when it is saved: every operator must be one
// of OPERATORS and every `var` one of FACTS, so a typo is a 400 at creation instead of a rule
// that silently never matches; and checked again before it is evaluated.

export const FACTS = [
  'amount',
  'installmentCount',
  'card.brand',
  'card.bin',
  'card.binCountry',
  'card.funding',
  'card.fingerprint',
  'customer.id',
  'customer.email',
  'ip',
  'velocity.cardAttempts1h',
  'velocity.cardDeclines24h',
  'velocity.ipAttempts1h',
  'velocity.customerAmount24h',
] as const

const FACT_SET: ReadonlySet<string> = new Set(FACTS)

/** Logic, comparison, arithmetic and membership: nothing that reaches outside the facts. */
export const OPERATORS = [
  'var',
  '==',
  '===',
  '!=',
  '!==',
  '>',
  '>=',
  '<',
  '<=',
  '!',
  '!!',
  'and',
  'or',
  'if',
  '?:',
  'in',
  '+',
  '-',
  '*',
  '/',
  '%',
  'min',
  'max',
] as const

const OPERATOR_SET: ReadonlySet<string> = new Set(OPERATORS)

// Bounds of a condition, checked at creation (400 naming the problem) and again before every
// evaluation (a rule stored before a bound existed is never run past it). They are the
// evaluation's operation budget: every allowed operator runs in time linear in its arguments
// (no operator loops: no map, filter, reduce, all, some, none, merge, cat, substr, log), so an
// evaluation does at most about NODES_MAX operations on strings of at most STRING_MAX
// characters, and no rule can hold the event loop (decision 0036).
export const NODES_MAX = 500
export const DEPTH_MAX = 20
export const ARRAY_MAX = 100
export const STRING_MAX = 256
/** The condition's JSON text, in characters. */
export const CONDITION_CHARS_MAX = 16_384

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

/** The problems of a condition, each with its JSON path; empty when it may be saved. */
export function conditionIssues(condition: unknown): FieldIssue[] {
  if (!isPlainObject(condition)) {
    return [{ field: 'condition', reason: 'must be a JSON Logic operation (an object)' }]
  }
  const issues: FieldIssue[] = []
  let nodes = 0
  // Every argument of every operator is visited, `var`'s default included: json-logic
  // evaluates a default like any other argument, so it is an operation like any other.
  const visit = (node: unknown, path: string, depth: number): void => {
    if (issues.length >= 10) return
    nodes += 1
    if (nodes > NODES_MAX) {
      if (nodes === NODES_MAX + 1) {
        issues.push({ field: 'condition', reason: `more than ${NODES_MAX} nodes` })
      }
      return
    }
    if (depth > DEPTH_MAX) {
      issues.push({ field: path, reason: `nested deeper than ${DEPTH_MAX} levels` })
      return
    }
    if (typeof node === 'string' && node.length > STRING_MAX) {
      issues.push({ field: path, reason: `a string longer than ${STRING_MAX} characters` })
      return
    }
    if (Array.isArray(node)) {
      if (node.length > ARRAY_MAX) {
        issues.push({ field: path, reason: `an array of more than ${ARRAY_MAX} items` })
        return
      }
      node.forEach((item, i) => visit(item, `${path}[${i}]`, depth + 1))
      return
    }
    if (!isPlainObject(node)) return // a literal: string, number, boolean or null
    const keys = Object.keys(node)
    if (keys.length !== 1) {
      issues.push({ field: path, reason: 'an operation is an object with exactly one operator' })
      return
    }
    const op = keys[0] as string
    if (!OPERATOR_SET.has(op)) {
      issues.push({ field: path, reason: `unknown operator ${JSON.stringify(op)}` })
      return
    }
    const args = node[op]
    if (op === 'var') {
      const list = Array.isArray(args) ? (args as unknown[]) : [args]
      const name = list[0]
      if (typeof name !== 'string' || !FACT_SET.has(name)) {
        issues.push({
          field: `${path}.var`,
          reason: `unknown fact ${JSON.stringify(name)}; facts: ${FACTS.join(', ')}`,
        })
      }
      if (list.length > 2) {
        issues.push({ field: `${path}.var`, reason: 'takes a fact and an optional default' })
      }
      if (list.length === 2) visit(list[1], `${path}.var[1]`, depth + 1)
      return
    }
    visit(args, `${path}.${op}`, depth + 1)
  }
  const chars = JSON.stringify(condition).length
  if (chars > CONDITION_CHARS_MAX) {
    return [{ field: 'condition', reason: `longer than ${CONDITION_CHARS_MAX} characters as JSON` }]
  }
  visit(condition, 'condition', 0)
  return issues
}

/**
 * Whether a checked condition holds for these facts (JSON Logic truthiness). An operation
 * that cannot run on these facts (`in` over a null email) does not match: json-logic-js
 * throws there, and a rule must never fail a charge by failing itself.
 */
export function conditionMatches(condition: unknown, facts: RiskFacts): boolean {
  // Only a condition within the allow-list and the bounds is ever run, whenever it was stored.
  if (conditionIssues(condition).length > 0) return false
  try {
    return jsonLogic.truthy(jsonLogic.apply(condition as RulesLogic, facts))
  } catch {
    return false
  }
}
