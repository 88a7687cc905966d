import { isIP } from 'node:net'
import type { Deps, Tx } from '../../database.ts'
import { assert } from '../../platform/assert.ts'
import { byCreatedAt, keysetCursor } from '../../platform/cursor.ts'
import { transact } from '../../platform/db/transaction.ts'
import { AppError, validationError } from '../../platform/errors.ts'
import { isUniqueViolation } from '../../platform/db/transaction.ts'
import type { RecordAnswer } from '../../platform/http/idempotent-answer.ts'
import { newId } from '../../platform/ids.ts'
import {
  riskFactsSince,
  type RiskDecision,
  type RiskScreen,
  type ScreenFacts,
} from '../payments/index.ts'
import { conditionIssues, conditionMatches } from './risk.conditions.ts'
import { riskError } from './risk.errors.ts'
import * as repo from './risk.repository.ts'
import { scoreOf, scoreSignals } from './risk.score.ts'
import type { ListItemRow, RiskAction, RiskListName, RuleRow } from './risk.table.ts'

// Block lists, rules, the decision of a charge and backtests (CONTRACT.md "Risk: rules,
// lists, reviews"; docs/risk.md). Reviews are reviews.service.ts.

export const RULES_MAX = 100
export const LIST_LIMIT_MAX = 100
/** The backtest reads at most this many payments of the 30 days (newest first). */
export const BACKTEST_PAYMENTS_MAX = 50_000
const BACKTEST_DAYS = 30
const SAMPLE_MAX = 10
/** Payments evaluated between two yields to the event loop. */
const BACKTEST_SLICE = 500

const LIST_CURSOR = keysetCursor('risk_list_items', 'kurus/risk/list-items')

export interface ListItem {
  id: string
  list: RiskListName
  value: string
  note: string | null
  createdAt: Date
}

export interface Rule {
  id: string
  name: string
  action: RiskAction
  condition: unknown
  enabled: boolean
  createdAt: Date
  updatedAt: Date
}

function itemRowToItem(r: ListItemRow): ListItem {
  return { id: r.id, list: r.list, value: r.value, note: r.note, createdAt: r.created_at }
}

function ruleRowToRule(r: RuleRow): Rule {
  return {
    id: r.id,
    name: r.name,
    action: r.action,
    condition: r.condition,
    enabled: r.enabled,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  }
}

// ---------------------------------------------------------------- lists

export const LIST_NAMES: readonly RiskListName[] = [
  'card_fingerprint',
  'email',
  'ip',
  'bin',
  'customer_id',
]

/** The list a path names, or 404. */
export function listNamed(name: string): RiskListName {
  const list = LIST_NAMES.find((l) => l === name)
  if (!list) throw riskError('list_not_found')
  return list
}

/** A list value in the form the charge's facts are compared in, or a 400. */
export function normaliseListValue(list: RiskListName, raw: string): string {
  const value = raw.trim()
  const bad = (reason: string) => validationError('value', reason)
  switch (list) {
    case 'card_fingerprint':
      if (!/^[A-Za-z0-9_-]{43}$/.test(value)) throw bad('must be a card.fingerprint')
      return value
    case 'email':
      if (!/^[^\s@]+@[^\s@]+$/.test(value) || value.length > 254)
        throw bad('must be an email address')
      return value.toLowerCase()
    case 'ip':
      if (isIP(value) === 0) throw bad('must be an IPv4 or IPv6 address')
      return value.toLowerCase()
    case 'bin':
      if (!/^\d{6}$/.test(value)) throw bad('must be the card number’s first 6 digits')
      return value
    case 'customer_id':
      if (!/^cus_[0-9a-z]{1,60}$/.test(value)) throw bad('must be a customer id (cus_…)')
      return value
  }
}

export async function addListItem(
  deps: Deps,
  merchantId: string,
  list: RiskListName,
  input: { value: string; note?: string | undefined },
  record?: RecordAnswer<Tx, ListItem>,
): Promise<ListItem> {
  const value = normaliseListValue(list, input.value)
  try {
    return await transact(deps.db, async (tx) => {
      const row = await repo.insertListItem(tx, {
        id: newId('rli'),
        merchant_id: merchantId,
        list,
        value,
        note: input.note ?? null,
        created_at: deps.clock.now(),
      })
      const item = itemRowToItem(row)
      await record?.(tx, item)
      return item
    })
  } catch (error) {
    if (isUniqueViolation(error)) throw riskError('list_item_exists')
    throw error
  }
}

export async function listListItems(
  deps: Deps,
  merchantId: string,
  list: RiskListName,
  q: { limit: number; cursor?: string | undefined },
): Promise<{ items: ListItem[]; nextCursor: string | null }> {
  assert(Number.isInteger(q.limit) && q.limit >= 1 && q.limit <= LIST_LIMIT_MAX, 'limit')
  return LIST_CURSOR.page(deps.config.masterKey, merchantId, q, {
    fetch: (before, limit) => repo.findListPage(deps.db, merchantId, list, before, limit),
    view: (rows) => rows.map(itemRowToItem),
    position: byCreatedAt,
  })
}

export async function removeListItem(
  deps: Deps,
  merchantId: string,
  list: RiskListName,
  id: string,
  record?: RecordAnswer<Tx, null>,
): Promise<void> {
  // A transaction of its own, for the door's audit entry (decision 0036) and the request's
  // recorded answer (decision 0035) to commit in.
  await transact(deps.db, async (tx) => {
    if (!(await repo.deleteListItem(tx, merchantId, list, id))) {
      throw riskError('list_item_not_found')
    }
    await record?.(tx, null)
  })
}

// ---------------------------------------------------------------- rules

function checkCondition(condition: unknown): void {
  const issues = conditionIssues(condition)
  const first = issues[0]
  if (first) throw new AppError('SVC-VAL-3001', 400, `${first.field}: ${first.reason}`, issues)
}

export async function createRule(
  deps: Deps,
  merchantId: string,
  input: { name: string; action: RiskAction; condition: unknown; enabled?: boolean | undefined },
  record?: RecordAnswer<Tx, Rule>,
): Promise<Rule> {
  checkCondition(input.condition)
  const now = deps.clock.now()
  return transact(deps.db, async (tx) => {
    // The merchant's rules locked, so concurrent creates count one after another.
    await repo.lockMerchantRules(tx, merchantId)
    if ((await repo.countRules(tx, merchantId)) >= RULES_MAX) throw riskError('too_many_rules')
    const row = await repo.insertRule(tx, {
      id: newId('rule'),
      merchant_id: merchantId,
      name: input.name,
      action: input.action,
      condition: JSON.stringify(input.condition),
      enabled: input.enabled ?? true,
      created_at: now,
      updated_at: now,
    })
    const rule = ruleRowToRule(row)
    await record?.(tx, rule)
    return rule
  })
}

export async function listRules(deps: Deps, merchantId: string): Promise<Rule[]> {
  return (await repo.findRules(deps.db, merchantId)).map(ruleRowToRule)
}

export async function getRule(deps: Deps, merchantId: string, id: string): Promise<Rule> {
  const row = await repo.findRuleById(deps.db, merchantId, id)
  if (!row) throw riskError('rule_not_found')
  return ruleRowToRule(row)
}

export async function updateRule(
  deps: Deps,
  merchantId: string,
  id: string,
  input: { name?: string | undefined; enabled?: boolean | undefined; condition?: unknown },
  record?: RecordAnswer<Tx, Rule>,
): Promise<Rule> {
  if (input.condition !== undefined) checkCondition(input.condition)
  // A transaction of its own, for the door's audit entry (decision 0036) and the request's
  // recorded answer (decision 0035) to commit in.
  return transact(deps.db, async (tx) => {
    const row = await repo.updateRule(tx, merchantId, id, {
      ...(input.name === undefined ? {} : { name: input.name }),
      ...(input.enabled === undefined ? {} : { enabled: input.enabled }),
      ...(input.condition === undefined ? {} : { condition: JSON.stringify(input.condition) }),
      updated_at: deps.clock.now(),
    })
    if (!row) throw riskError('rule_not_found')
    const rule = ruleRowToRule(row)
    await record?.(tx, rule)
    return rule
  })
}

export async function deleteRule(
  deps: Deps,
  merchantId: string,
  id: string,
  record?: RecordAnswer<Tx, null>,
): Promise<void> {
  await transact(deps.db, async (tx) => {
    if (!(await repo.deleteRule(tx, merchantId, id))) throw riskError('rule_not_found')
    await record?.(tx, null)
  })
}

// ---------------------------------------------------------------- the decision

const ORDER: Record<RiskDecision, number> = { allow: 0, review: 1, require_3ds: 2, block: 3 }

function listProbes(f: ScreenFacts): { list: RiskListName; value: string }[] {
  const probes: { list: RiskListName; value: string }[] = []
  if (f.card.fingerprint) probes.push({ list: 'card_fingerprint', value: f.card.fingerprint })
  if (f.customer.email) probes.push({ list: 'email', value: f.customer.email.toLowerCase() })
  if (f.ip) probes.push({ list: 'ip', value: f.ip.toLowerCase() })
  if (f.card.bin) probes.push({ list: 'bin', value: f.card.bin.slice(0, 6) })
  if (f.customer.id) probes.push({ list: 'customer_id', value: f.customer.id })
  return probes
}

/**
 * The screen of one charge (the risk port's `screen`): its columns join the statement that
 * counts the charge's velocity, and `decide` reads them. Block lists first, then every enabled
 * rule; the strongest action wins (block > require_3ds > review > allow). Reasons name the
 * lists, the rules and the score's signals.
 */
export function screenCharge(merchantId: string, screened: ScreenFacts): RiskScreen {
  return {
    columns: (eb) => repo.chargeScreenColumns(eb, merchantId, listProbes(screened)),
    decide(facts, read) {
      // The row holds the columns above (ChargeScreenRow), read with the velocity counts.
      const { risk_listed: listed, risk_rules: rules } = read as unknown as repo.ChargeScreenRow
      let decision: RiskDecision = listed.length > 0 ? 'block' : 'allow'
      const reasons = [...new Set(listed.map((l) => l.list))].sort().map((l) => `list:${l}`)
      const ruleIds: string[] = []
      for (const rule of rules) {
        if (!conditionMatches(rule.condition, facts)) continue
        ruleIds.push(rule.id)
        reasons.push(`rule:${rule.id}:${rule.action}`)
        if (ORDER[rule.action] > ORDER[decision]) decision = rule.action
      }
      const signals = scoreSignals(facts)
      reasons.push(...signals.map((s) => `signal:${s.name}:${s.points}`))
      return { decision, score: scoreOf(signals), reasons, ruleIds }
    },
  }
}

// ---------------------------------------------------------------- backtest

export interface Backtest {
  evaluated: number
  matched: number
  matchedAmount: number
  samplePaymentIds: string[]
}

/** A condition replayed over the facts stored with the last 30 days' card payments. */
export async function backtestRule(
  deps: Deps,
  merchantId: string,
  condition: unknown,
): Promise<Backtest> {
  checkCondition(condition)
  const from = new Date(deps.clock.now().getTime() - BACKTEST_DAYS * 86_400_000)
  const rows = await riskFactsSince(deps, merchantId, from, BACKTEST_PAYMENTS_MAX)
  const out: Backtest = {
    evaluated: rows.length,
    matched: 0,
    matchedAmount: 0,
    samplePaymentIds: [],
  }
  for (const [i, r] of rows.entries()) {
    // In slices: other requests run between them, however many payments there are.
    if (i > 0 && i % BACKTEST_SLICE === 0) await new Promise((resolve) => setImmediate(resolve))
    if (!conditionMatches(condition, r.facts)) continue
    out.matched += 1
    out.matchedAmount += r.amount
    if (out.samplePaymentIds.length < SAMPLE_MAX) out.samplePaymentIds.push(r.paymentId)
  }
  return out
}
