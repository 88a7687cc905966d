import jsonLogic, { type RulesLogic } from 'json-logic-js'
import type { FieldIssue } from '../../platform/errors.ts'
import type { RiskFacts } from '../payments/index.ts'

// Rule conditions are JSON Logic (jsonlogic.com) evaluated by json-logic-js, over the facts
// of CONTRACT.md "Risk". A condition is checked once, when it is saved: every operator must
// be one of OPERATORS and every `var` one of FACTS, so a typo is a 400 at creation instead of
// a rule that silently never matches. Evaluation then only ever sees checked conditions.

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

/** Bounds a condition's size: nodes visited by the check (and so by each evaluation). */
const NODES_MAX = 500
const DEPTH_MAX = 20

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

/** The problems of a condition, each with its JSON path; empty when it may be saved. */
export function conditionIssues(condition: unknown): FieldIssue[] {
  const issues: FieldIssue[] = []
  let nodes = 0
  const visit = (node: unknown, path: string, depth: number): void => {
    nodes += 1
    if (nodes > NODES_MAX) {
      if (nodes === NODES_MAX + 1)
        issues.push({ field: 'condition', reason: `more than ${NODES_MAX} nodes` })
      return
    }
    if (depth > DEPTH_MAX) {
      issues.push({ field: path, reason: `nested deeper than ${DEPTH_MAX} levels` })
      return
    }
    if (Array.isArray(node)) {
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
      const name: unknown = Array.isArray(args) ? (args as unknown[])[0] : args
      if (typeof name !== 'string' || !FACT_SET.has(name)) {
        issues.push({
          field: `${path}.var`,
          reason: `unknown fact ${JSON.stringify(name)}; facts: ${FACTS.join(', ')}`,
        })
      }
      if (Array.isArray(args) && args.length > 2) {
        issues.push({ field: `${path}.var`, reason: 'takes a fact and an optional default' })
      }
      return
    }
    visit(args, `${path}.${op}`, depth + 1)
  }
  if (!isPlainObject(condition)) {
    return [{ field: 'condition', reason: 'must be a JSON Logic operation (an object)' }]
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
  try {
    return jsonLogic.truthy(jsonLogic.apply(condition as RulesLogic, facts))
  } catch {
    return false
  }
}
