import type { Deps, Tx } from '../../database.ts'
import { transact } from '../../platform/db/transaction.ts'
import type { RecordAnswer } from '../../platform/http/idempotent-answer.ts'
import { AppError, type FieldIssue } from '../../platform/errors.ts'
import { binInfo } from './bins.ts'
import { cardFacts, type CardFacts } from './bin-table.ts'
import { usableAccounts } from './pos-router.ts'
import * as repo from './pos.repository.ts'

// The merchant's routing table (CONTRACT "Routing"): rules of JSON Logic over the card facts,
// each naming POS accounts in order, and a default order. Conditions are checked when saved
// (operators and facts from fixed lists, bounded size), as the risk rules are.

export const ROUTING_FACTS = [
  'card.bin',
  'card.brand',
  'card.bank',
  'card.program',
  'card.funding',
  'installmentCount',
  'amount',
] as const
const FACT_SET: ReadonlySet<string> = new Set(ROUTING_FACTS)
const OPERATORS: ReadonlySet<string> = new Set([
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
  'in',
])
const NODES_MAX = 200
const DEPTH_MAX = 10
const RULES_MAX = 50
const IDS_MAX = 20

export interface Routing {
  rules: { condition: unknown; posAccountIds: string[] }[]
  default: string[]
  updatedAt: Date | null
}

function conditionIssues(condition: unknown, at: string): FieldIssue[] {
  const issues: FieldIssue[] = []
  let nodes = 0
  const visit = (node: unknown, path: string, depth: number): void => {
    if (++nodes > NODES_MAX) {
      if (nodes === NODES_MAX + 1)
        issues.push({ field: at, reason: `more than ${NODES_MAX} nodes` })
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
    if (typeof node !== 'object' || node === null) return
    const keys = Object.keys(node)
    const op = keys[0]
    if (keys.length !== 1 || op === undefined || !OPERATORS.has(op)) {
      issues.push({ field: path, reason: 'an operation is one known JSON Logic operator' })
      return
    }
    const args = (node as Record<string, unknown>)[op]
    if (op === 'var') {
      const name: unknown = Array.isArray(args) ? (args as unknown[])[0] : args
      if (typeof name !== 'string' || !FACT_SET.has(name)) {
        issues.push({ field: `${path}.var`, reason: `one of ${ROUTING_FACTS.join(', ')}` })
      }
      return
    }
    visit(args, `${path}.${op}`, depth + 1)
  }
  if (typeof condition !== 'object' || condition === null || Array.isArray(condition)) {
    return [{ field: at, reason: 'must be a JSON Logic operation (an object)' }]
  }
  visit(condition, at, 0)
  return issues
}

export async function getRouting(deps: Deps, merchantId: string): Promise<Routing> {
  const row = await repo.findRouting(deps.db, merchantId)
  if (!row) return { rules: [], default: [], updatedAt: null }
  return { rules: row.rules, default: row.default_order, updatedAt: row.updated_at }
}

export async function putRouting(
  deps: Deps,
  merchantId: string,
  input: { rules: { condition: unknown; posAccountIds: string[] }[]; default: string[] },
  record?: RecordAnswer<Tx, Routing>,
): Promise<Routing> {
  const visible = new Set((await repo.findPosAccounts(deps.db, merchantId)).map((a) => a.id))
  const issues: FieldIssue[] = []
  if (input.rules.length > RULES_MAX) {
    issues.push({ field: 'rules', reason: `at most ${RULES_MAX}` })
  }
  const checkIds = (ids: string[], field: string) => {
    if (ids.length > IDS_MAX) issues.push({ field, reason: `at most ${IDS_MAX}` })
    if (new Set(ids).size !== ids.length) issues.push({ field, reason: 'an account twice' })
    ids.forEach((id, i) => {
      if (!visible.has(id)) issues.push({ field: `${field}[${i}]`, reason: 'no such POS account' })
    })
  }
  input.rules.forEach((rule, i) => {
    issues.push(...conditionIssues(rule.condition, `rules[${i}].condition`))
    checkIds(rule.posAccountIds, `rules[${i}].posAccountIds`)
  })
  checkIds(input.default, 'default')
  const first = issues[0]
  if (first) throw new AppError('SVC-VAL-3001', 400, `${first.field}: ${first.reason}`, issues)
  // One statement, in a transaction for the recorded answer to commit with (decision 0035).
  return transact(deps.db, async (tx) => {
    const row = await repo.upsertRouting(tx, {
      merchant_id: merchantId,
      rules: JSON.stringify(input.rules),
      default_order: JSON.stringify(input.default),
      updated_at: deps.clock.now(),
    })
    const routing = { rules: row.rules, default: row.default_order, updatedAt: row.updated_at }
    await record?.(tx, routing)
    return routing
  })
}

export function lookupBin(bin: string): CardFacts {
  return cardFacts(bin)
}

export interface InstallmentOption {
  installmentCount: number
  /** What the buyer pays in all (kuruş); Kuruş charges no installment interest to buyers. */
  totalAmount: number
  /** The first installment carries the remainder of an uneven division. */
  installmentAmount: number
}

/** The counts the merchant can offer for this card: those a usable POS can take. */
export async function installmentOptions(
  deps: Deps,
  merchantId: string,
  bin: string,
  amount: number,
): Promise<{ bin: string; program: string; options: InstallmentOption[] }> {
  const facts = cardFacts(bin)
  const accounts = await usableAccounts(deps, merchantId)
  let counts: number[]
  if (accounts.length === 0 && deps.config.env === 'demo') {
    counts = binInfo(bin).installments // the sandbox bank's own table, as before
  } else {
    const program = facts.program
    const offered =
      program !== 'none' && accounts.some((a) => a.installment_programs.includes(program))
    counts = offered ? Array.from({ length: 12 }, (_, i) => i + 1) : [1]
  }
  return {
    bin,
    program: facts.program,
    options: counts.map((n) => ({
      installmentCount: n,
      totalAmount: amount,
      installmentAmount: Math.floor(amount / n) + (amount % n),
    })),
  }
}
